//===- ShardingConstraints.h - Shardings fixed in the IR -------*- C++ -*-===//
//
// A plan the user can override: a `dpc.sharding` already on a forward op of
// `@forward_backward` (one string per result, as the planner writes them)
// or on one of its arguments fixes that value's sharding, and the planner
// searches only the strategies that produce it. Replanning a planned module
// therefore keeps its shardings; editing one string changes just that
// choice.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_SHARDINGCONSTRAINTS_H
#define DPC_TRANSFORMS_PLANNING_SHARDINGCONSTRAINTS_H

#include "dpc/Analysis/CostModel/ReshardingCost.h"
#include "dpc/Transforms/Planning/TrainingGraph.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::dpc {

class ShardingConstraints {
public:
  /// Reads every `dpc.sharding` of the forward ops and arguments of
  /// `graph`'s function; reports a malformed one at its op (or function)
  /// and fails. Under ZeRO (`zeroBlocks`) a parameter argument holds its
  /// rank's block, the planned layout split over the data axis as well:
  /// the planned layout is what is read.
  static FailureOr<ShardingConstraints> read(const TrainingGraph &graph,
                                             bool zeroBlocks = false);

  /// The fixed shardings of `op`'s results, or null.
  const SmallVector<TensorSharding, 1> *lookup(Operation *op) const {
    auto it = results.find(op);
    return it == results.end() ? nullptr : &it->second;
  }
  /// The fixed sharding of argument `value`, or null.
  const TensorSharding *lookup(Value value) const {
    auto it = arguments.find(value);
    return it == arguments.end() ? nullptr : &it->second;
  }
  bool empty() const { return results.empty() && arguments.empty(); }

private:
  llvm::DenseMap<Operation *, SmallVector<TensorSharding, 1>> results;
  llvm::DenseMap<Value, TensorSharding> arguments;
};

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_SHARDINGCONSTRAINTS_H
