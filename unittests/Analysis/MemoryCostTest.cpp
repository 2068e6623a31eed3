//===- MemoryCostTest.cpp - ZeRO stages and activation memory -------------===//

#include "dpc/Analysis/CostModel/MemoryCost.h"

#include <gtest/gtest.h>

using namespace mlir::dpc;

namespace {

TEST(MemoryCost, ZeroStagesShardMoreAndMore) {
  // 1e9 parameters, 2 + 2 + 12 bytes each (ZeRO's K = 12), 4-way data
  // parallel.
  ModelStateBytes bytes;
  MemoryBreakdown zero0 = getModelStateMemory(1e9, bytes, 0, 4);
  EXPECT_DOUBLE_EQ(zero0.parameters, 2e9);
  EXPECT_DOUBLE_EQ(zero0.gradients, 2e9);
  EXPECT_DOUBLE_EQ(zero0.optimizerState, 12e9);
  EXPECT_DOUBLE_EQ(zero0.getModelState(), 16e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 1, 4).getModelState(),
                   2e9 + 2e9 + 3e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 2, 4).getModelState(),
                   2e9 + 0.5e9 + 3e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 3, 4).getModelState(),
                   16e9 / 4);
  // Without data parallelism there is nothing to shard over.
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 3, 1).getModelState(), 16e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, ModelStateBytes::fp32Adam(), 0, 1)
                       .getModelState(),
                   16e9);
}

TEST(MemoryCost, ComputeCopyIsShardedWithTheParameters) {
  // dpc's mixed precision: the fp32 parameter is the master, its bf16 cast
  // a second copy held all step; fp32 gradients, Adam's two moments.
  ModelStateBytes bytes{4.0, 4.0, 8.0, 2.0};
  MemoryBreakdown zero0 = getModelStateMemory(1e9, bytes, 0, 4);
  EXPECT_DOUBLE_EQ(zero0.parameters, 6e9);
  EXPECT_DOUBLE_EQ(zero0.getModelState(), 18e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 1, 4).parameters, 6e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 3, 4).parameters, 1.5e9);
}

TEST(MemoryCost, DistributedOptimizerShardsTheMasters) {
  // Where the step gathers each compute copy once, ZeRO-1/2 shard the fp32
  // masters of the copies as Megatron-LM's distributed optimizer does:
  // 2 bytes of bf16 copy whole, 4 + 8 of master and moments over 4 ranks.
  ModelStateBytes bytes{4.0, 4.0, 8.0, 2.0, 4.0};
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 1, 4, true).parameters,
                   2e9 + 1e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 2, 4, true).getModelState(),
                   3e9 + 1e9 + 2e9);
  // Not otherwise, nor under ZeRO-0 (nothing sharded) or ZeRO-3 (all of
  // it sharded already).
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 1, 4, false).parameters,
                   6e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 0, 4, true).parameters, 6e9);
  EXPECT_DOUBLE_EQ(getModelStateMemory(1e9, bytes, 3, 4, true).parameters,
                   1.5e9);
  // fp32 training has no copies: its masters are what the step reads.
  EXPECT_DOUBLE_EQ(
      getModelStateMemory(1e9, ModelStateBytes::fp32Adam(), 1, 4, true)
          .parameters,
      4e9);
}

TEST(MemoryCost, RecomputationKeepsOnlyLayerInputs) {
  // 4 layers storing 100 B each, inputs of 10 B, 3 micro-batches in flight.
  EXPECT_DOUBLE_EQ(getActivationMemory(100, 10, 4, 3, false), 1200.0);
  EXPECT_DOUBLE_EQ(getActivationMemory(100, 10, 4, 3, true), 120.0 + 100.0);
  MemoryBreakdown total;
  total.parameters = 1;
  total.activations = 2;
  EXPECT_DOUBLE_EQ(total.getTotal(), 3.0);
}

} // namespace
