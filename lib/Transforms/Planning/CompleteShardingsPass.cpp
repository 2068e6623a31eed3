//===- CompleteShardingsPass.cpp - The -dpc-complete-shardings pass -------===//

#include "dpc/Transforms/Passes.h"
#include "dpc/Transforms/Planning/ShardingCompletion.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_COMPLETESHARDINGS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct CompleteShardingsPass
    : public dpc::impl::CompleteShardingsBase<CompleteShardingsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<PlanLayout> layout = PlanLayout::read(module);
    if (failed(layout))
      return signalPassFailure();
    std::string error;
    FailureOr<Cluster> cluster =
        resolveClusterForMesh(layout->cluster, layout->mesh, error);
    FailureOr<TrainingGraph> graph = failure();
    if (succeeded(cluster))
      graph = TrainingGraph::get(module, error, cluster->fusedAttention);
    if (failed(graph)) {
      emitError(module.getLoc(), error);
      return signalPassFailure();
    }
    completeShardings(module, *layout, *graph, *cluster);
  }
};
} // namespace
