//===- TestShardingRules.cpp - Writes sharding rules onto ops -------------===//

#include "dpc/Interfaces/ShardableOpInterface.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTSHARDINGRULES
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct TestShardingRulesPass
    : public dpc::impl::TestShardingRulesBase<TestShardingRulesPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation()->walk([&](ShardableOpInterface op) {
      op->setAttr("dpc.sharding_rule",
                  builder.getStringAttr(op.getShardingRule().str()));
    });
  }
};
} // namespace
