//===- ShardingProblemTest.cpp - The ILP against exhaustive search --------===//
//
// The integer program must find the same minimum as trying every choice,
// on random problems with every structure the planner builds: nodes with
// one or several strategies, weights from repeated layers, self-loops and
// parallel edges (a repeated layer's boundary), and memory prices.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Planning/ShardingProblem.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace mlir::dpc;

namespace {

ShardingProblem makeRandomProblem(std::mt19937 &random) {
  std::uniform_int_distribution<unsigned> nodeCount(2, 7), strategyCount(1, 4);
  std::uniform_real_distribution<double> cost(0.0, 10.0), weight(1.0, 4.0);
  std::bernoulli_distribution sparse(0.4), heavy(0.3);
  ShardingProblem problem;
  unsigned nodes = nodeCount(random);
  for (unsigned v = 0; v < nodes; ++v) {
    SmallVector<double> time;
    SmallVector<StrategyMemory> memory;
    for (unsigned s = strategyCount(random); s > 0; --s) {
      time.push_back(cost(random));
      memory.push_back({cost(random) * 1e3, cost(random) * 1e3});
    }
    problem.addNode(time, memory, heavy(random) ? weight(random) : 1.0);
  }
  std::uniform_int_distribution<unsigned> end(0, nodes - 1);
  std::uniform_int_distribution<unsigned> edgeCount(1, 2 * nodes);
  for (unsigned e = edgeCount(random); e > 0; --e) {
    unsigned from = end(random), to = end(random);
    SmallVector<double> matrix;
    for (unsigned i = 0; i < problem.nodes[from].getNumStrategies(); ++i)
      for (unsigned j = 0; j < problem.nodes[to].getNumStrategies(); ++j)
        matrix.push_back(sparse(random) ? 0.0 : cost(random));
    problem.addEdge(from, to, matrix, heavy(random) ? weight(random) : 1.0);
  }
  return problem;
}

TEST(ShardingProblem, IlpMatchesExhaustiveSearch) {
  std::mt19937 random(20261202);
  for (int trial = 0; trial < 200; ++trial) {
    ShardingProblem problem = makeRandomProblem(random);
    for (MemoryPrices prices : {MemoryPrices{0.0, 0.0}, MemoryPrices{1e-3, 0.0},
                                MemoryPrices{2e-4, 5e-4}}) {
      std::string error;
      FailureOr<ShardingSolution> ilp =
          solveWithIlp(problem, prices, 10.0, error);
      ASSERT_TRUE(succeeded(ilp)) << error;
      ShardingSolution exhaustive = solveExhaustively(problem, prices);
      EXPECT_TRUE(ilp->optimal);
      EXPECT_NEAR(ilp->objective, exhaustive.objective,
                  1e-9 * std::max(1.0, exhaustive.objective))
          << "trial " << trial;
      // The reported objective is the objective of the reported choice.
      EXPECT_DOUBLE_EQ(ilp->objective, problem.getObjective(ilp->choice, prices));
    }
  }
}

TEST(ShardingProblem, ObjectiveCountsWeightsAndPrices) {
  ShardingProblem problem;
  unsigned a = problem.addNode({1.0, 2.0}, {{10.0, 0.0}, {0.0, 5.0}}, 3.0);
  unsigned b = problem.addNode({4.0});
  problem.addEdge(a, b, {0.5, 0.25}, 2.0);
  // 3 * (1 + 10 * 0.1) + 4 + 2 * 0.5.
  EXPECT_DOUBLE_EQ(problem.getObjective({0, 0}, {0.1, 0.0}), 11.0);
  // 3 * (2 + 5 * 0.2) + 4 + 2 * 0.25.
  EXPECT_DOUBLE_EQ(problem.getObjective({1, 0}, {0.0, 0.2}), 13.5);
  StrategyMemory memory = problem.getMemory({0, 0});
  EXPECT_DOUBLE_EQ(memory.modelState, 30.0);
  EXPECT_DOUBLE_EQ(memory.activations, 0.0);
  EXPECT_DOUBLE_EQ(problem.getSearchSpaceSize(), 2.0);
}

TEST(ShardingProblem, SelfLoopsPriceTheDiagonal) {
  // A repeated layer's boundary: the node's output feeds its own input,
  // so only equal strategies at both ends are possible.
  ShardingProblem problem;
  unsigned v = problem.addNode({0.0, 1.0});
  problem.addEdge(v, v, {5.0, 0.0, 0.0, 0.0});
  std::string error;
  FailureOr<ShardingSolution> ilp = solveWithIlp(problem, {}, 10.0, error);
  ASSERT_TRUE(succeeded(ilp));
  EXPECT_EQ(ilp->choice[0], 1u);
  EXPECT_DOUBLE_EQ(ilp->objective, 1.0);
}

} // namespace
