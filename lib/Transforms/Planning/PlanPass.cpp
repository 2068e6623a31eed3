//===- PlanPass.cpp - The -dpc-plan pass ----------------------------------===//

#include "dpc/Transforms/Passes.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/Transforms/Planning/PlanReport.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_PLAN
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct PlanPass : public dpc::impl::PlanBase<PlanPass> {
  using PlanBase::PlanBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A planned step's reshards are the last plan's layout changes; the
    // new plan places its own (the shardings it keeps stay on the ops).
    eraseReshards(module);
    std::string error;
    FailureOr<Mesh> parsedMesh = Mesh::parse(mesh, error);
    FailureOr<Cluster> parsedCluster = failure();
    if (succeeded(parsedMesh))
      parsedCluster = resolveCluster(cluster, error);
    FailureOr<TrainingGraph> graph = failure();
    if (succeeded(parsedCluster))
      graph = TrainingGraph::get(module, error);
    if (failed(graph)) {
      emitError(module.getLoc(), error);
      return signalPassFailure();
    }
    if (memoryLimit < 0 || dataParallel < 0 || tensorParallel < 0 ||
        pipelineParallel < 0 || exposedTensorComm < 0 ||
        exposedTensorComm > 1) {
      emitError(module.getLoc(), "memory-limit, dp, tp and pp must not be negative, "
                       "and exposed-tp-comm must be within [0, 1]");
      return signalPassFailure();
    }
    FailureOr<ShardingConstraints> constraints =
        ShardingConstraints::read(*graph);
    if (failed(constraints))
      return signalPassFailure();
    LayerSegmentation segmentation(*graph);
    PlannerOptions options;
    options.constraints = &*constraints;
    options.devices = parsedMesh->getNumDevices();
    options.cluster = *parsedCluster;
    options.memoryLimit = memoryLimit * 1024.0 * 1024.0 * 1024.0;
    options.dataParallel = dataParallel;
    options.tensorParallel = tensorParallel;
    options.pipelineParallel = pipelineParallel;
    options.exposedTensorComm = exposedTensorComm;
    std::optional<Location> where;
    FailureOr<Plan> plan =
        planTraining(*graph, segmentation, options, error, &where);
    if (failed(plan)) {
      emitError(where.value_or(module.getLoc()), error);
      return signalPassFailure();
    }
    PlanContext context{parsedMesh->str(), parsedCluster->name, cluster};
    if (failed(writePlanReport(*plan, *graph, segmentation, context, report,
                               printTable, module.getLoc())))
      return signalPassFailure();
    if (!annotate)
      return;
    annotatePlan(module, *plan, *graph, segmentation, context);
  }
};
} // namespace
