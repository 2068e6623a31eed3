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

TEST_F(ReshardingCost, DataParallelInnermost) {
  // Data-parallel ranks neighbouring: each pair lies within a node, and a
  // tensor-parallel group of 4 takes one device of each of 4 nodes.
  StageMesh dataInner{2, 2, 4, cluster, /*dataInner=*/true};
  EXPECT_TRUE(dataInner.isDataInner());
  EXPECT_EQ(dataInner.getGroup(kDataAxis).size, 2);
  EXPECT_EQ(dataInner.getGroup(kDataAxis).nodes, 1);
  EXPECT_EQ(dataInner.getGroup(kTensorAxis).size, 4);
  EXPECT_EQ(dataInner.getGroup(kTensorAxis).nodes, 2);
  EXPECT_EQ(dataInner.getGroup(kTensorAxis).devicesPerNode, 2);
  // A stage is the same 8 devices in either order.
  EXPECT_EQ(dataInner.getStageDevices().nodes, mesh.getStageDevices().nodes);
  // A gather over the tensor axis now crosses nodes: slower.
  TensorSharding split = sharding({kTensorAxis, 0});
  TensorSharding whole = TensorSharding::replicated(2);
  EXPECT_GT(getReshardingTime(bytes, split, whole, dataInner),
            getReshardingTime(bytes, split, whole, mesh));
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
  EXPECT_EQ(sharding({kDataAxis | kTensorAxis, 0}).str(), "[(dp, tp), *]");
  EXPECT_EQ(sharding({0}, kTensorAxis).str(), "[*], partial = [tp : sum]");
  TensorSharding loss = TensorSharding::replicated(0);
  loss.setPartial(kDataAxis, ReductionKind::mean);
  loss.setPartial(kTensorAxis, ReductionKind::sum);
  EXPECT_EQ(loss.str(), "[], partial = [dp : mean, tp : sum]");
  loss.clearPartial(kDataAxis);
  EXPECT_EQ(loss, sharding({}, kTensorAxis));
}

} // namespace
