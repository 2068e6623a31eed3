//===- ComputeCostTest.cpp - Roofline and MFU against hand sums -----------===//

#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "TestCluster.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

TEST(ComputeCost, RooflineTakesTheSlowerOfArithmeticAndTraffic) {
  Cluster cluster = getTestCluster();
  cluster.efficiency.compute = 0.5;
  cluster.efficiency.memory = 0.8;
  // 1e12 FLOP at 0.5 PFLOP/s = 2 ms; 1e9 B at 0.8 TB/s = 1.25 ms.
  ComputeEstimate gemm =
      getRooflineEstimate(1e12, 1e9, NumericType::BF16, cluster);
  EXPECT_DOUBLE_EQ(gemm.time, 2e-3);
  EXPECT_TRUE(gemm.computeBound);
  // The same work in f32 runs at 50 TFLOP/s: 20 ms.
  EXPECT_DOUBLE_EQ(
      getRooflineEstimate(1e12, 1e9, NumericType::F32, cluster).time, 2e-2);
  // An elementwise op: 1e9 FLOP (1 us), 8e9 B (10 ms).
  ComputeEstimate add =
      getRooflineEstimate(1e9, 8e9, NumericType::BF16, cluster);
  EXPECT_DOUBLE_EQ(add.time, 1e-2);
  EXPECT_FALSE(add.computeBound);
}

TEST(ComputeCost, ElementTypePicksThePeak) {
  MLIRContext context;
  Builder b(&context);
  EXPECT_EQ(getNumericTypeOf(RankedTensorType::get({2}, b.getBF16Type())),
            NumericType::BF16);
  EXPECT_EQ(getNumericTypeOf(b.getF64Type()), NumericType::F64);
  EXPECT_EQ(getNumericTypeOf(b.getF16Type()), NumericType::F16);
  EXPECT_EQ(getNumericTypeOf(RankedTensorType::get({2}, b.getI32Type())),
            NumericType::F32);
}

TEST(ComputeCost, GptModelFlopsFollowMegatron) {
  // B=1, s=6, L=1, h=1, V=12: 72 * 6 * (1 + 1 + 1).
  EXPECT_DOUBLE_EQ(getGptModelFlops(1, 6, 1, 1, 12), 1296.0);
  // The Megatron-LM 1.7B row: 192 sequences of 4096, 24 layers, h=2048,
  // V=131072.
  double flops = getGptModelFlops(192, 4096, 24, 2048, 131072);
  double expected = 72.0 * 192 * 4096 * 24 * 2048.0 * 2048 *
                    (1 + 4096.0 / (6 * 2048) + 131072.0 / (12 * 24 * 2048));
  EXPECT_DOUBLE_EQ(flops, expected);
}

TEST(ComputeCost, MfuIsAchievedOverPeak) {
  // 1 PFLOP in 1 s over 10 devices: 100 TFLOP/s each, 10% of 1 PFLOP/s.
  EXPECT_DOUBLE_EQ(getFlopsPerDevice(1e15, 1.0, 10), 1e14);
  EXPECT_DOUBLE_EQ(getMfu(1e15, 1.0, 10, 1e15), 0.1);
}

} // namespace
