//===- TestCostModel.cpp - Writes cost-model predictions onto ops ---------===//
//
// The `-test-dpc-cost-model` pass: the roofline time of every op on one
// device of a cluster, and per function the gradient all-reduce over a
// mesh, as attributes for FileCheck.
//
//===----------------------------------------------------------------------===//

#include "dpc/Analysis/CostModel/Cluster.h"
#include "dpc/Analysis/CostModel/CommunicationCost.h"
#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "TestPasses.h"
#include "dpc/Interfaces/CostOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTCOSTMODEL
#include "TestPasses.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
/// `value` rounded to four significant digits, so that printed attributes
/// are short and stable.
double roundSignificant(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return std::strtod(text, nullptr);
}

struct TestCostModelPass
    : public dpc::impl::TestCostModelBase<TestCostModelPass> {
  using TestCostModelBase::TestCostModelBase;

  LogicalResult initialize(MLIRContext *context) override {
    std::string error;
    FailureOr<Mesh> parsedMesh = Mesh::parse(mesh, error);
    FailureOr<Cluster> parsedCluster = failure();
    if (succeeded(parsedMesh))
      parsedCluster = resolveCluster(cluster, error);
    if (failed(parsedMesh) || failed(parsedCluster))
      return emitError(UnknownLoc::get(context), error);
    meshModel = *parsedMesh;
    clusterModel = *parsedCluster;
    return success();
  }

  void runOnOperation() override {
    const Mesh &parsedMesh = *meshModel;
    const Cluster &parsedCluster = *clusterModel;
    Builder builder(&getContext());
    auto micros = [&](double seconds) {
      return builder.getF64FloatAttr(roundSignificant(seconds * 1e6));
    };
    SmallVector<unsigned> allAxes;
    for (unsigned axis = 0; axis < parsedMesh.getRank(); ++axis)
      allAxes.push_back(axis);

    getOperation()->walk([&](func::FuncOp func) {
      double total = 0.0;
      func.walk([&](CostOpInterface op) {
        ComputeEstimate estimate = getOpComputeEstimate(op, parsedCluster);
        total += estimate.time;
        // Integers print exactly; the counts are whole numbers.
        op->setAttr("dpc.flops",
                    builder.getI64IntegerAttr(std::llround(estimate.flops)));
        op->setAttr("dpc.bytes",
                    builder.getI64IntegerAttr(std::llround(estimate.bytes)));
        op->setAttr("dpc.time_us", micros(estimate.time));
        op->setAttr("dpc.bound",
                    builder.getStringAttr(estimate.computeBound ? "compute"
                                                                : "memory"));
      });
      double paramBytes = 0.0;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (func.getArgAttr(i, "dpc.param"))
          paramBytes += getSizeInBytes(func.getArgument(i).getType());
      CollectiveChoice allReduce =
          getBestCollective(CollectiveKind::AllReduce, paramBytes, parsedMesh,
                            allAxes, parsedCluster);
      func->setAttr("dpc.cluster", builder.getStringAttr(parsedCluster.name));
      func->setAttr("dpc.mesh", builder.getStringAttr(parsedMesh.str()));
      func->setAttr("dpc.compute_time_us", micros(total));
      func->setAttr("dpc.grad_all_reduce",
                    builder.getStringAttr(
                        allReduce.time > 0
                            ? stringifyCollectiveAlgorithm(allReduce.algorithm)
                            : "none"));
      func->setAttr("dpc.grad_all_reduce_us", micros(allReduce.time));
    });
  }

  /// Parsed from the options once, in initialize().
  std::optional<Mesh> meshModel;
  std::optional<Cluster> clusterModel;
};
} // namespace
