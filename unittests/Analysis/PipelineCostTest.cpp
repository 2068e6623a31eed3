//===- PipelineCostTest.cpp - Bubbles and in-flight micro-batches ---------===//

#include "dpc/Analysis/CostModel/PipelineCost.h"

#include <gtest/gtest.h>

using namespace mlir::dpc;

namespace {

TEST(PipelineCost, BubbleIsStagesMinusOneOverMicroBatches) {
  EXPECT_DOUBLE_EQ(getBubbleFraction(PipelineSchedule::GPipe, 4, 8), 3.0 / 8);
  EXPECT_DOUBLE_EQ(getBubbleFraction(PipelineSchedule::OneFOneB, 4, 8),
                   3.0 / 8);
  // Interleaving v chunks divides it by v; other schedules ignore chunks.
  EXPECT_DOUBLE_EQ(
      getBubbleFraction(PipelineSchedule::Interleaved1F1B, 4, 8, 2), 3.0 / 16);
  EXPECT_DOUBLE_EQ(getBubbleFraction(PipelineSchedule::OneFOneB, 4, 8, 2),
                   3.0 / 8);
  EXPECT_DOUBLE_EQ(getBubbleFraction(PipelineSchedule::OneFOneB, 1, 8), 0.0);
}

TEST(PipelineCost, StepTimeAddsTheBubble) {
  // 8 micro-batches of 1 + 2 time units, 3 bubble slots.
  EXPECT_DOUBLE_EQ(getPipelineTime(PipelineSchedule::OneFOneB, 4, 8, 1, 2),
                   33.0);
  EXPECT_DOUBLE_EQ(
      getPipelineTime(PipelineSchedule::Interleaved1F1B, 4, 8, 1, 2, 3), 27.0);
}

TEST(PipelineCost, MicroBatchesInFlight) {
  EXPECT_DOUBLE_EQ(getMicroBatchesInFlight(PipelineSchedule::GPipe, 4, 0, 8),
                   8.0);
  EXPECT_DOUBLE_EQ(getMicroBatchesInFlight(PipelineSchedule::OneFOneB, 4, 0, 8),
                   4.0);
  EXPECT_DOUBLE_EQ(getMicroBatchesInFlight(PipelineSchedule::OneFOneB, 4, 3, 8),
                   1.0);
  EXPECT_DOUBLE_EQ(getMicroBatchesInFlight(PipelineSchedule::OneFOneB, 4, 0, 2),
                   2.0);
  // Stage 0 of an interleaved pipeline: p + (p - 1) / v = 4 + 3/2.
  EXPECT_DOUBLE_EQ(
      getMicroBatchesInFlight(PipelineSchedule::Interleaved1F1B, 4, 0, 8, 2),
      5.5);
}

TEST(PipelineCost, NamesRoundTrip) {
  for (PipelineSchedule s :
       {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB,
        PipelineSchedule::Interleaved1F1B})
    EXPECT_EQ(parsePipelineSchedule(stringifyPipelineSchedule(s)), s);
  EXPECT_FALSE(parsePipelineSchedule("zb-v"));
}

} // namespace
