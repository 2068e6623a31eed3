//===- Planner.cpp - Degrees, stages, schedule, recomputation, ZeRO -------===//
//
// The search: for every split of the devices into pipeline x data x tensor
// parallel and every micro-batch size, the intra-op integer program gives
// each op's tensor-parallel split (solved once per tensor-parallel degree
// and micro-batch size, at a few prices of memory, so that memory-hungry
// and memory-lean splits are both on offer); then, per schedule,
// recomputation and ZeRO stage, the pipeline stages are the contiguous
// segment ranges that minimize the slowest stage's time with every stage
// in memory (StagePartition.h, exact), skipped when a lower bound on the
// step time cannot beat the best plan so far. The fastest plan that fits
// wins.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Planning/Planner.h"
#include "dpc/Analysis/CostModel/CommunicationCost.h"
#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "dpc/Transforms/Planning/ShardingSpace.h"
#include "dpc/Transforms/Planning/StagePartition.h"
#include "dpc/Interfaces/CostOpInterface.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::dpc;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

SmallVector<int64_t> getDivisors(int64_t n) {
  SmallVector<int64_t> divisors;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0)
      divisors.push_back(i);
  return divisors;
}

/// One way to run the stages, and what it needs.
struct PipelineVariant {
  PipelineSchedule schedule;
  int64_t chunks;
  Recomputation recompute;
  int zeroStage;
  GradientCompression compression;
};

/// The outcome of fitting one configuration into stages.
struct StageFit {
  bool feasible = false;
  SmallVector<StagePlan> stages;
  double stepTime = 0.0, bubbleTime = 0.0, sendTime = 0.0, optimizerTime = 0.0,
         skewTime = 0.0;
  /// Of the most loaded stage, when infeasible: its memory and index.
  double peakMemory = 0.0;
  MemoryBreakdown peakBreakdown;
  unsigned peakStage = 0;
};

class Search {
public:
  Search(const TrainingGraph &graph, const LayerSegmentation &segmentation,
         const PlannerOptions &options)
      : graph(graph), segmentation(segmentation), options(options),
        cluster(options.cluster) {
    memoryLimit = options.memoryLimit > 0 ? options.memoryLimit
                                          : cluster.device.memoryCapacity;
    // The backward pass of each op costs what the IR's backward pass costs
    // relative to its forward, in FLOPs (about 2: a data and a weight
    // gradient per contraction).
    double forward = 0.0, backward = 0.0;
    for (Operation *op : graph.getForwardOps())
      if (auto costed = dyn_cast<CostOpInterface>(op))
        forward += costed.getFlops();
    for (Operation *op : graph.getBackwardOps())
      if (auto costed = dyn_cast<CostOpInterface>(op))
        backward += costed.getFlops();
    // @forward_backward runs once per micro-batch of the step.
    modelFlops = 3 * forward * graph.getStepMicroBatches();
    backwardFactor = forward > 0 ? 1.0 + backward / forward : 3.0;
    modelStateBytes = {graph.getParameterBytes(), graph.getGradientBytes(),
                       graph.getOptimizerBytes(), graph.getComputeCopyBytes(),
                       graph.getCopiedMasterBytes()};
    // Recomputation checkpoints each layer's input (Megatron-LM's full
    // recomputation): a repeated layer of several segments keeps only the
    // output of its last.
    checkpointed = segmentation.getCheckpointedSegments();
  }

  FailureOr<Plan> run(std::string &error);

private:
  /// The integer program's choices for (tp, dp, micro-batch size).
  ArrayRef<SmallVector<unsigned>> getChoices(const ShardingSpace &space,
                                             int64_t tp, int64_t dp,
                                             int64_t microBatch,
                                             std::string &error,
                                             bool &solverFailed);
  /// Cuts `segments` (priced by getSegmentPlans for `variant`) into the
  /// mesh's stages.
  StageFit fit(ArrayRef<ShardingSpace::SegmentCost> costs,
               ArrayRef<SegmentPlan> segments, const StageMesh &mesh,
               int64_t microBatches, const PipelineVariant &variant,
               bool ignoreMemory) const;
  struct GradientReduction {
    double time = 0.0;
    CommunicationVolume sent;
  };
  /// Gradient elements per device also partial over the tensor axis (of
  /// weights read where it splits a factor they lack: the batch, a layer
  /// norm's sequence); `gathered` of them of weights the axis splits.
  struct PartialGradients {
    double elements = 0.0, gathered = 0.0;
    PartialGradients scaled(double fraction) const {
      return {elements * fraction, gathered * fraction};
    }
  };
  /// How a step of `microBatches` reduces its gradients over the data
  /// axis: in bytes per element, `reductions` times a step, as one
  /// all-reduce (ZeRO-0) or a reduce-scatter, then under ZeRO-1/2 the
  /// updated shards gathered in `gatherBytes` per element.
  struct DataReduction {
    double elementBytes = 0.0, gatherBytes = 0.0, reductions = 1.0;
    bool allReduce = true;
  };
  DataReduction getDataReduction(const StageMesh &mesh, int zeroStage,
                                 int64_t microBatches) const;
  /// Bytes of top-k residuals a device keeps for `elements` gradient
  /// elements: one per element of each all-reduce that top-k compresses.
  double getCompressionStateBytes(double elements, const StageMesh &mesh,
                                  const PipelineVariant &variant,
                                  int64_t microBatches) const;
  /// Bytes of buffers compressing the reductions of `elements` gradient
  /// elements adds to the end of the backward pass: the sums received,
  /// made anew in the gradients' type beside the buckets sent (of 16-bit
  /// copies, or scattered from top-k's gathered entries), and top-k's
  /// corrected sum of the bucket being coded.
  double getCompressionBufferBytes(double elements, const StageMesh &mesh,
                                   const PipelineVariant &variant,
                                   int64_t microBatches) const;
  /// The reduction of `elements` gradient elements per device in a step of
  /// `microBatches`, `partial` of them partial over the tensor axis too.
  GradientReduction getGradientReduction(double elements,
                                         PartialGradients partial,
                                         const StageMesh &mesh,
                                         const PipelineVariant &variant,
                                         int64_t microBatches) const;
  /// The part of a stage's gradient reduction (`syncTime`, of `elements`
  /// gradient elements, `partial` of them partial over the tensor axis)
  /// and ZeRO-3's parameter gathers (`gatherTime`) that the program built
  /// leaves exposed, after micro-batches of `computeTime` each: what the
  /// schedule overlaps with compute hides as far as the cluster's
  /// `efficiency.overlap` lets it.
  double getExposedGradientSync(double syncTime, double gatherTime,
                                double elements, PartialGradients partial,
                                double computeTime, int64_t microBatches,
                                const StageMesh &mesh,
                                const PipelineVariant &variant) const;
  /// Bytes each device of a stage holding `chunks` sends per step in its
  /// layout changes and pipeline messages (the gradient reduction aside).
  CommunicationVolume getSentBytes(ArrayRef<ShardingSpace::SegmentCost> costs,
                                   ArrayRef<SegmentRange> chunks,
                                   int64_t microBatches,
                                   const PipelineVariant &variant) const;
  /// Whether ZeRO-1/2 keep blocks of the masters of compute copies in a
  /// step of `microBatches`: where the program gathers the copies once, in
  /// a step of one micro-batch or on pipeline stages (which inline their
  /// micro-batches and make the copy once for all of them).
  static bool shardsCopiedMasters(const StageMesh &mesh, int64_t microBatches) {
    return microBatches == 1 || mesh.getStages() > 1;
  }
  /// The model state of `elements` parameter elements on one device, in
  /// a step of `microBatches` (the program shards the masters of compute
  /// copies under ZeRO-1/2 where it gathers the copies once).
  MemoryBreakdown getModelState(double elements, const StageMesh &mesh,
                                const PipelineVariant &variant,
                                int64_t microBatches) const {
    MemoryBreakdown state = getModelStateMemory(
        elements, modelStateBytes, variant.zeroStage, mesh.getDataParallel(),
        shardsCopiedMasters(mesh, microBatches));
    state.optimizerState +=
        getCompressionStateBytes(elements, mesh, variant, microBatches);
    return state;
  }
  /// A step time no split of `segments` into stages can beat: the
  /// pipeline of a slowest stage that takes at least its share of the work
  /// and its longest segment, without sends or the optimizer.
  double getStepTimeLowerBound(ArrayRef<SegmentPlan> segments,
                               const StageMesh &mesh, int64_t microBatches,
                               const PipelineVariant &variant) const;
  /// What each segment costs a device under `variant`, in a step of
  /// `microBatches`.
  SmallVector<SegmentPlan>
  getSegmentPlans(ArrayRef<ShardingSpace::SegmentCost> costs,
                  const StageMesh &mesh, int64_t microBatches,
                  const PipelineVariant &variant) const;

