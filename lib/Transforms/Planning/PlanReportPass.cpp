//===- PlanReportPass.cpp - The -dpc-plan-report pass ---------------------===//
//
// Prices the plan a module holds, as its attributes state it: the degrees
// and the mesh, micro-batching, schedule, recomputation and ZeRO stage of
// `dpc.plan`, and the shardings of the forward ops and arguments. The
// planner evaluates exactly that configuration, so a plan the user edited
// is priced as edited.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Passes.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/Transforms/Planning/PlanReport.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_PLANREPORT
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct PlanReportPass : public dpc::impl::PlanReportBase<PlanReportPass> {
  using PlanReportBase::PlanReportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fields =
        module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
    if (!fields) {
      module.emitError("the module has no plan (dpc.plan): run -dpc-plan "
                       "first");
      return signalPassFailure();
    }
    auto text = [&](StringRef name) {
      auto value = fields.getAs<StringAttr>(name);
      return value ? value.getValue() : StringRef();
    };
    auto integer = [&](StringRef name) -> int64_t {
      auto value = fields.getAs<IntegerAttr>(name);
      return value ? value.getInt() : 0;
    };
    std::optional<PipelineSchedule> schedule =
        parsePipelineSchedule(text("schedule"));
    auto recompute = fields.getAs<BoolAttr>("recompute");
    if (!schedule || !recompute || integer("micro_batch_size") < 1) {
      module.emitError("dpc.plan lacks its schedule, recompute or "
                       "micro_batch_size");
      return signalPassFailure();
    }

    // The planner reads the step without the explicit reshards; a copy
    // keeps the module as it is.
    OwningOpRef<ModuleOp> step = cast<ModuleOp>(module->clone());
    eraseReshards(*step);
    std::string error;
    FailureOr<Mesh> mesh = Mesh::parse(text("mesh"), error);
    FailureOr<Cluster> cluster = failure();
    if (succeeded(mesh))
      cluster = resolveCluster(text("cluster"), error);
    FailureOr<TrainingGraph> graph = failure();
    if (succeeded(cluster))
      graph = TrainingGraph::get(*step, error);
    if (failed(graph)) {
      module.emitError(error);
      return signalPassFailure();
    }
    FailureOr<ShardingConstraints> constraints =
        ShardingConstraints::read(*graph);
    if (failed(constraints))
      return signalPassFailure();
    LayerSegmentation segmentation(*graph);
    PlannerOptions options;
    options.constraints = &*constraints;
    options.devices = mesh->getNumDevices();
    options.cluster = *cluster;
    if (auto limit = fields.getAs<FloatAttr>("memory_limit_bytes"))
      options.memoryLimit = limit.getValueAsDouble();
    options.dataParallel = integer("dp");
    options.tensorParallel = integer("tp");
    options.pipelineParallel = integer("pp");
    options.tensorParallelAcrossNodes = true;
    options.microBatchSize = integer("micro_batch_size");
    options.schedule = schedule;
    options.chunks = integer("chunks");
    options.recompute = recompute.getValue();
    options.zeroStage = int(integer("zero_stage"));
    std::optional<Location> where;
    FailureOr<Plan> plan =
        planTraining(*graph, segmentation, options, error, &where);
    if (failed(plan)) {
      emitError(where.value_or(module.getLoc()),
                "the plan in the IR cannot be priced: ")
          << error;
      return signalPassFailure();
    }
    PlanContext context{mesh->str(), cluster->name, text("cluster").str()};
    if (failed(writePlanReport(*plan, *graph, segmentation, context, report,
                               printTable, module.getLoc())))
      signalPassFailure();
  }
};
} // namespace
