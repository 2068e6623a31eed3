//===- TestOpCost.cpp - Writes cost-interface numbers onto ops ------------===//

#include "dpc/Interfaces/CostOpInterface.h"
#include "TestPasses.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTOPCOST
#include "TestPasses.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct TestOpCostPass : public dpc::impl::TestOpCostBase<TestOpCostPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation()->walk([&](CostOpInterface op) {
      // Integers print exactly; the counts are whole numbers.
      op->setAttr("dpc.flops",
                  builder.getI64IntegerAttr(std::llround(op.getFlops())));
      op->setAttr("dpc.bytes", builder.getI64IntegerAttr(
                                   std::llround(op.getBytesAccessed())));
    });
  }
};
} // namespace