  const TrainingGraph &graph;
  const LayerSegmentation &segmentation;
  const PlannerOptions &options;
  const Cluster &cluster;
  double memoryLimit = 0.0;
  double backwardFactor = 3.0;
  double modelFlops = 0.0;
  ModelStateBytes modelStateBytes;
  /// Per segment: whether recomputation keeps its output (a layer's end).
  SmallVector<bool> checkpointed;
  bool dataAxisMatters = false;
  std::map<std::tuple<int64_t, int64_t, int64_t, bool>,
           SmallVector<SmallVector<unsigned>>>
      choiceCache;
  int64_t integerPrograms = 0;
  bool allOptimal = true;
  /// The op or argument a failure is about, when it is one's.
  std::optional<Location> errorLocation;

public:
  std::optional<Location> getErrorLocation() const { return errorLocation; }
};
} // namespace

/// Whether the two meshes place every group alike (their costs are).
static bool isSamePlacement(const StageMesh &a, const StageMesh &b) {
  auto same = [](const GroupPlacement &x, const GroupPlacement &y) {
    return x.size == y.size && x.nodes == y.nodes &&
           x.devicesPerNode == y.devicesPerNode;
  };
  return same(a.getGroup(kDataAxis), b.getGroup(kDataAxis)) &&
         same(a.getGroup(kTensorAxis), b.getGroup(kTensorAxis));
}

ArrayRef<SmallVector<unsigned>>
Search::getChoices(const ShardingSpace &space, int64_t tp, int64_t dp,
                   int64_t microBatch, std::string &error,
                   bool &solverFailed) {
  // The tensor axis's placement prices the strategies' layout changes.
  auto key = std::make_tuple(tp, dataAxisMatters ? dp : 0, microBatch,
                             space.getMesh().isDataInner());
  auto it = choiceCache.find(key);
  if (it != choiceCache.end())
    return it->second;
  SmallVector<SmallVector<unsigned>> &choices = choiceCache[key];
  const ShardingProblem &problem = space.getProblem();
  // Without a tensor axis every node has one strategy.
  if (tp == 1) {
    choices.push_back(SmallVector<unsigned>(problem.nodes.size(), 0));
    return choices;
  }
  FailureOr<ShardingSolution> fastest =
      solveWithIlp(problem, {}, options.ilpTimeLimit, error);
  ++integerPrograms;
  if (failed(fastest)) {
    solverFailed = true;
    return choices;
  }
  allOptimal &= fastest->optimal;
  choices.push_back(fastest->choice);
  // Memory priced so that it weighs k times the fastest choice's time.
  double time = problem.getTime(fastest->choice);
  StrategyMemory memory = problem.getMemory(fastest->choice);
  for (double k : {0.3, 3.0, 30.0}) {
    MemoryPrices prices;
    if (memory.modelState > 0)
      prices.modelState = k * time / memory.modelState;
    if (memory.activations > 0)
      prices.activations = k * time / memory.activations;
    FailureOr<ShardingSolution> lean =
        solveWithIlp(problem, prices, options.ilpTimeLimit, error);
    ++integerPrograms;
    if (failed(lean)) {
      solverFailed = true;
      return choices;
    }
    allOptimal &= lean->optimal;
    if (!llvm::is_contained(choices, lean->choice))
      choices.push_back(lean->choice);
  }
  return choices;
}

double Search::getStepTimeLowerBound(ArrayRef<SegmentPlan> segments,
                                     const StageMesh &mesh,
                                     int64_t microBatches,
                                     const PipelineVariant &variant) const {
  double total = 0.0, longest = 0.0;
  for (const SegmentPlan &segment : segments) {
    double time = segment.computeTime + segment.communicationTime;
    total += time;
    longest = std::max(longest, time);
  }
  int64_t p = mesh.getStages();
  double slowest = std::max(longest, total / p);
  return getPipelineTime(variant.schedule, p, microBatches, slowest, 0.0,
                         variant.chunks);
}

