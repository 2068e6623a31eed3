//===- PlanReport.cpp - Table, JSON and IR attributes of a plan -----------===//

#include "dpc/Transforms/Planning/PlanReport.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Interfaces/ShardableOpInterface.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::dpc;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// `layers.3` for an op imported from ONNX node `layers.3.MatMul12`.
std::string getGroupName(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc())) {
    StringRef text = name.getName().strref();
    size_t dot = text.rfind('.');
    return (dot == StringRef::npos ? text : text.take_front(dot)).str();
  }
  return "";
}

/// A layer group: one region of the segmentation.
struct Group {
  std::string name;
  unsigned firstSegment, endSegment, repeats, period;
  /// `matmul [dp, *, tp] x4; ...` over the ops that contract.
  std::string sharding;
  int64_t firstStage = 0, lastStage = 0;
  /// One repeat, on each device of its stage: seconds per micro-batch,
  /// model-state bytes, activation bytes per micro-batch.
  double computeTime = 0.0, communicationTime = 0.0;
  double modelStateBytes = 0.0, activationBytes = 0.0;
};

/// The pipeline position of `segment`: its stage, plus pp times its chunk
/// under an interleaved schedule.
int64_t getStageOf(const Plan &plan, unsigned segment) {
  for (auto [i, stage] : llvm::enumerate(plan.stages))
    for (auto [chunk, range] : llvm::enumerate(stage.chunks))
      if (segment >= range.first && segment < range.end)
        return chunk * plan.stages.size() + i;
  return 0;
}

/// `0-3` or, for several chunks, `0-1,4-5`.
std::string formatSegments(const StagePlan &stage) {
  std::string text;
  for (SegmentRange range : stage.chunks)
    text += (text.empty() ? "" : ",") + std::to_string(range.first) + "-" +
            std::to_string(range.end - 1);
  return text;
}

SmallVector<Group> getGroups(const Plan &plan,
                             const LayerSegmentation &segmentation) {
  SmallVector<Group> groups;
  ArrayRef<LayerSegmentation::Segment> segments = segmentation.getSegments();
  for (const LayerSegmentation::Region &region : segmentation.getRegions()) {
    Group group;
    group.firstSegment = region.first;
    group.endSegment = region.getEnd();
    group.repeats = region.repeats;
    group.period = region.period;
    std::string first = getGroupName(segments[region.first].ops.front());
    std::string last = getGroupName(segments[region.getEnd() - 1].ops.back());
    group.name = first == last || last.empty() ? first : first + " .. " + last;
    if (group.name.empty())
      group.name = "segments " + std::to_string(region.first);
    // Counted in order of first appearance.
    SmallVector<std::pair<std::string, int64_t>> histogram;
    for (unsigned k = 0; k < region.period; ++k)
      for (Operation *op : segments[region.first + k].ops) {
        // The ops that contract (a reduction factor in their rule) carry
        // the decisions worth reading; the elementwise ones follow them.
        auto shardable = dyn_cast<ShardableOpInterface>(op);
        auto it = plan.results.find(op);
        if (!shardable || it == plan.results.end() || it->second.empty())
          continue;
        ShardingRule rule = shardable.getShardingRule();
        bool contracts = false;
        for (int64_t f = 0; f < rule.getNumFactors(); ++f)
          contracts |= rule.getFactorKind(f) == FactorKind::Reduction;
        if (!contracts)
          continue;
        std::string key =
            op->getName().stripDialect().str() + " " + it->second.front().str();
        auto entry = llvm::find_if(
            histogram, [&](const auto &pair) { return pair.first == key; });
        if (entry == histogram.end())
          histogram.push_back({key, 1});
        else
          ++entry->second;
      }
    for (auto &[key, count] : histogram)
      group.sharding += (group.sharding.empty() ? "" : "; ") + key + " x" +
                        std::to_string(count);
    // A repeat past the first reads its input from a repeat, as all the
    // later ones do: it is the typical one.
    unsigned unit = std::min(1u, region.repeats - 1);
    for (unsigned k = 0; k < region.period; ++k) {
      unsigned index = region.first + unit * region.period + k;
      if (index >= plan.segments.size())
        continue;
      const SegmentPlan &segment = plan.segments[index];
      group.computeTime += segment.computeTime;
      group.communicationTime += segment.communicationTime;
      group.modelStateBytes += segment.modelStateBytes;
      group.activationBytes += segment.activationBytes;
    }
    group.firstStage = getStageOf(plan, group.firstSegment);
    group.lastStage = getStageOf(plan, group.endSegment - 1);
    groups.push_back(std::move(group));
  }
  return groups;
}

