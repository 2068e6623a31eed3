//===- TestShardingRules.cpp - Writes sharding rules onto ops -------------===//

#include "dpc/Interfaces/ShardableOpInterface.h"
#include "TestPasses.h"

#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_TESTSHARDINGRULES
#include "TestPasses.h.inc"
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
