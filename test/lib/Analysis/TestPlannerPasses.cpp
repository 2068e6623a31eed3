//===- TestPlannerPasses.cpp - Segments and the ILP, for FileCheck --------===//

#include "TestPasses.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/Transforms/Planning/ShardingSpace.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTLAYERSEGMENTS
#define GEN_PASS_DEF_TESTSHARDINGILP
#define GEN_PASS_DEF_TESTSTOREDACTIVATIONS
#include "TestPasses.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
double roundSignificant(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return std::strtod(text, nullptr);
}

struct TestStoredActivationsPass
    : public dpc::impl::TestStoredActivationsBase<TestStoredActivationsPass> {
  using TestStoredActivationsBase::TestStoredActivationsBase;

  void runOnOperation() override {
    std::string error;
    FailureOr<TrainingGraph> graph =
        TrainingGraph::get(getOperation(), error, fusedAttention);
    if (failed(graph)) {
      emitError(getOperation().getLoc(), error);
      return signalPassFailure();
    }
    Builder builder(&getContext());
    int64_t total = 0;
    for (Operation *op : graph->getForwardOps()) {
      SmallVector<int64_t> bytes;
      for (Value result : op->getResults())
        bytes.push_back(graph->isStoredForBackward(result)
                            ? int64_t(getSizeInBytes(result.getType()))
                            : 0);
      if (llvm::all_of(bytes, [](int64_t b) { return b == 0; }))
        continue;
      total += llvm::sum_of(bytes);
      op->setAttr("dpc.stored_bytes", builder.getI64ArrayAttr(bytes));
    }
    graph->getFunction()->setAttr("dpc.stored_activation_bytes",
                                  builder.getI64IntegerAttr(total));
  }
};

struct TestLayerSegmentsPass
    : public dpc::impl::TestLayerSegmentsBase<TestLayerSegmentsPass> {
  void runOnOperation() override {
    std::string error;
    FailureOr<TrainingGraph> graph = TrainingGraph::get(getOperation(), error);
    if (failed(graph)) {
      emitError(getOperation().getLoc(), error);
      return signalPassFailure();
    }
    LayerSegmentation segmentation(*graph);
    Builder builder(&getContext());
    for (Operation *op : graph->getForwardOps()) {
      int64_t segment = segmentation.getSegmentOf(op);
      if (segment < 0)
        continue;
      op->setAttr("dpc.segment", builder.getI64IntegerAttr(segment));
      Operation *rep = segmentation.getRepresentative(op);
      if (rep != op)
        op->setAttr("dpc.repeats_segment",
                    builder.getI64IntegerAttr(segmentation.getSegmentOf(rep)));
    }
    SmallVector<Attribute> regions;
    for (const LayerSegmentation::Region &region : segmentation.getRegions())
      regions.push_back(builder.getDenseI64ArrayAttr(
          {region.first, region.period, region.repeats}));
    graph->getFunction()->setAttr("dpc.regions", builder.getArrayAttr(regions));
  }
};

struct TestShardingIlpPass
    : public dpc::impl::TestShardingIlpBase<TestShardingIlpPass> {
  using TestShardingIlpBase::TestShardingIlpBase;

  void runOnOperation() override {
    std::string error;
    FailureOr<Cluster> parsedCluster = resolveCluster(cluster, error);
    FailureOr<TrainingGraph> graph = failure();
    if (succeeded(parsedCluster))
      graph = TrainingGraph::get(getOperation(), error,
                                 parsedCluster->fusedAttention);
    if (failed(graph)) {
      emitError(getOperation().getLoc(), error);
      return signalPassFailure();
    }
    LayerSegmentation segmentation(*graph);
    StageMesh mesh(1, dataParallel, tensorParallel, *parsedCluster);
    ShardingSpace space(*graph, segmentation, mesh, microBatch, 3.0);
    const ShardingProblem &problem = space.getProblem();
    FailureOr<ShardingSolution> fastest =
        solveWithIlp(problem, {}, 60.0, error);
    if (failed(fastest)) {
      emitError(getOperation().getLoc(), error);
      return signalPassFailure();
    }
    MemoryPrices prices;
    if (memoryPrice > 0) {
      double time = problem.getTime(fastest->choice);
      StrategyMemory memory = problem.getMemory(fastest->choice);
      if (memory.modelState > 0)
        prices.modelState = memoryPrice * time / memory.modelState;
      if (memory.activations > 0)
        prices.activations = memoryPrice * time / memory.activations;
    }
    FailureOr<ShardingSolution> solution =
        solveWithIlp(problem, prices, 60.0, error);
    if (failed(solution)) {
      emitError(getOperation().getLoc(), error);
      return signalPassFailure();
    }
    Builder builder(&getContext());
    func::FuncOp func = graph->getFunction();
    func->setAttr("dpc.ilp_objective", builder.getF64FloatAttr(roundSignificant(
                                           solution->objective)));
    func->setAttr("dpc.search_space",
                  builder.getF64FloatAttr(problem.getSearchSpaceSize()));
    if (problem.getSearchSpaceSize() <= 1e6) {
      ShardingSolution exhaustive = solveExhaustively(problem, prices);
      func->setAttr(
          "dpc.exhaustive_objective",
          builder.getF64FloatAttr(roundSignificant(exhaustive.objective)));
    }
    writePlanMesh(getOperation(), 1, dataParallel, tensorParallel);
    for (Operation *op : graph->getForwardOps()) {
      std::optional<unsigned> node =
          space.getNode(segmentation.getRepresentative(op));
      if (!node)
        continue;
      op->setAttr(
          DpcDialect::kShardingAttrName,
          getShardingArrayAttr(
              op->getContext(),
              space.getStrategies(*node)[solution->choice[*node]].results));
    }
  }
};
} // namespace
