//===- CommunicationCostTest.cpp - Collective times against hand sums -----===//
//
// The test cluster: 4 devices a node, 100 GB/s (b = 1e-11 s/B) and 1 us
// inside a node, 10 GB/s (b = 1e-10 s/B) and 10 us between nodes.
//
//===----------------------------------------------------------------------===//

#include "dpc/Analysis/CostModel/CommunicationCost.h"
#include "TestCluster.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

constexpr double kGB = 1e9;
// Relative tolerance: the sums are exact up to rounding.
constexpr double kTol = 1e-12;

double time(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
            const Mesh &mesh, ArrayRef<unsigned> axes) {
  return getCollectiveTime(kind, algorithm, bytes, mesh, axes,
                           getTestCluster());
}

TEST(CommunicationCost, RingInsideANode) {
  Mesh mesh({4});
  // 2 (n-1) a + 2 (n-1)/n S b = 6 us + 2 * 0.75 * 1e9 * 1e-11.
  EXPECT_NEAR(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, kGB,
                   mesh, {0}),
              6e-6 + 0.015, kTol);
  EXPECT_NEAR(time(CollectiveKind::ReduceScatter, CollectiveAlgorithm::Ring,
                   kGB, mesh, {0}),
              3e-6 + 0.0075, kTol);
  EXPECT_NEAR(time(CollectiveKind::AllGather, CollectiveAlgorithm::Ring, kGB,
                   mesh, {0}),
              3e-6 + 0.0075, kTol);
  // (n-1)/2 S per link.
  EXPECT_NEAR(
      time(CollectiveKind::AllToAll, CollectiveAlgorithm::Ring, kGB, mesh, {0}),
      3e-6 + 0.015, kTol);
  EXPECT_NEAR(time(CollectiveKind::Broadcast, CollectiveAlgorithm::Ring, kGB,
                   mesh, {0}),
              3e-6 + 0.01, kTol);
  EXPECT_NEAR(
      time(CollectiveKind::SendRecv, CollectiveAlgorithm::Ring, kGB, mesh, {0}),
      1e-6 + 0.01, kTol);
}

TEST(CommunicationCost, TreeAndDirect) {
  Mesh mesh({4});
  // log2(4) = 2 latency terms per phase.
  EXPECT_NEAR(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Tree, kGB,
                   mesh, {0}),
              4e-6 + 0.015, kTol);
  EXPECT_NEAR(time(CollectiveKind::Broadcast, CollectiveAlgorithm::Tree, kGB,
                   mesh, {0}),
              2e-6 + 0.01, kTol);
  // Bruck: 2 rounds of S/2.
  EXPECT_NEAR(
      time(CollectiveKind::AllToAll, CollectiveAlgorithm::Tree, kGB, mesh, {0}),
      2e-6 + 0.01, kTol);
  EXPECT_NEAR(time(CollectiveKind::AllToAll, CollectiveAlgorithm::Direct, kGB,
                   mesh, {0}),
              3e-6 + 0.0075, kTol);
  // Scatter + all-gather.
  EXPECT_NEAR(time(CollectiveKind::Broadcast, CollectiveAlgorithm::Direct, kGB,
                   mesh, {0}),
              6e-6 + 0.015, kTol);
}

TEST(CommunicationCost, FlatAlgorithmsCrossingNodesUseTheSlowLink) {
  Mesh mesh({2, 4});
  // 8 devices over 2 nodes, 4 NICs a node carry the ring: 40 GB/s, and 10 us
  // a step: 2 * 7 * 10 us + 2 * 7/8 * 1e9 / 40e9.
  EXPECT_NEAR(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, kGB,
                   mesh, {0, 1}),
              1.4e-4 + 0.04375, kTol);
  // Direct all-to-all: half of each device's bytes leave the node on its
  // own NIC (0.05 s); 3/8 cross the switch meanwhile.
  EXPECT_NEAR(time(CollectiveKind::AllToAll, CollectiveAlgorithm::Direct, kGB,
                   mesh, {0, 1}),
              7e-5 + 0.05, kTol);
  // The outer axis alone: 2 devices on 2 nodes.
  EXPECT_NEAR(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, kGB,
                   mesh, {0}),
              2e-5 + 0.1, kTol);
  EXPECT_NEAR(
      time(CollectiveKind::SendRecv, CollectiveAlgorithm::Ring, kGB, mesh, {0}),
      1e-5 + 0.1, kTol);
}