std::string formatStages(const Group &group) {
  return group.firstStage == group.lastStage
             ? std::to_string(group.firstStage)
             : std::to_string(group.firstStage) + "-" +
                   std::to_string(group.lastStage);
}

double ms(double seconds) { return seconds * 1e3; }
} // namespace

void mlir::dpc::printPlanTable(const Plan &plan, const TrainingGraph &graph,
                               const LayerSegmentation &segmentation,
                               const PlanContext &context,
                               llvm::raw_ostream &os) {
  int64_t devices =
      plan.dataParallel * plan.tensorParallel * plan.pipelineParallel;
  os << "plan for " << devices << " devices (mesh " << context.mesh
     << ", cluster " << context.cluster << "): dp=" << plan.dataParallel
     << " tp=" << plan.tensorParallel << " pp=" << plan.pipelineParallel
     << (plan.dataInner ? " (dp innermost)" : "") << ", " << plan.microBatches
     << " micro-batches of " << plan.microBatchSize << " per replica, "
     << stringifyPipelineSchedule(plan.schedule);
  if (plan.chunks > 1)
    os << " (" << plan.chunks << " chunks)";
  os << ", recomputation "
     << (plan.recompute == Recomputation::Layers      ? "on"
         : plan.recompute == Recomputation::Attention ? "of attention"
                                                      : "off")
     << ", ZeRO-" << plan.zeroStage;
  if (!plan.gradientCompression.isNone())
    os << ", gradients sent as " << plan.gradientCompression.str();
  if (plan.compressionChoices.size() > 1) {
    os << (plan.gradientCompression.isNone() ? ", gradients sent whole" : "")
       << " (the fastest of ";
    llvm::interleaveComma(plan.compressionChoices, os,
                          [&](const GradientCompression &compression) {
                            os << compression.str();
                          });
    os << "; compressed only where "
       << llvm::format("%g", 100 * plan.compressionGain) << "% faster)";
  }
  os << "\n";
  // Free micro-batching (--plan-only) is advice: the partition runs the
  // step's own micro-batches.
  if (plan.microBatches != graph.getStepMicroBatches())
    os << "(the step runs " << graph.getStepMicroBatches()
       << " micro-batch(es) of " << graph.getBatchSize()
       << " samples; to build this plan, export the model with a batch of "
       << plan.microBatchSize * plan.dataParallel
       << " and build the step with --micro-batches=" << plan.microBatches
       << ")\n";
  os << "\n";

  os << "layer groups (one repeat on each device of its stage: times per "
        "micro-batch, forward + backward; model state after ZeRO; "
        "activations per micro-batch; sharding of each contraction's "
        "result: dp/tp = split over the data/tensor axis, * = whole)\n";
  if (plan.chunks > 1)
    os << "(stage: the pipeline position; position k is chunk k / "
       << plan.pipelineParallel << " of stage k % " << plan.pipelineParallel
       << ")\n";
  os << llvm::format("  %-28s %7s %6s %8s %10s %9s %9s %9s  %-s\n", "group",
                     "repeats", "stage", "devices", "compute ms", "comm ms",
                     "state GiB", "activ GiB", "sharding");
  for (const Group &group : getGroups(plan, segmentation))
    os << llvm::format(
        "  %-28s %7u %6s %8lld %10.4g %9.4g %9.4g %9.4g  %s\n",
        group.name.c_str(), group.repeats, formatStages(group).c_str(),
        (long long)(plan.dataParallel * plan.tensorParallel),
        ms(group.computeTime), ms(group.communicationTime),
        group.modelStateBytes / kGiB, group.activationBytes / kGiB,
        group.sharding.empty() ? "-" : group.sharding.c_str());

  os << "\nstages (per device; times per micro-batch, forward + backward)\n";
  os << llvm::format("  %5s %9s %8s %12s %9s %9s %9s %9s %9s %11s %10s %12s\n",
                     "stage", "segments", "devices", "parameters", "params",
                     "grads", "optim", "activ", "temp", "total GiB",
                     "compute ms", "exposed comm");
  for (auto [i, stage] : llvm::enumerate(plan.stages)) {
    const MemoryBreakdown &m = stage.memory;
    std::string segments = formatSegments(stage);
    os << llvm::format(
        "  %5u %9s %8lld %12.4g %9.3f %9.3f %9.3f %9.3f %9.3f %11.3f %10.3f "
        "%9.3f ms\n",
        unsigned(i), segments.c_str(),
        (long long)(plan.dataParallel * plan.tensorParallel), stage.parameters,
        m.parameters / kGiB, m.gradients / kGiB, m.optimizerState / kGiB,
        m.activations / kGiB, m.temporaries / kGiB, m.getTotal() / kGiB,
        ms(stage.computeTime), ms(stage.communicationTime));
  }
  double peak = 0.0, exposedSync = 0.0;
  for (const StagePlan &stage : plan.stages) {
    peak = std::max(peak, stage.memory.getTotal());
    exposedSync = std::max(exposedSync, stage.exposedGradientSyncTime);
  }
  os << "\ntotals\n";
  os << llvm::format("  predicted step time      %.4g ms\n", ms(plan.stepTime));
  os << llvm::format("  pipeline bubble          %.4g ms\n",
                     ms(plan.bubbleTime));
  os << llvm::format("  exposed gradient sync    %.4g ms\n", ms(exposedSync));
  os << llvm::format("  optimizer step           %.4g ms\n",
                     ms(plan.optimizerTime));
  if (plan.skewTime > 0)
    os << llvm::format("  rank skew                %.4g ms\n",
                       ms(plan.skewTime));
  os << llvm::format("  samples/s                %.4g\n",
                     plan.samplesPerSecond);
  os << llvm::format("  model TFLOP/s per device %.4g\n",
                     plan.modelFlops / plan.stepTime / devices / 1e12);
  os << llvm::format("  MFU                      %.1f%%\n", plan.mfu * 100);
  os << llvm::format("  peak memory per device   %.3f of %.3f GiB\n",
                     peak / kGiB, plan.memoryLimit / kGiB);
  // The stage whose devices send the most (docs/cost-model.md).
  const StagePlan *busiest = &plan.stages.front();
  for (const StagePlan &stage : plan.stages)
    if (stage.sent.getTotal() > busiest->sent.getTotal())
      busiest = &stage;
  os << llvm::format(
      "  sent per device per step %.4g MB (tp %.4g, dp %.4g, "
      "pp %.4g)\n",
      busiest->sent.getTotal() / 1e6, busiest->sent.tensorAxis / 1e6,
      busiest->sent.dataAxis / 1e6, busiest->sent.stageAxis / 1e6);
  os << llvm::format("  planning                 %.3f s, %lld integer "
                     "programs%s, %lld configurations\n",
                     plan.planningSeconds, (long long)plan.integerPrograms,
                     plan.allOptimal ? " (all proven optimal)" : "",
                     (long long)plan.configurations);
}