SmallVector<SegmentPlan>
Search::getSegmentPlans(ArrayRef<ShardingSpace::SegmentCost> costs,
                        const StageMesh &mesh, int64_t microBatches,
                        const PipelineVariant &variant) const {
  // Recomputing layers runs the forward once more, and its collectives;
  // recomputing attention, the ops of its core once more.
  bool layers = variant.recompute == Recomputation::Layers;
  double computeFactor = layers ? (backwardFactor + 1.0) / backwardFactor : 1.0;
  double communicationFactor = layers ? 1.5 : 1.0;
  SmallVector<SegmentPlan> segments;
  for (auto [i, cost] : llvm::enumerate(costs)) {
    SegmentPlan segment;
    segment.computeTime = cost.computeTime * computeFactor;
    segment.communicationTime = cost.communicationTime * communicationFactor;
    segment.modelStateBytes =
        getModelState(cost.parameterElements, mesh, variant, microBatches)
            .getModelState();
    segment.activationBytes = cost.activationBytes;
    if (layers)
      segment.activationBytes = checkpointed[i] ? cost.outputBytes : 0.0;
    if (variant.recompute == Recomputation::Attention) {
      segment.computeTime += cost.attentionRerunTime;
      segment.activationBytes -= cost.attentionCoreBytes;
    }
    segments.push_back(segment);
  }
  return segments;
}

CommunicationVolume
Search::getSentBytes(ArrayRef<ShardingSpace::SegmentCost> costs,
                     ArrayRef<SegmentRange> chunks, int64_t microBatches,
                     const PipelineVariant &variant) const {
  // Recomputing layers runs the forward's layout changes once more.
  double factor = variant.recompute == Recomputation::Layers ? 1.5 : 1.0;
  CommunicationVolume sent;
  for (SegmentRange range : chunks) {
    for (unsigned i = range.first; i < range.end; ++i) {
      sent.tensorAxis += microBatches * factor * costs[i].sent.tensorAxis;
      sent.dataAxis += microBatches * factor * costs[i].sent.dataAxis;
    }
    // The chunk's output forward, the gradient of its input back.
    if (range.end < costs.size())
      sent.stageAxis += microBatches * costs[range.end - 1].outputBytes;
    if (range.first > 0)
      sent.stageAxis += microBatches * costs[range.first - 1].outputBytes;
  }
  return sent;
}

Search::DataReduction Search::getDataReduction(const StageMesh &mesh,
                                               int zeroStage,
                                               int64_t microBatches) const {
  // Over several micro-batches ZeRO-0/1 accumulate each gradient in its
  // master's precision with the sum still pending and reduce it once, in
  // that precision (Megatron-LM does the same in bf16); ZeRO-2/3
  // reduce-scatter each micro-batch's as it is made. ZeRO-1/2 then gather
  // the updated shards: of the compute copies where the step shards their
  // masters, else of the masters. ZeRO-3 only reduce-scatters: its
  // updated shards stay where they are, gathered where the passes read
  // them (charged with them).
  double wireBytes = graph.getGradientCommunicationBytes();
  bool accumulated = microBatches > 1 && zeroStage <= 1;
  DataReduction reduction;
  reduction.elementBytes = accumulated ? graph.getGradientBytes() : wireBytes;
  reduction.reductions = microBatches > 1 && zeroStage >= 2 ? microBatches : 1;
  reduction.gatherBytes = shardsCopiedMasters(mesh, microBatches)
                              ? wireBytes
                              : graph.getParameterBytes();
  reduction.allReduce = zeroStage == 0;
  return reduction;
}

double Search::getCompressionStateBytes(double elements, const StageMesh &mesh,
                                        const PipelineVariant &variant,
                                        int64_t microBatches) const {
  DataReduction reduction =
      getDataReduction(mesh, variant.zeroStage, microBatches);
  // -dpc-compress-gradients selects the all-reduces of 32-bit floats.
  if (!variant.compression.isTopK() || mesh.getDataParallel() < 2 ||
      !reduction.allReduce || reduction.elementBytes < 4.0)
    return 0.0;
  return elements * reduction.elementBytes;
}

double Search::getCompressionBufferBytes(double elements, const StageMesh &mesh,
                                         const PipelineVariant &variant,
                                         int64_t microBatches) const {
  const GradientCompression &compression = variant.compression;
  int64_t d = mesh.getDataParallel();
  if (compression.isNone() || d < 2)
    return 0.0;
  DataReduction reduction =
      getDataReduction(mesh, variant.zeroStage, microBatches);
  double received = elements * reduction.elementBytes;
  if (compression.isTopK()) {
    if (getCompressionStateBytes(elements, mesh, variant, microBatches) == 0)
      return 0.0;
    // The dense sums, and the corrected sum of the bucket being coded.
    return received + std::min(options.bucketCapBytes, received);
  }
  if (reduction.elementBytes <= 2.0)
    return 0.0;
  // A reduce-scatter receives the rank's shard.
  return received / (reduction.allReduce ? 1.0 : d);
}

