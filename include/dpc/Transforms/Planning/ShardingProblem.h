//===- ShardingProblem.h - Choosing one strategy per op ---------*- C++ -*-===//
//
// The intra-op planning problem, free of IR: every node (an op or a
// parameter) picks one of its strategies; a node's strategy costs time and
// memory, and an edge costs the resharding between the strategies at its
// two ends. Repeated layers are folded onto one representative before the
// problem is built, so node and edge weights count how often each occurs.
// Solved exactly by an integer program (CBC) or, for tests, by enumeration.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_SHARDINGPROBLEM_H
#define DPC_TRANSFORMS_PLANNING_SHARDINGPROBLEM_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::dpc {

/// Memory a strategy keeps on one device, by kind, so that the planner can
/// price each kind differently (activations are multiplied by the
/// micro-batches in flight, model state is not).
struct StrategyMemory {
  double modelState = 0.0;
  double activations = 0.0;
};

/// Prices of memory in seconds per byte: the objective is time plus
/// modelState * prices.modelState + activations * prices.activations.
struct MemoryPrices {
  double modelState = 0.0;
  double activations = 0.0;
};

struct ShardingProblem {
  struct Node {
    /// Seconds of each strategy.
    SmallVector<double> time;
    /// Bytes of each strategy; empty means none.
    SmallVector<StrategyMemory> memory;
    /// How many ops this node stands for.
    double weight = 1.0;
    unsigned getNumStrategies() const { return time.size(); }
  };
  struct Edge {
    unsigned from = 0, to = 0;
    /// Seconds for each pair of strategies, row-major: cost[i * nTo + j]
    /// with i the strategy of `from`, j that of `to`.
    SmallVector<double> cost;
    double weight = 1.0;
  };

  SmallVector<Node> nodes;
  SmallVector<Edge> edges;

  unsigned addNode(SmallVector<double> time,
                   SmallVector<StrategyMemory> memory = {},
                   double weight = 1.0);
  void addEdge(unsigned from, unsigned to, SmallVector<double> cost,
               double weight = 1.0);

  /// The objective of one choice of strategies.
  double getObjective(ArrayRef<unsigned> choice,
                      const MemoryPrices &prices = MemoryPrices()) const;
  /// Seconds only (prices zero) and memory totals of a choice.
  double getTime(ArrayRef<unsigned> choice) const;
  StrategyMemory getMemory(ArrayRef<unsigned> choice) const;

  /// Number of choices the problem has (saturating at 2^63).
  double getSearchSpaceSize() const;
};

struct ShardingSolution {
  SmallVector<unsigned> choice;
  double objective = 0.0;
  /// Whether the solver proved the choice optimal.
  bool optimal = false;
};

/// Exact minimum by an integer program solved with CBC (Alpa's
/// formulation: one binary per node strategy, one continuous per edge
/// strategy pair, tied to both ends' binaries). Nodes with one strategy
/// and the edges around them are folded into their neighbours first.
/// Fails with `error` set only if CBC cannot solve it in `timeLimit`
/// seconds.
FailureOr<ShardingSolution> solveWithIlp(const ShardingProblem &problem,
                                         const MemoryPrices &prices,
                                         double timeLimit, std::string &error);

/// Exact minimum by trying every choice; for tests on small problems.
ShardingSolution solveExhaustively(const ShardingProblem &problem,
                                   const MemoryPrices &prices);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_SHARDINGPROBLEM_H
