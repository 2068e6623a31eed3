//===- StagePartitionTest.cpp - Pipeline stages against exhaustive search -===//
//
// partitionStages must find the least slowest-stage time that trying every
// split finds, and fail exactly when no split fits, on random chains with
// uneven sends (an activation that is costly to send between two segments
// must not stop a stage from ending past it) and stage-dependent memory
// (earlier 1F1B stages hold more micro-batches).
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Planning/StagePartition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// The best slowest-stage time over every split, or infinity.
double bruteForce(ArrayRef<double> times, ArrayRef<double> sends,
                  unsigned stages, StageFitsFn fits) {
  unsigned n = times.size();
  double best = std::numeric_limits<double>::infinity();
  SmallVector<unsigned> ends;
  std::function<void(unsigned, unsigned)> extend = [&](unsigned first,
                                                       unsigned stage) {
    if (stage == stages) {
      if (first == n)
        best = std::min(best, getSlowestStageTime(times, sends, ends));
      return;
    }
    for (unsigned end = first + 1; end <= n; ++end) {
      if (!fits(first, end, stage))
        continue;
      ends.push_back(end);
      extend(end, stage + 1);
      ends.pop_back();
    }
  };
  extend(0, 0);
  return best;
}

/// Random chains: with `evenSends`, every activation costs the same to
/// send (the partition's fast path); otherwise some cost far more.
void checkAgainstExhaustiveSearch(bool evenSends) {
  std::mt19937 random(evenSends ? 11 : 7);
  std::uniform_int_distribution<unsigned> length(1, 9), stageCount(1, 4);
  std::uniform_real_distribution<double> time(0.1, 5.0), memory(0.0, 3.0);
  std::bernoulli_distribution costlySend(0.3), tight(0.5);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 500; ++trial) {
    unsigned n = length(random), p = stageCount(random);
    if (p > n)
      continue;
    SmallVector<double> times, sends, memories;
    for (unsigned i = 0; i < n; ++i) {
      times.push_back(time(random));
      double send = evenSends            ? 0.7
                    : costlySend(random) ? 10 * time(random)
                                         : 0.1 * time(random);
      sends.push_back(i + 1 < n ? send : 0.0);
      memories.push_back(memory(random));
    }
    // Stage k holds (p - k) micro-batches of its segments' memory.
    double limit = tight(random) ? 4.0 : 1e9;
    auto fits = [&](unsigned first, unsigned end, unsigned stage) {
      double used = 0;
      for (unsigned i = first; i < end; ++i)
        used += memories[i];
      return used * (p - stage) <= limit;
    };
    double expected = bruteForce(times, sends, p, fits);
    std::optional<SmallVector<unsigned>> ends =
        partitionStages(times, sends, p, fits);
    ASSERT_EQ(ends.has_value(), std::isfinite(expected)) << "trial " << trial;
    if (!ends) {
      ++infeasible;
      continue;
    }
    ++feasible;
    ASSERT_EQ(ends->size(), p);
    EXPECT_EQ(ends->back(), n);
    unsigned first = 0;
    for (auto [stage, end] : llvm::enumerate(*ends)) {
      EXPECT_LT(first, end);
      EXPECT_TRUE(fits(first, end, stage));
      first = end;
    }
    EXPECT_NEAR(getSlowestStageTime(times, sends, *ends), expected,
                1e-8 * expected)
        << "trial " << trial;
  }
  // Both outcomes were exercised.
  EXPECT_GT(feasible, 100);
  EXPECT_GT(infeasible, 10);
}

TEST(StagePartition, MatchesExhaustiveSearchWithUnevenSends) {
  checkAgainstExhaustiveSearch(/*evenSends=*/false);
}

TEST(StagePartition, MatchesExhaustiveSearchWithEvenSends) {
  checkAgainstExhaustiveSearch(/*evenSends=*/true);
}

// A costly send after segment 1 must not stop the first stage at segment 0:
// [0, 3) then [3, 5) takes 3, [0, 1) then [1, 5) takes 4.
TEST(StagePartition, EndsPastACostlySend) {
  SmallVector<double> times = {1, 1, 1, 1, 1}, sends = {0, 10, 0, 0, 0};
  auto fits = [](unsigned, unsigned, unsigned) { return true; };
  std::optional<SmallVector<unsigned>> ends =
      partitionStages(times, sends, 2, fits);
  ASSERT_TRUE(ends);
  EXPECT_EQ(*ends, (SmallVector<unsigned>{3, 5}));
}

TEST(StagePartition, MoreStagesThanSegments) {
  SmallVector<double> times = {1, 2}, sends = {0, 0};
  auto fits = [](unsigned, unsigned, unsigned) { return true; };
  EXPECT_FALSE(partitionStages(times, sends, 3, fits));
}

} // namespace
