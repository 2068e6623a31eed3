//===- IlpSolver.cpp - The intra-op problem as an integer program ---------===//
//
// Minimize sum_v sum_s c_vs x_vs + sum_e sum_ij C_eij y_eij subject to
// sum_s x_vs = 1, and for each edge e = (u, v): sum_j y_eij = x_ui and
// sum_i y_eij = x_vj, with x binary and y in [0, 1]. Once the x are
// integral the y are the indicator of the pair chosen, so the program is
// exact; the equalities (rather than y >= x_ui + x_vj - 1) keep the
// relaxation tight, and CBC usually closes it at the root.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Planning/ShardingProblem.h"

#include "llvm/ADT/DenseMap.h"

#include <coin/Cbc_C_Interface.h>

#include <cmath>
#include <limits>
#include <memory>

using namespace mlir;
using namespace mlir::dpc;

namespace {
/// The problem left once nodes with a single strategy are fixed: their
/// edges become node costs of the other end, self-loops become diagonal
/// node costs and parallel edges merge.
struct ReducedProblem {
  /// Cost vector of each node (weighted, memory priced).
  SmallVector<SmallVector<double>> cost;
  /// Edge cost matrices keyed by (from, to) with from < to.
  llvm::DenseMap<std::pair<unsigned, unsigned>, SmallVector<double>> edges;
};

ReducedProblem reduce(const ShardingProblem &problem,
                      const MemoryPrices &prices) {
  ReducedProblem reduced;
  for (const ShardingProblem::Node &node : problem.nodes) {
    SmallVector<double> cost;
    for (unsigned s = 0; s < node.getNumStrategies(); ++s) {
      double c = node.time[s];
      if (!node.memory.empty())
        c += node.memory[s].modelState * prices.modelState +
             node.memory[s].activations * prices.activations;
      cost.push_back(c * node.weight);
    }
    reduced.cost.push_back(std::move(cost));
  }
  for (const ShardingProblem::Edge &edge : problem.edges) {
    unsigned nFrom = problem.nodes[edge.from].getNumStrategies();
    unsigned nTo = problem.nodes[edge.to].getNumStrategies();
    auto at = [&](unsigned i, unsigned j) {
      return edge.weight * edge.cost[i * nTo + j];
    };
    if (edge.from == edge.to) {
      for (unsigned s = 0; s < nFrom; ++s)
        reduced.cost[edge.from][s] += at(s, s);
    } else if (nFrom == 1) {
      for (unsigned j = 0; j < nTo; ++j)
        reduced.cost[edge.to][j] += at(0, j);
    } else if (nTo == 1) {
      for (unsigned i = 0; i < nFrom; ++i)
        reduced.cost[edge.from][i] += at(i, 0);
    } else {
      bool flip = edge.from > edge.to;
      unsigned a = flip ? edge.to : edge.from, b = flip ? edge.from : edge.to;
      unsigned nA = flip ? nTo : nFrom, nB = flip ? nFrom : nTo;
      SmallVector<double> &matrix = reduced.edges[{a, b}];
      if (matrix.empty())
        matrix.assign(nA * nB, 0.0);
      for (unsigned i = 0; i < nFrom; ++i)
        for (unsigned j = 0; j < nTo; ++j)
          matrix[flip ? j * nB + i : i * nB + j] += at(i, j);
    }
  }
  return reduced;
}

struct CbcModelDeleter {
  void operator()(Cbc_Model *model) const { Cbc_deleteModel(model); }
};
} // namespace

