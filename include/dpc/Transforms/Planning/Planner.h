//===- Planner.h - The auto-parallel planner --------------------*- C++ -*-===//
//
// Chooses how to run a training step on a mesh: the data-, tensor- and
// pipeline-parallel degrees, each op's tensor-parallel split (an integer
// program over the sharding rules, solved once per repeated layer), the
// contiguous layer ranges of the pipeline stages, the micro-batch size and
// schedule, activation recomputation and the ZeRO stage, minimizing the
// cost model's step time under the memory limit.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_PLANNER_H
#define DPC_TRANSFORMS_PLANNING_PLANNER_H

#include "dpc/Analysis/CostModel/Cluster.h"
#include "dpc/Analysis/CostModel/GradientCompression.h"
#include "dpc/Analysis/CostModel/MemoryCost.h"
#include "dpc/Analysis/CostModel/PipelineCost.h"
#include "dpc/Analysis/CostModel/ReshardingCost.h"
#include "dpc/Transforms/Planning/LayerSegmentation.h"
#include "dpc/Transforms/Planning/ShardingConstraints.h"

#include <optional>

namespace mlir::dpc {

/// What the backward pass makes again instead of storing it: nothing;
/// each attention's core, from its scores to its probabilities (selective
/// recomputation); or each layer but its input (full recomputation).
enum class Recomputation { None, Attention, Layers };

struct PlannerOptions {
  /// Devices are the mesh's; its inner axes lie within a node.
  int64_t devices = 1;
  Cluster cluster;
  /// Bytes per device; 0 means the device's memory capacity.
  double memoryLimit = 0.0;
  /// The most a bucket of collectives holds (-dpc-bucket-gradients):
  /// ZeRO-3 holds two buckets of parameters gathered whole.
  double bucketCapBytes = 25.0 * 1024 * 1024;
  /// Degrees the user fixed (0: free).
  int64_t dataParallel = 0, tensorParallel = 0, pipelineParallel = 0;
  /// Tensor parallelism beyond one node is not searched unless asked for.
  bool tensorParallelAcrossNodes = false;
  /// Which axis is innermost (neighbouring device ids), when fixed: the
  /// data-parallel one (true) or the tensor-parallel one.
  std::optional<bool> dataInner;
  /// Part of each tensor-parallel collective on the critical path: the
  /// partitioner splits it into chunks overlapped with the contraction
  /// next to it, leaving the first and last exposed (as Megatron-LM's
  /// --tp-comm-overlap does).
  double exposedTensorComm = 0.5;
  /// Seconds CBC may spend on one integer program.
  double ilpTimeLimit = 10.0;
  /// Shardings fixed in the IR (may be null).
  const ShardingConstraints *constraints = nullptr;
  /// The rest of a plan, fixed when a given plan is priced (its report):
  /// samples per micro-batch (0: free), schedule (of a pipeline) with its
  /// chunks (0: free), recomputation and ZeRO stage. The user may fix the
  /// schedule alone.
  int64_t microBatchSize = 0;
  /// The plan will be built: its micro-batches are the step's own (K for a
  /// step built with --micro-batches=K, else one: the step's batch). Free
  /// otherwise, as advice on how to build the step.
  bool stepMicroBatching = false;
  std::optional<PipelineSchedule> schedule;
  int64_t chunks = 0;
  std::optional<Recomputation> recompute;
  std::optional<int> zeroStage;
  /// How the data-parallel gradient reductions may be sent: the user's
  /// choice, since it changes the numerics; of several, the search takes
  /// the fastest, a compressed one only where it beats sending gradients
  /// whole by `compressionGain` of the step.
  SmallVector<GradientCompression, 2> gradientCompressions = {
      GradientCompression()};
  double compressionGain = 0.01;
};

/// Layer segments [first, end).
struct SegmentRange {
  unsigned first = 0, end = 0;
};

/// What the devices of one pipeline stage hold and do.
struct StagePlan {
  /// The stage's model chunks in the order they run: one range, or under
  /// an interleaved schedule `chunks` ranges, chunk c being pipeline
  /// position c * pp + the stage's index.
  SmallVector<SegmentRange, 1> chunks;
  /// Seconds per micro-batch, forward and backward (with recomputation),
  /// all chunks together.
  double computeTime = 0.0;
  /// Seconds per micro-batch of tensor-parallel collectives.
  double communicationTime = 0.0;
  /// Seconds once per step of ops on parameters alone (weight casts).
  double perStepTime = 0.0;
  /// Seconds per step of the data-parallel gradient reduction, and the
  /// part of it the backward pass does not hide.
  double gradientSyncTime = 0.0, exposedGradientSyncTime = 0.0;
  MemoryBreakdown memory;
  /// Bytes each device of the stage sends per step, by axis.
  CommunicationVolume sent;
  /// Parameters the stage holds (all tensor-parallel shards together).
  double parameters = 0.0;
};

/// What one layer segment costs each device of its stage under the plan.
struct SegmentPlan {
  /// Seconds per micro-batch, forward and backward (with recomputation),
  /// and of the tensor-parallel collectives left exposed.
  double computeTime = 0.0, communicationTime = 0.0;
  /// Bytes of parameters, gradients and optimizer state (after ZeRO), and
  /// of activations stored per micro-batch in flight.
  double modelStateBytes = 0.0, activationBytes = 0.0;
};

struct Plan {
  int64_t dataParallel = 1, tensorParallel = 1, pipelineParallel = 1;
  /// Data-parallel ranks are the neighbouring device ids (tensor-parallel
  /// ones otherwise).
  bool dataInner = false;
  /// Samples per micro-batch on one data-parallel replica.
  int64_t microBatchSize = 1;
  int64_t microBatches = 1;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int64_t chunks = 1;
  Recomputation recompute = Recomputation::None;
  int zeroStage = 0;
  SmallVector<StagePlan> stages;
  /// Per layer segment, in order.
  SmallVector<SegmentPlan> segments;