llvm::json::Value mlir::dpc::getPlanJson(const Plan &plan,
                                         const TrainingGraph &graph,
                                         const LayerSegmentation &segmentation,
                                         const PlanContext &context) {
  llvm::json::Array groups;
  for (const Group &group : getGroups(plan, segmentation))
    groups.push_back(llvm::json::Object{
        {"name", group.name},
        {"first_segment", group.firstSegment},
        {"end_segment", group.endSegment},
        {"repeats", group.repeats},
        {"segments_per_repeat", group.period},
        {"first_stage", group.firstStage},
        {"last_stage", group.lastStage},
        {"devices", plan.dataParallel * plan.tensorParallel},
        {"repeat_compute_s", group.computeTime},
        {"repeat_exposed_communication_s", group.communicationTime},
        {"repeat_model_state_bytes", group.modelStateBytes},
        {"repeat_activation_bytes", group.activationBytes},
        {"sharding", group.sharding}});
  llvm::json::Array compressionChoices;
  for (const GradientCompression &compression : plan.compressionChoices)
    compressionChoices.push_back(compression.str());
  llvm::json::Array stages;
  double peak = 0.0;
  for (const StagePlan &stage : plan.stages) {
    peak = std::max(peak, stage.memory.getTotal());
    llvm::json::Array ranges;
    for (SegmentRange range : stage.chunks)
      ranges.push_back(llvm::json::Array{range.first, range.end});
    stages.push_back(llvm::json::Object{
        {"segment_ranges", std::move(ranges)},
        {"devices", plan.dataParallel * plan.tensorParallel},
        {"parameters", stage.parameters},
        {"memory_bytes",
         llvm::json::Object{
             {"parameters", stage.memory.parameters},
             {"gradients", stage.memory.gradients},
             {"optimizer_state", stage.memory.optimizerState},
             {"activations", stage.memory.activations},
             {"temporaries", stage.memory.temporaries},
             {"optimizer_temporaries", stage.memory.optimizerTemporaries},
             {"total", stage.memory.getTotal()}}},
        {"compute_s", stage.computeTime},
        {"exposed_communication_s", stage.communicationTime},
        {"gradient_sync_s", stage.gradientSyncTime},
        {"exposed_gradient_sync_s", stage.exposedGradientSyncTime},
        {"sent_bytes_per_step",
         llvm::json::Object{{"tp", stage.sent.tensorAxis},
                            {"dp", stage.sent.dataAxis},
                            {"pp", stage.sent.stageAxis}}}});
  }
  int64_t devices =
      plan.dataParallel * plan.tensorParallel * plan.pipelineParallel;
  return llvm::json::Object{
      {"mesh", context.mesh},
      {"cluster", context.cluster},
      {"devices_per_node", context.devicesPerNode},
      {"devices", devices},
      {"dp", plan.dataParallel},
      {"tp", plan.tensorParallel},
      {"pp", plan.pipelineParallel},
      {"inner_axis", plan.dataInner ? "dp" : "tp"},
      {"micro_batch_size", plan.microBatchSize},
      {"micro_batches", plan.microBatches},
      {"step_micro_batches", graph.getStepMicroBatches()},
      {"schedule", stringifyPipelineSchedule(plan.schedule)},
      {"chunks", plan.chunks},
      {"recompute", plan.recompute == Recomputation::Layers},
      {"recompute_attention", plan.recompute == Recomputation::Attention},
      {"zero_stage", plan.zeroStage},
      {"grad_compression", plan.gradientCompression.str()},
      {"grad_compression_choices", std::move(compressionChoices)},
      {"layer_groups", std::move(groups)},
      {"stages", std::move(stages)},
      {"totals",
       llvm::json::Object{{"step_time_s", plan.stepTime},
                          {"bubble_s", plan.bubbleTime},
                          {"optimizer_s", plan.optimizerTime},
                          {"rank_skew_s", plan.skewTime},
                          {"samples_per_s", plan.samplesPerSecond},
                          {"model_flops", plan.modelFlops},
                          {"tflops_per_device",
                           plan.modelFlops / plan.stepTime / devices / 1e12},
                          {"mfu", plan.mfu},
                          {"peak_memory_bytes", peak},
                          {"memory_limit_bytes", plan.memoryLimit}}},
      {"planning",
       llvm::json::Object{{"seconds", plan.planningSeconds},
                          {"integer_programs", plan.integerPrograms},
                          {"configurations", plan.configurations},
                          {"all_optimal", plan.allOptimal}}}};
}

