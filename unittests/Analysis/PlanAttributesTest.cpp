//===- PlanAttributesTest.cpp - The planner's shardings as attributes -----===//

#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/InitAllDialects.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

class PlanAttributes : public ::testing::Test {
protected:
  PlanAttributes() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
};

// Every sharding of a rank-2 tensor over dp and tp, with every kind of
// pending reduction, comes back from its attribute unchanged, and the
// attribute prints as the planner's text.
TEST_F(PlanAttributes, ConversionInvertsItself) {
  const unsigned both = kDataAxis | kTensorAxis;
  int valid = 0;
  for (unsigned d0 = 0; d0 <= both; ++d0)
    for (unsigned d1 = 0; d1 <= both; ++d1)
      for (unsigned partial = 0; partial <= both; ++partial)
        for (ReductionKind kind : {ReductionKind::sum, ReductionKind::mean,
                                   ReductionKind::max, ReductionKind::min}) {
          if ((d0 & d1) || (d0 & partial) || (d1 & partial))
            continue;
          TensorSharding sharding{{d0, d1}, 0};
          for (StageAxis axis : {kDataAxis, kTensorAxis})
            if (partial & axis)
              sharding.setPartial(axis, kind);
          ShardingAttr attr = getShardingAttr(&context, sharding);
          std::string error;
          FailureOr<TensorSharding> back = getTensorSharding(attr, error);
          ASSERT_TRUE(succeeded(back)) << sharding.str() << ": " << error;
          EXPECT_EQ(*back, sharding) << sharding.str();
          std::string printed;
          llvm::raw_string_ostream os(printed);
          os << attr;
          EXPECT_EQ(printed, "#dpc.sharding<@plan, " + sharding.str() + ">");
          ++valid;
        }
  // Each axis goes to one of dims 0, 1, partial, or nowhere: 4 x 4, and
  // the 7 with a partial axis come in four kinds.
  EXPECT_EQ(valid, 9 * 4 + 7 * 4);
}

TEST_F(PlanAttributes, AxesThePlannerCannotPlace) {
  std::string error;
  auto onMesh = [&](StringRef mesh, SmallVector<StringRef> axes) {
    return ShardingAttr::get(&context, mesh, {axes}, {});
  };
  EXPECT_TRUE(failed(getTensorSharding(onMesh("plan", {"x"}), error)));
  EXPECT_NE(error.find("'x' is not one of them"), std::string::npos) << error;
  EXPECT_TRUE(failed(getTensorSharding(onMesh("other", {"dp"}), error)));
  EXPECT_NE(error.find("not @other"), std::string::npos) << error;
}

// A dimension split by both axes reads back in its order: data-parallel
// major, or minor (ZeRO's shard of a tensor-parallel weight); the order
// matters only where one dimension has both.
TEST_F(PlanAttributes, BothAxesOnOneDimensionKeepTheirOrder) {
  std::string error;
  for (auto [axes, minor] :
       {std::pair(SmallVector<StringRef>{"dp", "tp"}, false),
        std::pair(SmallVector<StringRef>{"tp", "dp"}, true)}) {
    ShardingAttr attr = ShardingAttr::get(&context, "plan", {axes, {}}, {});
    FailureOr<TensorSharding> sharding = getTensorSharding(attr, error);
    ASSERT_TRUE(succeeded(sharding)) << error;
    EXPECT_EQ(sharding->isDataMinor(), minor);
    EXPECT_EQ(getShardingAttr(&context, *sharding), attr);
  }
  TensorSharding major{{kDataAxis | kTensorAxis, 0}, 0};
  TensorSharding minor = major;
  minor.dataMinor = true;
  EXPECT_NE(major, minor);
  EXPECT_EQ(minor.str(), "[(tp, dp), *]");
  TensorSharding apart{{kTensorAxis, kDataAxis}, 0};
  TensorSharding apartMinor = apart;
  apartMinor.dataMinor = true;
  EXPECT_EQ(apart, apartMinor);
}

} // namespace
