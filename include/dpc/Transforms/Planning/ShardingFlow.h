//===- ShardingFlow.h - What each op expects and makes ----------*- C++ -*-===//
//
// The layouts a planned op takes its operands in and the layouts its
// results then have: from the op's sharding rule for ops that have one,
// from the callee's signature for calls, from the function's signature for
// returns. -dpc-insert-reshards makes operands match; -dpc-verify-shardings
// checks that results follow.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_SHARDINGFLOW_H
#define DPC_TRANSFORMS_PLANNING_SHARDINGFLOW_H

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

namespace mlir::dpc {

/// The layouts `op` expects of its operands (null entries: no
/// expectation), or an empty list when nothing is expected: the op's
/// `dpc.operand_shardings`, a callee's argument shardings, or the enclosing
/// function's result shardings for a return.
SmallVector<ShardingAttr> getExpectedOperandShardings(Operation *op);

/// The result layouts that `op`'s sharding rule gives for operands laid
/// out as `operands` on `mesh`. Factors that index no operand take the
/// layout `declared` gives them. Fails with `error` when the operands do
/// not form one strategy of the rule (a factor split two ways, a whole
/// factor split, a partial operand).
FailureOr<SmallVector<ShardingAttr>>
inferResultShardings(ShardableOpInterface op, ArrayRef<ShardingAttr> operands,
                     ArrayRef<ShardingAttr> declared, MeshOp mesh,
                     std::string &error);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_SHARDINGFLOW_H