LogicalResult mlir::dpc::planModule(ModuleOp module, StringRef mesh,
                                    StringRef cluster, PlannerOptions options,
                                    PlanConsumer use) {
  std::string error;
  FailureOr<Mesh> parsedMesh = Mesh::parse(mesh, error);
  FailureOr<Cluster> parsedCluster = failure();
  if (succeeded(parsedMesh))
    parsedCluster = resolveCluster(cluster, error);
  FailureOr<TrainingGraph> graph = failure();
  if (succeeded(parsedCluster))
    graph = TrainingGraph::get(module, error, parsedCluster->fusedAttention);
  if (failed(graph))
    return emitError(module.getLoc(), error);
  FailureOr<ShardingConstraints> constraints =
      ShardingConstraints::read(*graph, options.zeroStage.value_or(0) >= 1);
  if (failed(constraints))
    return failure();
  LayerSegmentation segmentation(*graph);
  options.constraints = &*constraints;
  options.devices = parsedMesh->getNumDevices();
  options.cluster = placeMeshOnCluster(*parsedCluster, *parsedMesh);
  std::optional<Location> where;
  FailureOr<Plan> plan =
      planTraining(*graph, segmentation, options, error, &where);
  if (failed(plan))
    return emitError(where.value_or(module.getLoc()), error);
  PlanContext context{parsedMesh->str(), parsedCluster->name, cluster.str(),
                      options.cluster.devicesPerNode};
  return use(*plan, *graph, segmentation, context);
}

