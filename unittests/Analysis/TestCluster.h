//===- TestCluster.h - A cluster with round numbers for tests ---*- C++ -*-===//

#ifndef DPC_UNITTESTS_ANALYSIS_TESTCLUSTER_H
#define DPC_UNITTESTS_ANALYSIS_TESTCLUSTER_H

#include "dpc/Analysis/CostModel/Cluster.h"

namespace mlir::dpc {

/// 4 devices a node; 100 GB/s and 1 us inside a node, 10 GB/s and 10 us
/// between nodes; peaks of 1 PFLOP/s (bf16) and 100 TFLOP/s (f32); memory
/// at 1 TB/s; every efficiency 1, so times are easy to compute by hand.
inline Cluster getTestCluster() {
  Cluster cluster;
  cluster.name = "test";
  cluster.devicesPerNode = 4;
  cluster.device.peakFlops[static_cast<unsigned>(NumericType::F64)] = 50e12;
  cluster.device.peakFlops[static_cast<unsigned>(NumericType::F32)] = 100e12;
  cluster.device.peakFlops[static_cast<unsigned>(NumericType::BF16)] = 1e15;
  cluster.device.peakFlops[static_cast<unsigned>(NumericType::F16)] = 1e15;
  cluster.device.memoryCapacity = 80e9;
  cluster.device.memoryBandwidth = 1e12;
  cluster.intraNode = {100e9, 1e-6};
  cluster.interNode = {10e9, 10e-6};
  return cluster;
}

} // namespace mlir::dpc

#endif // DPC_UNITTESTS_ANALYSIS_TESTCLUSTER_H