Search::GradientReduction Search::getGradientReduction(
    double elements, PartialGradients partial, const StageMesh &mesh,
    const PipelineVariant &variant, int64_t microBatches) const {
  int zeroStage = variant.zeroStage;
  int64_t d = mesh.getDataParallel(), t = mesh.getTensorParallel();
  DataReduction over = getDataReduction(mesh, zeroStage, microBatches);
  double reduceBytes = over.elementBytes, reductions = over.reductions;
  GradientReduction reduction;
  auto add = [&](CollectiveKind kind, double bytes, const GroupPlacement &group,
                 int64_t ranks, double &sent, double times = 1.0) {
    reduction.time +=
        times * getBestCollective(kind, bytes, group, cluster).time;
    sent += times * dpc::getSentBytes(kind, bytes, ranks);
  };
  // A sum of `elements` over a group that includes the data axis, as
  // --grad-compression sends it: 16-bit casts around it, or an all-reduce's
  // top entries all-gathered as values and indices; the encoding's passes
  // over memory on the path to the collective.
  const GradientCompression &compression = variant.compression;
  auto reduceOverData = [&](CollectiveKind kind, double elements,
                            const GroupPlacement &group, int64_t ranks,
                            double &sent, double times = 1.0) {
    bool topK = compression.isTopK() && kind == CollectiveKind::AllReduce &&
                reduceBytes >= 4.0;
    if (elements <= 0.0 || d < 2 || (compression.isTopK() && !topK)) {
      add(kind, elements * reduceBytes, group, ranks, sent, times);
      return;
    }
    reduction.time +=
        times * elements * compression.getCodingBytesPerElement(reduceBytes) /
        (cluster.device.memoryBandwidth * cluster.efficiency.memory);
    if (!topK) {
      add(kind, elements * compression.getReducedElementBytes(reduceBytes),
          group, ranks, sent, times);
      return;
    }
    double entries = compression.getTopKEntries(elements);
    add(CollectiveKind::AllGather, ranks * entries * reduceBytes, group, ranks,
        sent, times);
    add(CollectiveKind::AllGather, ranks * entries * 8.0, group, ranks, sent,
        times);
  };
  // A weight split over the tensor axis and gathered whole for an op that
  // splits the batch there: each rank makes the whole gradient, which is
  // reduce-scattered over the axis into the shards; the shards are then
  // reduced over the data axis as the other gradients are.
  // (A weight kept on another pipeline stage, tied, counts here too: its
  // term is reduced over tp before it is sent back.)
  if (partial.gathered > 0.0 && t > 1)
    add(CollectiveKind::ReduceScatter, partial.gathered * reduceBytes * t,
        mesh.getGroup(kTensorAxis), t, reduction.sent.tensorAxis, reductions);
  double gathered = std::min(partial.gathered, partial.elements);
  double wholeElements = elements - partial.elements + gathered;
  double partialElements = partial.elements - gathered;
  // Over the data-parallel group, behind the backward passes. ZeRO-1/2's
  // reduce-scatter and gather of one precision, once each, are priced as
  // the all-reduce they add up to.
  auto overData = [&](double elements) {
    if (over.allReduce) {
      reduceOverData(CollectiveKind::AllReduce, elements,
                     mesh.getGroup(kDataAxis), d, reduction.sent.dataAxis);
      return;
    }
    if (zeroStage <= 2 && compression.isNone() && reductions == 1 &&
        reduceBytes == over.gatherBytes) {
      add(CollectiveKind::AllReduce, elements * reduceBytes,
          mesh.getGroup(kDataAxis), d, reduction.sent.dataAxis);
      return;
    }
    reduceOverData(CollectiveKind::ReduceScatter, elements,
                   mesh.getGroup(kDataAxis), d, reduction.sent.dataAxis,
                   reductions);
    if (zeroStage <= 2)
      add(CollectiveKind::AllGather, elements * over.gatherBytes,
          mesh.getGroup(kDataAxis), d, reduction.sent.dataAxis);
  };
  overData(wholeElements);
  if (zeroStage == 0) {
    // One reduction over the stage's devices.
    if (d > 1)
      reduceOverData(CollectiveKind::AllReduce, partialElements,
                     mesh.getStageDevices(), d * t, reduction.sent.dataAxis);
    else
      add(CollectiveKind::AllReduce, partialElements * reduceBytes,
          mesh.getStageDevices(), d * t, reduction.sent.tensorAxis);
    return reduction;
  }
  // Under ZeRO each replica needs its shard only: reduced over the data
  // axis as above, the shard all-reduced over the tensor axis.
  overData(partialElements);
  add(CollectiveKind::AllReduce, partialElements * reduceBytes / d,
      mesh.getGroup(kTensorAxis), t, reduction.sent.tensorAxis, reductions);
  return reduction;
}

double Search::getExposedGradientSync(double syncTime, double gatherTime,
                                      double elements, PartialGradients partial,
                                      double computeTime, int64_t microBatches,
                                      const StageMesh &mesh,
                                      const PipelineVariant &variant) const {
  int zeroStage = variant.zeroStage;
  // What the schedule hides, contention for the cores leaves partly
  // exposed.
  auto exposed = [&](double scheduled) {
    return scheduled + cluster.efficiency.getContendedTime(
                           std::max(0.0, syncTime + gatherTime - scheduled));
  };
  double window = computeTime * (backwardFactor - 1.0) / backwardFactor;
  // A runtime that hides the reduction behind every micro-batch's backward
  // pass (ZeRO-3's gathers with it behind all the compute), as
  // Megatron-LM's published throughput calibrates this model.
  if (microBatches > 1 && cluster.gradientSyncBehindAllMicroBatches)
    return exposed(std::max(
        0.0, syncTime + gatherTime -
                 microBatches * (gatherTime > 0 ? computeTime : window)));
  // ZeRO-3's gathers, one ahead of their readers, behind the step's
  // compute.
  double gathersExposed =
      std::max(0.0, gatherTime - microBatches * computeTime);
  if (syncTime <= 0.0 || elements <= 0.0)
    return exposed(gathersExposed);
  // As dpc's program runs it (the sums of several micro-batches reduced
  // inside the last one's backward pass, -dpc-reduce-in-last-micro-batch).
  // Under ZeRO-1/2 the updated shards are gathered after the optimizer
  // step, half of the all-reduce's time that nothing hides.
  double afterUpdate = zeroStage == 1 || zeroStage == 2 ? syncTime / 2 : 0.0;
  double reduction = syncTime - afterUpdate;
  // The gradients are reduced in buckets of the cap inside the backward
  // pass, each started when its last gradient is made: the last bucket
  // (the first layers' gradients, made as the pass ends) is never hidden,
  // the others behind the rest of the backward pass.
  double capElements = std::max(1.0, options.bucketCapBytes /
                                         graph.getGradientCommunicationBytes());
  double buckets = std::ceil(elements / capElements);
  double lastElements = elements - (buckets - 1.0) * capElements;
  double last = getGradientReduction(lastElements,
                                     partial.scaled(lastElements / elements),
                                     mesh, variant, microBatches)
                    .time *
                (reduction / syncTime);
  return exposed(afterUpdate + std::max(last, reduction - window) +
                 gathersExposed);
}

