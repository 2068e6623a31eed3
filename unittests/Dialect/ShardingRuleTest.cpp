//===- ShardingRuleTest.cpp - Printing and building sharding rules --------===//

#include "dpc/Interfaces/ShardingRule.h"

#include <gtest/gtest.h>

using namespace mlir::dpc;

namespace {

TEST(ShardingRule, PrintsMatmulInFactorForm) {
  ShardingRule rule;
  int64_t i = rule.addFactor(4, FactorKind::Parallel);
  int64_t j = rule.addFactor(8, FactorKind::Parallel);
  int64_t k = rule.addFactor(16, FactorKind::Reduction);
  rule.addOperand({i, k});
  rule.addOperand({k, j});
  rule.addResult({i, j});
  EXPECT_EQ(rule.str(), "([a,c],[c,b])->([a,b]) {a=4, b=8, c=16 reduction}");
  EXPECT_EQ(rule.getNumOperands(), 2u);
  EXPECT_EQ(rule.getFactorKind(k), FactorKind::Reduction);
}

TEST(ShardingRule, NamesManyFactorsUniquely) {
  ShardingRule rule;
  for (int n = 0; n < 28; ++n)
    rule.addFactor(1, FactorKind::NeedReplication);
  rule.addOperand({0, 25, 26, ShardingRule::kNoFactor});
  rule.addResult({27});
  EXPECT_EQ(rule.str().substr(0, 23), "([a,z,f26,_])->([f27]) ");
}

} // namespace