TEST(CommunicationCost, HierarchicalSplitsTheWorkByLink) {
  Mesh mesh({2, 4});
  double rsInside = 3e-6 + 0.0075; // ring over 4, 100 GB/s.
  // All-reduce of the owned quarter (2.5e8 B) over 2 nodes.
  double arAcross = 2e-5 + 2 * 0.5 * 2.5e8 * 1e-10;
  EXPECT_NEAR(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical,
                   kGB, mesh, {0, 1}),
              rsInside + arAcross + rsInside, kTol);
  EXPECT_NEAR(time(CollectiveKind::ReduceScatter,
                   CollectiveAlgorithm::Hierarchical, kGB, mesh, {0, 1}),
              rsInside + 1e-5 + 0.5 * 2.5e8 * 1e-10, kTol);
  EXPECT_NEAR(time(CollectiveKind::AllGather, CollectiveAlgorithm::Hierarchical,
                   kGB, mesh, {0, 1}),
              rsInside + 1e-5 + 0.5 * 2.5e8 * 1e-10, kTol);
  EXPECT_NEAR(time(CollectiveKind::Broadcast, CollectiveAlgorithm::Hierarchical,
                   kGB, mesh, {0, 1}),
              (1e-5 + 0.1) + (3e-6 + 0.01), kTol);
  EXPECT_NEAR(time(CollectiveKind::AllToAll, CollectiveAlgorithm::Hierarchical,
                   kGB, mesh, {0, 1}),
              (1e-5 + 0.05) + (3e-6 + 0.0075), kTol);
  // Inside one node it is the ring.
  EXPECT_NEAR(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Hierarchical,
                   kGB, mesh, {1}),
              6e-6 + 0.015, kTol);
  CollectiveChoice best = getBestCollective(CollectiveKind::AllReduce, kGB,
                                            mesh, {0, 1}, getTestCluster());
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::Hierarchical);
}

TEST(CommunicationCost, LatencyPicksTheTreeForSmallMessages) {
  // 16 nodes of 4: a 64-byte all-reduce is all latency.
  Mesh mesh({16, 4});
  CollectiveChoice best = getBestCollective(CollectiveKind::AllReduce, 64, mesh,
                                            {0, 1}, getTestCluster());
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::Tree);
  // 2 log2(64) latency terms of 10 us, plus the bytes at 4 NICs' 40 GB/s.
  EXPECT_NEAR(best.time, 1.2e-4 + 2 * 63.0 / 64 * 64 / 40e9, kTol);
}

TEST(CommunicationCost, EfficiencyScalesOnlyTheBandwidthTerm) {
  Cluster cluster = getTestCluster();
  cluster.efficiency.communication = 0.5;
  EXPECT_NEAR(getCollectiveTime(CollectiveKind::AllReduce,
                                CollectiveAlgorithm::Ring, kGB, Mesh({4}), {0},
                                cluster),
              6e-6 + 0.03, kTol);
}

TEST(CommunicationCost, OneDeviceOrNoBytesCostNothing) {
  EXPECT_EQ(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, kGB,
                 Mesh({1, 4}), {0}),
            0.0);
  EXPECT_EQ(time(CollectiveKind::AllGather, CollectiveAlgorithm::Tree, 0,
                 Mesh({4}), {0}),
            0.0);
  EXPECT_EQ(time(CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, kGB,
                 Mesh({4}), {}),
            0.0);
}

} // namespace