StageFit Search::fit(ArrayRef<ShardingSpace::SegmentCost> costs,
                     ArrayRef<SegmentPlan> segments, const StageMesh &mesh,
                     int64_t microBatches, const PipelineVariant &variant,
                     bool ignoreMemory) const {
  int64_t p = mesh.getStages(), d = mesh.getDataParallel();
  int z = variant.zeroStage;
  unsigned n = costs.size();
  // Per segment: its time and the send after it; prefix sums of memory.
  SmallVector<double> times(n), sends(n, 0.0);
  SmallVector<double> elementSum(n + 1, 0.0), activationSum(n + 1, 0.0),
      checkpointSum(n + 1, 0.0);
  for (unsigned i = 0; i < n; ++i) {
    times[i] = segments[i].computeTime + segments[i].communicationTime;
    // The activation forward and its gradient backward.
    if (p > 1 && i + 1 < n)
      sends[i] = 2.0 * getBestCollective(CollectiveKind::SendRecv,
                                         costs[i].outputBytes,
                                         mesh.getStageGroup(), cluster)
                           .time;
    elementSum[i + 1] = elementSum[i] + costs[i].parameterElements;
    activationSum[i + 1] = activationSum[i] + segments[i].activationBytes;
  }
  // A repeated layer is recomputed whole.
  SmallVector<double> unitActivations;
  for (unsigned i = 0; i < n; ++i)
    unitActivations.push_back(costs[i].activationBytes);
  for (const LayerSegmentation::Region &region : segmentation.getRegions())
    for (unsigned unit = region.first; unit < region.getEnd();
         unit += region.period) {
      double layer = 0.0;
      for (unsigned i = unit; i < unit + region.period; ++i)
        layer += costs[i].activationBytes;
      for (unsigned i = unit; i < unit + region.period; ++i)
        unitActivations[i] = layer;
    }
  for (unsigned i = 0; i < n; ++i)
    checkpointSum[i + 1] =
        checkpointSum[i] + (checkpointed[i] ? costs[i].outputBytes : 0.0);
  // An interleaved schedule runs `chunks` model chunks on each stage:
  // pipeline position k is chunk k / p of stage k % p.
  int64_t chunks = variant.schedule == PipelineSchedule::Interleaved1F1B
                       ? variant.chunks
                       : 1;
  unsigned positions = p * chunks;
  SmallVector<double> inFlightOf(p);
  for (int64_t stage = 0; stage < p; ++stage)
    inFlightOf[stage] = getMicroBatchesInFlight(variant.schedule, p, stage,
                                                microBatches, variant.chunks);
  // The largest of `values` among segments [first, end): a sparse table,
  // since the partition asks for many ranges. Recomputation stores the
  // largest layer's activations again during the backward; every stage
  // holds its largest op's temporaries at some point.
  using RangeMax = SmallVector<SmallVector<double>>;
  auto getRangeMax = [&](ArrayRef<double> values) {
    RangeMax table;
    table.emplace_back(values.begin(), values.end());
    for (unsigned width = 2; width <= n; width *= 2) {
      const SmallVector<double> &half = table.back();
      SmallVector<double> level;
      for (unsigned i = 0; i + width <= n; ++i)
        level.push_back(std::max(half[i], half[i + width / 2]));
      table.push_back(std::move(level));
    }
    return table;
  };
  auto largestIn = [](const RangeMax &table, unsigned first, unsigned end) {
    unsigned level = llvm::Log2_32(end - first);
    return std::max(table[level][first], table[level][end - (1u << level)]);
  };
  // Recomputing attention holds one core made again at a time.
  RangeMax largestLayer;
  if (variant.recompute == Recomputation::Layers)
    largestLayer = getRangeMax(unitActivations);
  if (variant.recompute == Recomputation::Attention) {
    SmallVector<double> cores;
    for (const ShardingSpace::SegmentCost &cost : costs)
      cores.push_back(cost.attentionCoreBytes);
    largestLayer = getRangeMax(cores);
  }
  SmallVector<double> temporaries;
  for (const ShardingSpace::SegmentCost &cost : costs)
    temporaries.push_back(z >= 2 ? cost.temporaryBytesSharded
                                 : cost.temporaryBytes);
  RangeMax largestTemporaries = getRangeMax(temporaries);
  // The memory of a stage holding `ranges`: the model state of each, the
  // activations of every micro-batch in flight, under recomputation the
  // working set of the largest layer recomputed at a time, and the
  // temporaries of its largest op.
  auto memoryOf = [&](ArrayRef<SegmentRange> ranges, unsigned stage) {
    double elements = 0.0, stored = 0.0, working = 0.0, temporary = 0.0;
    for (SegmentRange range : ranges) {
      elements += elementSum[range.end] - elementSum[range.first];
      temporary = std::max(
          temporary, largestIn(largestTemporaries, range.first, range.end));
      if (variant.recompute == Recomputation::Layers)
        stored += checkpointSum[range.end] - checkpointSum[range.first];
      else
        stored += activationSum[range.end] - activationSum[range.first];
      if (variant.recompute != Recomputation::None)
        working =
            std::max(working, largestIn(largestLayer, range.first, range.end));
    }
    MemoryBreakdown memory =
        getModelState(elements, mesh, variant, microBatches);
    memory.activations = inFlightOf[stage] * stored + working;
    memory.temporaries = temporary + getCompressionBufferBytes(
                                         elements, mesh, variant, microBatches);
    double parameterBytes = elements * graph.getGradientCommunicationBytes();
    // ZeRO-3 holds parameters gathered whole: the bucket being read and
    // the one prefetched behind it, at most the stage's own parameters.
    if (z >= 3)
      memory.temporaries +=
          std::min(2.0 * options.bucketCapBytes, parameterBytes);
    // ZeRO-1/2 gather the updated shards after the update, a bucket at a
    // time: the bucket whole beside its shards concatenated to send.
    int64_t dp = mesh.getDataParallel();
    if ((z == 1 || z == 2) && dp > 1) {
      double bucket = std::min(options.bucketCapBytes, parameterBytes);
      memory.optimizerTemporaries = bucket + bucket / double(dp);
    }
    return memory;
  };
  double limit = ignoreMemory ? std::numeric_limits<double>::infinity()
                              : memoryLimit;

  // Contiguous ranges, one per pipeline position; a chunk may use its
  // share of the stage's memory, so that the stage's chunks fit together.
  StageFit result;
  std::optional<SmallVector<unsigned>> partition = partitionStages(
      times, sends, positions,
      [&](unsigned first, unsigned end, unsigned position) {
        return memoryOf({{first, end}}, position % p).getTotal() <=
               limit / chunks;
      });
  if (!partition) {
    if (ignoreMemory)
      return result;
    // Report the stage that is short under a time-balanced split.
    StageFit loose = fit(costs, segments, mesh, microBatches, variant, true);
    result.peakMemory = loose.peakMemory;
    result.peakBreakdown = loose.peakBreakdown;
    result.peakStage = loose.peakStage;
    return result;
  }
  // The ranges of each stage under a split into positions.
  auto stagesOf = [&](ArrayRef<unsigned> ends) {
    SmallVector<SmallVector<SegmentRange, 1>> ranges(p);
    for (auto [position, end] : llvm::enumerate(ends))
      ranges[position % p].push_back({position ? ends[position - 1] : 0u, end});
    return ranges;
  };
  auto slowestOf = [&](ArrayRef<SmallVector<SegmentRange, 1>> ranges) {
    double slowest = 0.0;
    for (ArrayRef<SegmentRange> stage : ranges) {
      double time = 0.0;
      for (SegmentRange range : stage) {
        time += sends[range.end - 1];
        for (unsigned i = range.first; i < range.end; ++i)
          time += times[i];
      }
      slowest = std::max(slowest, time);
    }
    return slowest;
  };
  SmallVector<SmallVector<SegmentRange, 1>> ranges = stagesOf(*partition);
  // Interleaved, a stage's time is the sum of its chunks': equal chunks
  // may balance the stages better than the split that bounds the slowest
  // chunk.
  if (chunks > 1) {
    SmallVector<SmallVector<SegmentRange, 1>> even =
        stagesOf(splitEvenly(times, positions));
    bool fits = llvm::all_of(llvm::seq<int64_t>(0, p), [&](int64_t stage) {
      return memoryOf(even[stage], stage).getTotal() <= limit;
    });
    if (fits && slowestOf(even) < slowestOf(ranges))
      ranges = std::move(even);
  }
  result.stages.resize(p);
  for (auto [stage, plan] : llvm::enumerate(result.stages))
    plan.chunks = ranges[stage];

  // A parameter read on several stages (a table tied to the output
  // projection) is kept by the first: each step it sends its copy in the
  // compute precision to the others, once, and each sends back its
  // gradient's term (reduced over tp first, a block per device) for every
  // micro-batch, for the first to sum.
  llvm::MapVector<Value, std::pair<double, SmallVector<unsigned, 2>>> readers;
  for (auto [stage, plan] : llvm::enumerate(result.stages))
    for (SegmentRange range : plan.chunks)
      for (unsigned i = range.first; i < range.end; ++i)
        for (auto [param, elements] : costs[i].parameterReads) {
          auto &[perDevice, stages] = readers[param];
          perDevice = elements;
          if (!llvm::is_contained(stages, unsigned(stage)))
            stages.push_back(stage);
        }
  SmallVector<double> tiedSent(p, 0.0);
  double wireBytes = graph.getGradientCommunicationBytes();
  for (auto &[param, read] : readers) {
    auto &[elements, stages] = read;
    if (stages.size() < 2)
      continue;
    unsigned owner = *llvm::min_element(stages);
    for (unsigned stage : stages)
      if (stage != owner) {
        tiedSent[owner] += elements * wireBytes;
        tiedSent[stage] += microBatches * elements * wireBytes;
      }
  }

  // The stages of the partition found.
  double slowest = 0.0;
  for (auto [stage, plan] : llvm::enumerate(result.stages)) {
    double elements = 0, backwardElements = 0, sendsOfStage = 0.0;
    for (SegmentRange range : plan.chunks) {
      for (unsigned i = range.first; i < range.end; ++i) {
        plan.computeTime += segments[i].computeTime;
        plan.communicationTime += segments[i].communicationTime;
        plan.parameters += costs[i].parameters;
        plan.perStepTime += costs[i].perStepTime;
        elements += costs[i].parameterElements;
        backwardElements += costs[i].backwardParameterElements;
      }
      sendsOfStage += sends[range.end - 1];
    }
    plan.memory = memoryOf(plan.chunks, stage);
    double stageTime = plan.computeTime + plan.communicationTime + sendsOfStage;
    slowest = std::max(slowest, stageTime);
    result.sendTime = std::max(result.sendTime, sendsOfStage);
    PartialGradients partial;
    for (SegmentRange range : plan.chunks)
      for (unsigned i = range.first; i < range.end; ++i) {
        partial.elements += costs[i].tensorPartialGradientElements;
        partial.gathered += costs[i].tensorGatheredGradientElements;
      }
    partial.elements = std::min(partial.elements, elements);
    GradientReduction reduction =
        getGradientReduction(elements, partial, mesh, variant, microBatches);
    plan.gradientSyncTime = reduction.time;
    plan.sent = getSentBytes(costs, plan.chunks, microBatches, variant);
    plan.sent += reduction.sent;
    plan.sent.stageAxis += tiedSent[stage];
    double bytesPerElement = graph.getGradientCommunicationBytes();
    // ZeRO-3 gathers every parameter for the forward pass of each
    // micro-batch, and those the backward pass reads again for it.
    if (z >= 3)
      for (double gathered : {elements, backwardElements})
        plan.sent.dataAxis +=
            microBatches * dpc::getSentBytes(CollectiveKind::AllGather,
                                             gathered * bytesPerElement, d);
    // ZeRO-3 gathers the parameters for the forward and backward of every
    // micro-batch, behind the whole step's compute.
    double gathers = 0.0;
    if (z >= 3)
      for (double gathered : {elements, backwardElements})
        gathers +=
            microBatches * getBestCollective(CollectiveKind::AllGather,
                                             gathered * bytesPerElement,
                                             mesh.getGroup(kDataAxis), cluster)
                               .time;
    plan.exposedGradientSyncTime = getExposedGradientSync(
        plan.gradientSyncTime, gathers, elements, partial, plan.computeTime,
        microBatches, mesh, variant);
    // The optimizer reads and writes each local element's state once.
    double optimizerBytes =
        2.0 * elements / (z >= 1 ? d : 1) *
        (graph.getParameterBytes() + graph.getGradientBytes() +
         graph.getOptimizerBytes());
    result.optimizerTime = std::max(
        result.optimizerTime,
        getRooflineEstimate(0.0, optimizerBytes, NumericType::F32, cluster)
            .time);
    if (plan.memory.getTotal() > result.peakMemory) {
      result.peakMemory = plan.memory.getTotal();
      result.peakBreakdown = plan.memory;
      result.peakStage = stage;
    }
  }
  double pipelined =
      getPipelineTime(variant.schedule, p, microBatches, slowest, 0.0,
                      variant.chunks);
  result.bubbleTime = pipelined - microBatches * slowest;
  double exposed = 0.0;
  for (const StagePlan &stage : result.stages)
    exposed = std::max(exposed,
                       stage.exposedGradientSyncTime + stage.perStepTime);
  // Ranks that synchronize wait, at each collective, for the one the noise
  // of the host slowed most since the last: the skew of the compute
  // between synchronizations, which tile the step.
  if (p * d * mesh.getTensorParallel() > 1) {
    double compute = 0.0;
    for (const StagePlan &stage : result.stages)
      compute = std::max(compute, stage.computeTime);
    result.skewTime = cluster.rankSkew * microBatches * compute;
  }
  result.stepTime =
      pipelined + exposed + result.optimizerTime + result.skewTime;
  result.feasible = true;
  return result;
}

