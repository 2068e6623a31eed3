//===- TestBufferPlan.cpp - The CPU buffer plan, for FileCheck ------------===//

#include "TestPasses.h"

#include "dpc/Target/CPU/BufferPlan.h"
#include "dpc/Target/CPU/Fusion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTBUFFERPLAN
#include "TestPasses.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct TestBufferPlanPass
    : public dpc::impl::TestBufferPlanBase<TestBufferPlanPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    llvm::DenseSet<Operation *> fused = getFusedOps(func);
    BufferPlan plan = planBuffers(
        func, [&](Operation *op) { return fused.contains(op); },
        [](Value) { return false; }, /*placementAlignment=*/4);
    Builder builder(&getContext());
    for (Operation &op : func.getBody().front()) {
      if (op.getNumResults() == 0)
        continue;
      SmallVector<Attribute> places;
      for (Value result : op.getResults()) {
        if (fused.contains(&op))
          places.push_back(builder.getStringAttr("fused"));
        else if (auto it = plan.offsets.find(result); it != plan.offsets.end())
          places.push_back(builder.getI64IntegerAttr(it->second));
        else if (auto in = plan.placements.find(result);
                 in != plan.placements.end())
          places.push_back(builder.getStringAttr(
              "at " + std::to_string(plan.offsets.lookup(in->second.first) +
                                     in->second.second)));
        else if (plan.getStorage(result) != result)
          places.push_back(builder.getStringAttr("view"));
        else
          places.push_back(builder.getStringAttr("outside"));
      }
      op.setAttr("dpc.buffer", builder.getArrayAttr(places));
    }
    func->setAttr("dpc.arena_bytes",
                  builder.getI64IntegerAttr(plan.arenaBytes));
    func->setAttr("dpc.unshared_bytes",
                  builder.getI64IntegerAttr(plan.unsharedBytes));
    func->setAttr("dpc.live_bytes", builder.getI64IntegerAttr(plan.liveBytes));
  }
};
} // namespace
