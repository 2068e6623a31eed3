//===- TestFusedTraffic.cpp - Fused memory traffic, for FileCheck ---------===//

#include "TestPasses.h"
#include "dpc/Analysis/CostModel/FusedTraffic.h"
#include "dpc/Interfaces/CostOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTFUSEDTRAFFIC
#include "TestPasses.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct TestFusedTrafficPass
    : public dpc::impl::TestFusedTrafficBase<TestFusedTrafficPass> {
  using TestFusedTrafficBase::TestFusedTrafficBase;

  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation()->walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      Block &body = func.getBody().front();
      FusedTraffic traffic(
          body, [](Operation *op) { return true; }, [](Value) { return false; },
          fusedAttention);
      for (Operation &op : body) {
        if (isa<CostOpInterface>(&op))
          op.setAttr("dpc.fused_bytes", builder.getI64IntegerAttr(std::llround(
                                            traffic.getBytes(&op))));
        if (op.getNumResults() && traffic.isRecomputed(op.getResult(0)))
          op.setAttr("dpc.recomputed", builder.getUnitAttr());
      }
    });
  }
};
} // namespace
