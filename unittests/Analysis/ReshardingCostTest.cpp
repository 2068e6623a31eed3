//===- ReshardingCostTest.cpp - Collectives between two shardings ---------===//

#include "dpc/Analysis/CostModel/ReshardingCost.h"
#include "TestCluster.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

TensorSharding sharding(SmallVector<unsigned, 4> dims, unsigned partial = 0) {
  return {dims, partial};
}

double best(CollectiveKind kind, double bytes, const GroupPlacement &group) {
  return getBestCollective(kind, bytes, group, getTestCluster()).time;
}

class ReshardingCost : public ::testing::Test {
protected:
  Cluster cluster = getTestCluster();
  // 2 stages x 2 data-parallel x 4 tensor-parallel: a tensor-parallel
  // group is one node, a data-parallel group spans two.
  StageMesh mesh{2, 2, 4, cluster};
  double bytes = 64e6;
};

TEST_F(ReshardingCost, Placement) {
  EXPECT_EQ(mesh.getGroup(kTensorAxis).size, 4);
  EXPECT_EQ(mesh.getGroup(kTensorAxis).nodes, 1);
  EXPECT_EQ(mesh.getGroup(kDataAxis).size, 2);
  EXPECT_EQ(mesh.getGroup(kDataAxis).nodes, 2);
}

TEST_F(ReshardingCost, UnchangedAndSlicesAreFree) {
  TensorSharding split = sharding({kDataAxis, kTensorAxis});
  EXPECT_EQ(getReshardingTime(bytes, split, split, mesh), 0.0);
  EXPECT_EQ(getReshardingTime(bytes, TensorSharding::replicated(2), split,
                              mesh),
            0.0);
}

TEST_F(ReshardingCost, PartialSumsReduce) {
  TensorSharding partial = sharding({kDataAxis, 0}, kTensorAxis);
  // The tensor-parallel group holds half of the tensor (split over dp).
  EXPECT_DOUBLE_EQ(
      getReshardingTime(bytes, partial, sharding({kDataAxis, 0}), mesh),
      best(CollectiveKind::AllReduce, bytes / 2, mesh.getGroup(kTensorAxis)));
  EXPECT_DOUBLE_EQ(getReshardingTime(bytes, partial,
                                     sharding({kDataAxis, kTensorAxis}), mesh),
                   best(CollectiveKind::ReduceScatter, bytes / 2,
                        mesh.getGroup(kTensorAxis)));
}

TEST_F(ReshardingCost, GatherAndAllToAll) {
  EXPECT_DOUBLE_EQ(getReshardingTime(bytes, sharding({kTensorAxis, 0}),
                                     TensorSharding::replicated(2), mesh),
                   best(CollectiveKind::AllGather, bytes,
                        mesh.getGroup(kTensorAxis)));
  EXPECT_DOUBLE_EQ(getReshardingTime(bytes, sharding({kTensorAxis, 0}),
                                     sharding({0, kTensorAxis}), mesh),
                   best(CollectiveKind::AllToAll, bytes / 4,
                        mesh.getGroup(kTensorAxis)));
  // Both axes change: gather the tensor axis (to half the tensor), then
  // the data axis (to all of it).
  TensorSharding from = sharding({kDataAxis, kTensorAxis});
  EXPECT_DOUBLE_EQ(
      getReshardingTime(bytes, from, TensorSharding::replicated(2), mesh),
      best(CollectiveKind::AllGather, bytes / 2, mesh.getGroup(kTensorAxis)) +
          best(CollectiveKind::AllGather, bytes, mesh.getGroup(kDataAxis)));
}

TEST_F(ReshardingCost, Printing) {
  EXPECT_EQ(sharding({kDataAxis, 0, kTensorAxis}).str(), "[dp, *, tp]");
  EXPECT_EQ(sharding({kDataAxis | kTensorAxis, 0}).str(), "[dp+tp, *]");
  EXPECT_EQ(sharding({0}, kTensorAxis).str(), "[*] partial(tp)");
}

// Every sharding of a rank-2 tensor that uses each axis at most once
// parses back from its text.
TEST_F(ReshardingCost, ParsingInvertsPrinting) {
  const unsigned both = kDataAxis | kTensorAxis;
  int valid = 0;
  for (unsigned d0 = 0; d0 <= both; ++d0)
    for (unsigned d1 = 0; d1 <= both; ++d1)
      for (unsigned partial = 0; partial <= both; ++partial) {
        if ((d0 & d1) || (d0 & partial) || (d1 & partial))
          continue;
        TensorSharding s = sharding({d0, d1}, partial);
        std::string error;
        FailureOr<TensorSharding> parsed =
            TensorSharding::parse(s.str(), 2, error);
        ASSERT_TRUE(succeeded(parsed)) << s.str() << ": " << error;
        EXPECT_EQ(*parsed, s) << s.str();
        ++valid;
      }
  // Each axis goes to one of dims 0, 1, partial, or nowhere: 4 x 4.
  EXPECT_EQ(valid, 16);
  std::string error;
  FailureOr<TensorSharding> spaced =
      TensorSharding::parse(" [ tp+dp ,* ] partial( * )", 2, error);
  EXPECT_TRUE(failed(spaced));
  spaced = TensorSharding::parse(" [ tp+dp ,* ] ", 2, error);
  ASSERT_TRUE(succeeded(spaced)) << error;
  EXPECT_EQ(*spaced, sharding({both, 0}));
  EXPECT_TRUE(succeeded(TensorSharding::parse("[]", 0, error)));
}

TEST_F(ReshardingCost, ParsingNamesTheProblem) {
  auto errorOf = [](StringRef text, unsigned rank) {
    std::string error;
    EXPECT_TRUE(failed(TensorSharding::parse(text, rank, error))) << text.str();
    return error;
  };
  EXPECT_NE(errorOf("dp, *", 2).find("does not start with '['"),
            std::string::npos);
  EXPECT_NE(errorOf("[dp, *", 2).find("no closing ']'"), std::string::npos);
  EXPECT_NE(errorOf("[dp, x]", 2).find("'x' is not a mesh axis"),
            std::string::npos);
  EXPECT_NE(errorOf("[dp, *]", 3).find("2 dimensions, the tensor 3"),
            std::string::npos);
  EXPECT_NE(errorOf("[tp, tp]", 2).find("axis tp is used more than once"),
            std::string::npos);
  EXPECT_NE(errorOf("[dp, *] partial(dp)", 2).find("axis dp"),
            std::string::npos);
  EXPECT_NE(errorOf("[dp, *] partial tp", 2).find("in parentheses"),
            std::string::npos);
  EXPECT_NE(errorOf("[dp, *] partial(*)", 2).find("names no axis"),
            std::string::npos);
  EXPECT_NE(errorOf("[dp, *] extra", 2).find("unexpected 'extra'"),
            std::string::npos);
}

} // namespace
