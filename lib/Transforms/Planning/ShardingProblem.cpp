//===- ShardingProblem.cpp - Objective and exhaustive search --------------===//

#include "dpc/Transforms/Planning/ShardingProblem.h"

#include <cassert>
#include <limits>

using namespace mlir;
using namespace mlir::dpc;

unsigned ShardingProblem::addNode(SmallVector<double> time,
                                  SmallVector<StrategyMemory> memory,
                                  double weight) {
  assert(!time.empty() && "a node needs a strategy");
  assert((memory.empty() || memory.size() == time.size()) &&
         "one memory entry per strategy");
  nodes.push_back({std::move(time), std::move(memory), weight});
  return nodes.size() - 1;
}

void ShardingProblem::addEdge(unsigned from, unsigned to,
                              SmallVector<double> cost, double weight) {
  assert(cost.size() == nodes[from].getNumStrategies() *
                            nodes[to].getNumStrategies() &&
         "one cost per strategy pair");
  edges.push_back({from, to, std::move(cost), weight});
}

static double getNodeCost(const ShardingProblem::Node &node, unsigned s,
                          const MemoryPrices &prices) {
  double cost = node.time[s];
  if (!node.memory.empty())
    cost += node.memory[s].modelState * prices.modelState +
            node.memory[s].activations * prices.activations;
  return cost * node.weight;
}

double ShardingProblem::getObjective(ArrayRef<unsigned> choice,
                                     const MemoryPrices &prices) const {
  double total = 0.0;
  for (auto [i, node] : llvm::enumerate(nodes))
    total += getNodeCost(node, choice[i], prices);
  for (const Edge &edge : edges)
    total += edge.weight *
             edge.cost[choice[edge.from] * nodes[edge.to].getNumStrategies() +
                       choice[edge.to]];
  return total;
}

double ShardingProblem::getTime(ArrayRef<unsigned> choice) const {
  return getObjective(choice, {});
}

StrategyMemory ShardingProblem::getMemory(ArrayRef<unsigned> choice) const {
  StrategyMemory total;
  for (auto [i, node] : llvm::enumerate(nodes)) {
    if (node.memory.empty())
      continue;
    total.modelState += node.memory[choice[i]].modelState * node.weight;
    total.activations += node.memory[choice[i]].activations * node.weight;
  }
  return total;
}

double ShardingProblem::getSearchSpaceSize() const {
  double size = 1.0;
  for (const Node &node : nodes)
    size = std::min(size * node.getNumStrategies(), 9.2e18);
  return size;
}

ShardingSolution
mlir::dpc::solveExhaustively(const ShardingProblem &problem,
                             const MemoryPrices &prices) {
  ShardingSolution best;
  best.objective = std::numeric_limits<double>::infinity();
  best.optimal = true;
  SmallVector<unsigned> choice(problem.nodes.size(), 0);
  // An odometer over every node's strategies.
  while (true) {
    double objective = problem.getObjective(choice, prices);
    if (objective < best.objective) {
      best.objective = objective;
      best.choice = choice;
    }
    size_t i = 0;
    for (; i < choice.size(); ++i) {
      if (++choice[i] < problem.nodes[i].getNumStrategies())
        break;
      choice[i] = 0;
    }
    if (i == choice.size())
      return best;
  }
}