LogicalResult mlir::dpc::writePlanReport(const Plan &plan,
                                         const TrainingGraph &graph,
                                         const LayerSegmentation &segmentation,
                                         const PlanContext &context,
                                         StringRef reportPath, bool printTable,
                                         Location loc) {
  if (!reportPath.empty()) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(reportPath, &error);
    if (!file)
      return emitError(loc, "cannot write the plan report: ") << error;
    file->os() << llvm::formatv(
        "{0:2}\n", getPlanJson(plan, graph, segmentation, context));
    file->keep();
  }
  if (printTable)
    printPlanTable(plan, graph, segmentation, context, llvm::outs());
  return success();
}

void mlir::dpc::annotatePlan(ModuleOp module, const Plan &plan,
                             const TrainingGraph &graph,
                             const LayerSegmentation &segmentation,
                             const PlanContext &context) {
  MLIRContext *ctx = module.getContext();
  Builder builder(ctx);
  writePlanMesh(module, plan.pipelineParallel, plan.dataParallel,
                plan.tensorParallel, plan.dataInner);
  auto shardingArray = [&](ArrayRef<TensorSharding> shardings) {
    return getShardingArrayAttr(ctx, shardings);
  };
  // Ops that never touch the batch (weight casts, masks) run on the first
  // stage that uses them, wherever the program order put them; the rest on
  // their segment's stage. In reverse order, every user already has its
  // stage.
  llvm::DenseMap<Operation *, int64_t> stageOf;
  for (Operation *op : llvm::reverse(graph.getForwardOps())) {
    int64_t segment = segmentation.getSegmentOf(op);
    std::optional<int64_t> stage;
    if (!graph.touchesBatch(op) || segment < 0)
      for (Operation *user : op->getUsers())
        if (auto it = stageOf.find(user); it != stageOf.end())
          stage = stage ? std::min(*stage, it->second) : it->second;
    if (!stage && segment >= 0)
      stage = getStageOf(plan, segment);
    stageOf[op] = stage.value_or(0);
  }
  // Under recomputation the backward pass keeps each layer's input: the
  // output of a repeated layer's last segment, of every other segment.
  for (Operation *op : graph.getForwardOps()) {
    op->removeAttr(DpcDialect::kCheckpointAttrName);
    op->removeAttr(DpcDialect::kRecomputeAttrName);
  }
  // Under selective recomputation the backward pass makes each attention's
  // core again, from the stored queries and keys.
  if (plan.recompute == Recomputation::Attention)
    for (Operation *op : graph.getForwardOps())
      if (llvm::any_of(op->getResults(), [&](Value result) {
            return graph.isAttentionCore(result);
          }))
        op->setAttr(DpcDialect::kRecomputeAttrName, builder.getUnitAttr());
  if (plan.recompute == Recomputation::Layers) {
    for (auto [segment, keep] :
         llvm::zip_equal(segmentation.getSegments(),
                         segmentation.getCheckpointedSegments()))
      if (Operation *def =
              segment.output ? segment.output.getDefiningOp() : nullptr;
          keep && def)
        def->setAttr(DpcDialect::kCheckpointAttrName, builder.getUnitAttr());
  }
  for (Operation *op : graph.getForwardOps()) {
    Operation *rep = segmentation.getRepresentative(op);
    if (auto it = plan.results.find(rep); it != plan.results.end()) {
      op->setAttr(DpcDialect::kShardingAttrName, shardingArray(it->second));
      op->setAttr(DpcDialect::kOperandShardingsAttrName,
                  shardingArray(plan.operands.lookup(rep)));
    } else {
      // Constants: every device holds the whole value.
      SmallVector<TensorSharding> whole;
      for (Value result : op->getResults())
        whole.push_back(TensorSharding::replicated(
            cast<ShapedType>(result.getType()).getRank()));
      op->setAttr(DpcDialect::kShardingAttrName, shardingArray(whole));
    }
    op->setAttr(DpcDialect::kStageAttrName,
                builder.getI64IntegerAttr(stageOf[op]));
  }
  func::FuncOp func = graph.getFunction();
  // A running statistic lies as the op that reads and updates it takes it
  // (a batch norm split over the channels), so that its new value leaves
  // in the layout the next step reads it in, with nothing gathered.
  auto getReaderLayout =
      [&](BlockArgument arg) -> std::optional<TensorSharding> {
    for (OpOperand &use : arg.getUses()) {
      Operation *rep = segmentation.getRepresentative(use.getOwner());
      auto it = plan.operands.find(rep);
      if (!graph.isForward(use.getOwner()) || it == plan.operands.end())
        continue;
      TensorSharding taken = it->second[use.getOperandNumber()];
      taken.clearPartial(kDataAxis);
      taken.clearPartial(kTensorAxis);
      return taken;
    }
    return std::nullopt;
  };
  for (BlockArgument arg : func.getArguments()) {
    auto it = plan.parameters.find(
        graph.isParameter(arg) ? segmentation.getRepresentative(Value(arg))
                               : Value(arg));
    TensorSharding sharding =
        TensorSharding::replicated(cast<ShapedType>(arg.getType()).getRank());
    if (it != plan.parameters.end())
      sharding = it->second;
    else if (int64_t dim = graph.getBatchDim(arg); dim >= 0)
      sharding.dims[dim] = kDataAxis;
    else if (func.getArgAttr(arg.getArgNumber(), DpcDialect::kStateAttrName))
      if (std::optional<TensorSharding> read = getReaderLayout(arg))
        sharding = *read;
    func.setArgAttr(arg.getArgNumber(), DpcDialect::kShardingAttrName,
                    getShardingAttr(ctx, sharding));
  }
  double peakMemory = 0;
  SmallVector<Attribute> stageMemory;
  for (const auto &stage : plan.stages) {
    peakMemory = std::max(peakMemory, stage.memory.getTotal());
    stageMemory.push_back(builder.getF64FloatAttr(stage.memory.getTotal()));
  }
  SmallVector<NamedAttribute> fields = {
      builder.getNamedAttr("mesh", builder.getStringAttr(context.mesh)),
      builder.getNamedAttr("cluster",
                           builder.getStringAttr(context.clusterSpec)),
      builder.getNamedAttr("dp", builder.getI64IntegerAttr(plan.dataParallel)),
      builder.getNamedAttr("tp",
                           builder.getI64IntegerAttr(plan.tensorParallel)),
      builder.getNamedAttr("pp",
                           builder.getI64IntegerAttr(plan.pipelineParallel)),
      builder.getNamedAttr("micro_batch_size",
                           builder.getI64IntegerAttr(plan.microBatchSize)),
      builder.getNamedAttr("micro_batches",
                           builder.getI64IntegerAttr(plan.microBatches)),
      builder.getNamedAttr(
          "schedule",
          builder.getStringAttr(stringifyPipelineSchedule(plan.schedule))),
      builder.getNamedAttr("chunks", builder.getI64IntegerAttr(plan.chunks)),
      builder.getNamedAttr(
          "recompute",
          builder.getBoolAttr(plan.recompute == Recomputation::Layers)),
      builder.getNamedAttr("zero_stage",
                           builder.getI64IntegerAttr(plan.zeroStage)),
      builder.getNamedAttr("memory_limit_bytes",
                           builder.getF64FloatAttr(plan.memoryLimit)),
      builder.getNamedAttr("bucket_cap_bytes",
                           builder.getF64FloatAttr(plan.bucketCapBytes)),
      builder.getNamedAttr(
          "grad_compression",
          builder.getStringAttr(plan.gradientCompression.str())),
      builder.getNamedAttr("step_time_s",
                           builder.getF64FloatAttr(plan.stepTime)),
      // What a backend's measured peak is compared with.
      builder.getNamedAttr("peak_memory_bytes",
                           builder.getF64FloatAttr(peakMemory)),
      // Per pipeline stage, what each of its ranks' is compared with.
      builder.getNamedAttr("stage_memory_bytes",
                           builder.getArrayAttr(stageMemory))};
  if (plan.recompute == Recomputation::Attention)
    fields.push_back(
        builder.getNamedAttr("recompute_attention", builder.getBoolAttr(true)));
  module->setAttr(DpcDialect::kPlanAttrName, builder.getDictionaryAttr(fields));
}