  /// Predicted seconds of one step and its parts on the slowest stage.
  double stepTime = 0.0;
  double bubbleTime = 0.0;
  double pipelineSendTime = 0.0;
  double optimizerTime = 0.0;
  /// The slowest rank's lag over the step's compute (the cluster's
  /// rank skew), which every synchronization waits for.
  double skewTime = 0.0;
  double samplesPerSecond = 0.0;
  /// Model FLOPs of a step (3x the forward, as Megatron-LM and Alpa count)
  /// and the utilization they give.
  double modelFlops = 0.0;
  double mfu = 0.0;
  double memoryLimit = 0.0;
  double bucketCapBytes = 0.0;
  GradientCompression gradientCompression;
  /// The compressions the search chose it from (one where it was fixed),
  /// and the gain a compressed one had to give.
  SmallVector<GradientCompression, 2> compressionChoices;
  double compressionGain = 0.0;

  /// Sharding of each result of every forward op (by representative) and
  /// of every parameter; the layouts each op's strategy takes its operands
  /// in.
  llvm::DenseMap<Operation *, SmallVector<TensorSharding, 1>> results;
  llvm::DenseMap<Operation *, SmallVector<TensorSharding, 3>> operands;
  llvm::DenseMap<Value, TensorSharding> parameters;

  /// Search statistics.
  double planningSeconds = 0.0;
  int64_t integerPrograms = 0;
  int64_t configurations = 0;
  bool allOptimal = true;
};

/// Plans `graph` on `options`. Fails with `error` when the request cannot
/// be met: degrees that do not multiply to the device count, shardings
/// fixed in the IR that no configuration can give, or no plan
/// that fits in memory (naming the stage and kind of memory that is short,
/// and by how much). Where the failure is one op's or argument's (a fixed
/// sharding no configuration gives), `errorLocation` is set to it.
FailureOr<Plan> planTraining(const TrainingGraph &graph,
                             const LayerSegmentation &segmentation,
                             const PlannerOptions &options, std::string &error,
                             std::optional<Location> *errorLocation = nullptr);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_PLANNER_H