FailureOr<ShardingSolution>
mlir::dpc::solveWithIlp(const ShardingProblem &problem,
                        const MemoryPrices &prices,
                        double timeLimit, std::string &error) {
  ReducedProblem reduced = reduce(problem, prices);
  ShardingSolution solution;
  solution.choice.assign(problem.nodes.size(), 0);
  solution.optimal = true;

  // Nodes that keep a choice and take part in an edge go to CBC; an
  // isolated node simply takes its cheapest strategy.
  SmallVector<bool> inEdge(problem.nodes.size(), false);
  for (auto &entry : reduced.edges) {
    inEdge[entry.first.first] = true;
    inEdge[entry.first.second] = true;
  }
  for (auto [v, cost] : llvm::enumerate(reduced.cost)) {
    if (inEdge[v])
      continue;
    unsigned best = 0;
    for (unsigned s = 1; s < cost.size(); ++s)
      if (cost[s] < cost[best])
        best = s;
    solution.choice[v] = best;
  }

  if (!reduced.edges.empty()) {
    // Columns: each node's strategies, then each edge's pairs; rows: each
    // node's "one strategy", then each edge's two marginals. Built as one
    // column-major matrix, which CBC loads at once.
    SmallVector<int> firstColumn(problem.nodes.size(), -1);
    SmallVector<SmallVector<std::pair<int, double>, 3>> entries;
    SmallVector<double> objective, rowBound;
    SmallVector<char> integer;
    for (auto [v, cost] : llvm::enumerate(reduced.cost)) {
      if (!inEdge[v])
        continue;
      int row = rowBound.size();
      rowBound.push_back(1.0);
      firstColumn[v] = objective.size();
      for (double c : cost) {
        entries.push_back({{row, 1.0}});
        objective.push_back(c);
        integer.push_back(1);
      }
    }
    for (auto &[ends, matrix] : reduced.edges) {
      auto [a, b] = ends;
      unsigned nA = reduced.cost[a].size(), nB = reduced.cost[b].size();
      // sum_j y_ij - x_ai = 0 and sum_i y_ij - x_bj = 0.
      int rowsA = rowBound.size(), rowsB = rowsA + nA;
      rowBound.append(nA + nB, 0.0);
      for (unsigned i = 0; i < nA; ++i)
        entries[firstColumn[a] + i].push_back({rowsA + int(i), -1.0});
      for (unsigned j = 0; j < nB; ++j)
        entries[firstColumn[b] + j].push_back({rowsB + int(j), -1.0});
      for (unsigned i = 0; i < nA; ++i)
        for (unsigned j = 0; j < nB; ++j) {
          entries.push_back({{rowsA + int(i), 1.0}, {rowsB + int(j), 1.0}});
          objective.push_back(matrix[i * nB + j]);
          integer.push_back(0);
        }
    }
    // Costs are seconds, often 1e-9 and below: CBC's tolerances are
    // absolute, so the objective is scaled to at most 1000.
    double largest = 0.0;
    for (double c : objective)
      largest = std::max(largest, std::abs(c));
    if (largest > 0)
      for (double &c : objective)
        c *= 1000.0 / largest;
    SmallVector<CoinBigIndex> starts = {0};
    SmallVector<int> rows;
    SmallVector<double> coefficients;
    for (const auto &column : entries) {
      for (auto [row, value] : column) {
        rows.push_back(row);
        coefficients.push_back(value);
      }
      starts.push_back(rows.size());
    }
    SmallVector<double> lower(objective.size(), 0.0),
        upper(objective.size(), 1.0);
    std::unique_ptr<Cbc_Model, CbcModelDeleter> model(Cbc_newModel());
    Cbc_setLogLevel(model.get(), 0);
    Cbc_setMaximumSeconds(model.get(), timeLimit);
    // The relaxation is tight: its root solution is almost always
    // integral, so cut generation and preprocessing cost more than they
    // save.
    Cbc_setParameter(model.get(), "cuts", "off");
    Cbc_setParameter(model.get(), "preprocess", "off");
    Cbc_setParameter(model.get(), "heuristicsOnOff", "off");
    Cbc_loadProblem(model.get(), objective.size(), rowBound.size(),
                    starts.data(), rows.data(), coefficients.data(), lower.data(),
                    upper.data(), objective.data(), rowBound.data(),
                    rowBound.data());
    for (auto [column, isInteger] : llvm::enumerate(integer))
      if (isInteger)
        Cbc_setInteger(model.get(), column);
    Cbc_solve(model.get());
    const double *values = Cbc_getColSolution(model.get());
    if (Cbc_isProvenInfeasible(model.get()) || !values ||
        (Cbc_numberSavedSolutions(model.get()) == 0 &&
         !Cbc_isProvenOptimal(model.get()))) {
      error = "the sharding integer program found no solution within " +
              std::to_string(timeLimit) + " s";
      return failure();
    }
    solution.optimal = Cbc_isProvenOptimal(model.get());
    for (auto [v, cost] : llvm::enumerate(reduced.cost)) {
      if (!inEdge[v])
        continue;
      unsigned best = 0;
      for (unsigned s = 1; s < cost.size(); ++s)
        if (values[firstColumn[v] + s] > values[firstColumn[v] + best])
          best = s;
      solution.choice[v] = best;
    }
  }
  solution.objective = problem.getObjective(solution.choice, prices);
  return solution;
}