FailureOr<Plan> Search::run(std::string &error) {
  auto start = std::chrono::steady_clock::now();
  int64_t n = options.devices;
  int64_t batch = graph.getStepBatchSize();
  // A step built with K micro-batches fixes the plan's count at K: one
  // micro-batching, not the step's inside the planner's.
  int64_t stepMicroBatches = graph.getStepMicroBatches();
  unsigned segments = segmentation.getSegments().size();
  // Does the data axis ever need a collective inside the step? Only when
  // some op touching the batch cannot split it.
  for (Operation *op : graph.getForwardOps())
    for (Value operand : op->getOperands())
      if (graph.getBatchDim(operand) >= 0 && graph.getBatchFactor(op) < 0 &&
          op->getNumResults() && graph.getBatchDim(op->getResult(0)) < 0)
        dataAxisMatters = true;

  int64_t fixedProduct = 1;
  for (int64_t degree : {options.dataParallel, options.tensorParallel,
                         options.pipelineParallel})
    if (degree > 0)
      fixedProduct *= degree;
  if (n % fixedProduct != 0 ||
      (options.dataParallel > 0 && options.tensorParallel > 0 &&
       options.pipelineParallel > 0 && fixedProduct != n)) {
    error = "--dp/--tp/--pp ask for " + std::to_string(fixedProduct) +
            " devices in all (or a divisor), but the mesh has " +
            std::to_string(n);
    return failure();
  }
  if (options.pipelineParallel > int64_t(segments)) {
    error = "--pp=" + std::to_string(options.pipelineParallel) +
            " is more stages than the model has layer segments (" +
            std::to_string(segments) + ")";
    return failure();
  }
  if (options.dataParallel > 0 &&
      graph.getBatchSize() % options.dataParallel != 0) {
    error = "--dp=" + std::to_string(options.dataParallel) +
            " does not divide the batch of " +
            std::to_string(graph.getBatchSize()) +
            (stepMicroBatches > 1
                 ? " samples per micro-batch (the step accumulates " +
                       std::to_string(stepMicroBatches) + ")"
                 : std::string());
    return failure();
  }

  // Selective recomputation only where an attention's core is stored
  // (not with a fused attention kernel, which stores none).
  SmallVector<Recomputation, 3> recomputations = {Recomputation::None,
                                                  Recomputation::Layers};
  if (graph.storesAttentionCore())
    recomputations.insert(recomputations.begin() + 1, Recomputation::Attention);
  ArrayRef<GradientCompression> compressions = options.gradientCompressions;
  SmallVector<PipelineVariant> singleStage;
  for (Recomputation recompute : recomputations)
    for (int z = 0; z <= 3; ++z)
      for (const GradientCompression &compression : compressions)
        singleStage.push_back(
            {PipelineSchedule::OneFOneB, 1, recompute, z, compression});
  // Compression changes the numerics: a compressed plan must beat sending
  // the gradients whole by the gain asked for, so plans are compared by
  // their step time so weighed.
  auto weigh = [&](const PipelineVariant &variant, double stepTime) {
    return variant.compression.isNone()
               ? stepTime
               : stepTime / (1.0 - options.compressionGain);
  };
  double bestWeighed = std::numeric_limits<double>::infinity();

  std::optional<Plan> best;
  StageFit leastShort;
  std::string leastShortConfig;
  leastShort.peakMemory = std::numeric_limits<double>::infinity();
  int64_t configurations = 0;
  std::string firstConflict;
  std::optional<Location> conflictLocation;
  for (int64_t pp : getDivisors(n)) {
    if (pp > int64_t(segments) ||
        (options.pipelineParallel > 0 && pp != options.pipelineParallel))
      continue;
    for (int64_t tp : getDivisors(n / pp)) {
      if (options.tensorParallel > 0 && tp != options.tensorParallel)
        continue;
      if (options.tensorParallel == 0 && !options.tensorParallelAcrossNodes &&
          tp > cluster.devicesPerNode)
        continue;
      int64_t dp = n / pp / tp;
      if ((options.dataParallel > 0 && dp != options.dataParallel) ||
          graph.getBatchSize() % dp != 0)
        continue;
      for (bool dataInner : {false, true}) {
        // Data-parallel ranks innermost, tensor-parallel ones apart (a model
        // whose gradients outweigh its activations may prefer its reduction
        // within a node). That takes the tensor axis across nodes where it
        // places the groups otherwise: searched where tensor parallelism may
        // leave a node (a degree the user fixed), or when asked for.
        bool tensorMayLeaveNode =
            options.tensorParallel > 0 || options.tensorParallelAcrossNodes;
        if (options.dataInner ? dataInner != *options.dataInner
                              : dataInner && !tensorMayLeaveNode)
          continue;
        StageMesh mesh(pp, dp, tp, cluster, dataInner);
        if (dataInner && !options.dataInner &&
            isSamePlacement(mesh, StageMesh(pp, dp, tp, cluster)))
          continue;
        for (int64_t microBatch : getDivisors(batch / dp)) {
          int64_t microBatches = batch / dp / microBatch;
          // Micro-batches of powers of two up to 64 samples per replica (and
          // the whole replica batch): larger ones only add memory to ops
          // that scale linearly with the batch.
          bool powerOfTwo = (microBatch & (microBatch - 1)) == 0;
          if (options.microBatchSize > 0 ? microBatch != options.microBatchSize
              : stepMicroBatches > 1 || options.stepMicroBatching
                  ? microBatches != stepMicroBatches
                  : microBatch > 64 || (!powerOfTwo && microBatches > 1))
            continue;
          ShardingSpace space(graph, segmentation, mesh, microBatch,
                              backwardFactor, options.exposedTensorComm,
                              options.constraints);
          if (!space.getConflict().empty()) {
            if (firstConflict.empty()) {
              firstConflict = space.getConflict().str();
              conflictLocation = space.getConflictLocation();
            }
            continue;
          }
          bool solverFailed = false;
          ArrayRef<SmallVector<unsigned>> choices =
              getChoices(space, tp, dp, microBatch, error, solverFailed);
          if (solverFailed)
            return failure();
          SmallVector<PipelineVariant> variants;
          if (pp == 1) {
            variants = singleStage;
          } else {
            for (Recomputation recompute : recomputations)
              for (int z = 0; z <= 3; ++z)
                for (const GradientCompression &c : compressions) {
                  variants.push_back(
                      {PipelineSchedule::OneFOneB, 1, recompute, z, c});
                  variants.push_back(
                      {PipelineSchedule::GPipe, 1, recompute, z, c});
                  for (int64_t v : {2, 4})
                    if (microBatches % pp == 0 && int64_t(segments) >= pp * v)
                      variants.push_back({PipelineSchedule::Interleaved1F1B, v,
                                          recompute, z, c});
                }
          }
          for (ArrayRef<unsigned> choice : choices) {
            SmallVector<ShardingSpace::SegmentCost> costs =
                space.evaluate(choice);
            for (const PipelineVariant &variant : variants) {
              // Without data parallelism there is nothing to compress.
              if ((dp == 1 &&
                   (variant.zeroStage > 0 ||
                    !(variant.compression == compressions.front()))) ||
                  (pp > 1 && options.schedule &&
                   (variant.schedule != *options.schedule ||
                    (options.chunks && variant.chunks != options.chunks))) ||
                  (options.recompute &&
                   variant.recompute != *options.recompute) ||
                  (options.zeroStage &&
                   variant.zeroStage != *options.zeroStage))
                continue;
              ++configurations;
              SmallVector<SegmentPlan> segments =
                  getSegmentPlans(costs, mesh, microBatches, variant);
              // Pipelines that cannot beat the best plan need no stages.
              if (weigh(variant,
                        getStepTimeLowerBound(segments, mesh, microBatches,
                                              variant)) >= bestWeighed)
                continue;
              StageFit fitted =
                  fit(costs, segments, mesh, microBatches, variant, false);
              if (!fitted.feasible) {
                if (fitted.peakMemory < leastShort.peakMemory) {
                  leastShort = fitted;
                  leastShortConfig =
                      "dp=" + std::to_string(dp) + " tp=" + std::to_string(tp) +
                      " pp=" + std::to_string(pp) +
                      " micro-batch=" + std::to_string(microBatch) +
                      (variant.recompute == Recomputation::Layers
                           ? " with recomputation"
                       : variant.recompute == Recomputation::Attention
                           ? " with attention recomputed"
                           : "") +
                      " ZeRO-" + std::to_string(variant.zeroStage);
                }
                continue;
              }
              double weighed = weigh(variant, fitted.stepTime);
              if (best && weighed >= bestWeighed * (1 - 1e-9))
                continue;
              bestWeighed = weighed;
              Plan plan;
              plan.dataParallel = dp;
              plan.tensorParallel = tp;
              plan.pipelineParallel = pp;
              plan.dataInner = dataInner;
              plan.microBatchSize = microBatch;
              plan.microBatches = microBatches;
              plan.schedule = variant.schedule;
              plan.chunks = variant.chunks;
              plan.recompute = variant.recompute;
              plan.zeroStage = variant.zeroStage;
              plan.stages = fitted.stages;
              plan.segments = std::move(segments);
              plan.stepTime = fitted.stepTime;
              plan.bubbleTime = fitted.bubbleTime;
              plan.pipelineSendTime = fitted.sendTime;
              plan.optimizerTime = fitted.optimizerTime;
              plan.skewTime = fitted.skewTime;
              plan.samplesPerSecond = batch / fitted.stepTime;
              plan.modelFlops = modelFlops;
              // Each op's peak is its own element type's; MFU is against the
              // peak of the type most FLOPs run in, as papers report it.
              plan.memoryLimit = memoryLimit;
              plan.bucketCapBytes = options.bucketCapBytes;
              plan.gradientCompression = variant.compression;
              plan.compressionChoices.assign(compressions.begin(),
                                             compressions.end());
              plan.compressionGain = options.compressionGain;
              for (Operation *op : graph.getForwardOps())
                if (std::optional<unsigned> node =
                        space.getNode(segmentation.getRepresentative(op))) {
                  const ShardingSpace::Strategy &strategy =
                      space.getStrategies(*node)[choice[*node]];
                  plan.results[op] = SmallVector<TensorSharding, 1>(
                      llvm::ArrayRef(strategy.results));
                  plan.operands[op] = strategy.operands;
                }
              for (BlockArgument arg : graph.getFunction().getArguments())
                if (graph.isParameter(arg))
                  if (std::optional<unsigned> node = space.getNode(
                          segmentation.getRepresentative(Value(arg))))
                    plan.parameters[arg] =
                        space.getStrategies(*node)[choice[*node]]
                            .results.front();
              best = std::move(plan);
            }
          }
        }
      }
    }
  }
  if (!best) {
    if (configurations == 0 && !firstConflict.empty()) {
      error = "no configuration gives the shardings fixed in the IR: " +
              firstConflict;
      errorLocation = conflictLocation;
      return failure();
    }
    if (configurations == 0) {
      error = "no way to split " + std::to_string(n) +
              " devices matches the request (the batch of " +
              std::to_string(batch) +
              " must divide over data parallelism, pipeline stages need a "
              "layer segment each, tensor parallelism stays within a node "
              "of " +
              std::to_string(cluster.devicesPerNode) + " devices)";
      return failure();
    }
    const MemoryBreakdown &m = leastShort.peakBreakdown;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "no plan fits in " << llvm::format("%.2f", memoryLimit / kGiB)
       << " GiB per device: the leanest (" << leastShortConfig << ") needs "
       << llvm::format("%.2f", leastShort.peakMemory / kGiB) << " GiB on stage "
       << leastShort.peakStage << ", "
       << llvm::format("%.2f", (leastShort.peakMemory - memoryLimit) / kGiB)
       << " GiB short (parameters " << llvm::format("%.2f", m.parameters / kGiB)
       << ", gradients " << llvm::format("%.2f", m.gradients / kGiB)
       << ", optimizer state " << llvm::format("%.2f", m.optimizerState / kGiB)
       << ", activations " << llvm::format("%.2f", m.activations / kGiB)
       << ", temporaries " << llvm::format("%.2f", m.temporaries / kGiB)
       << ", optimizer-phase temporaries "
       << llvm::format("%.2f", m.optimizerTemporaries / kGiB) << " GiB)";
    error = os.str();
    return failure();
  }
  best->configurations = configurations;
  best->integerPrograms = integerPrograms;
  best->allOptimal = allOptimal;
  // MFU against the dense peak of the type the matmuls run in.
  NumericType type = NumericType::F32;
  for (Operation *op : graph.getForwardOps())
    if (isa<CostOpInterface>(op) && op->getNumResults()) {
      NumericType t = getNumericTypeOf(op->getResult(0).getType());
      if (t == NumericType::BF16 || t == NumericType::F16)
        type = t;
    }
  best->mfu = getMfu(modelFlops, best->stepTime, n,
                     cluster.device.getPeakFlops(type));
  best->planningSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return *best;
}

FailureOr<Plan> mlir::dpc::planTraining(const TrainingGraph &graph,
                                        const LayerSegmentation &segmentation,
                                        const PlannerOptions &options,
                                        std::string &error,
                                        std::optional<Location> *errorLocation) {
  Search search(graph, segmentation, options);
  FailureOr<Plan> plan = search.run(error);
  if (failed(plan) && errorLocation)
    *errorLocation = search.getErrorLocation();
  return plan;
}
