//===- ReshardLowering.h - A change of layout as collectives ----*- C++ -*-===//
//
// Turns one dpc.reshard of a partitioned program into the collectives that
// move each rank's block from one layout to the other.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PARTITIONING_RESHARDLOWERING_H
#define DPC_TRANSFORMS_PARTITIONING_RESHARDLOWERING_H

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::dpc {

/// Builds, at `builder`'s insertion point, the collectives that turn
/// `local`, a rank's block of a value laid out as `from`, into its block
/// under `to` (both on `mesh`), and returns that block. In order:
/// - pending partial results the target does not keep are reduced: by a
///   reduce-scatter where the target splits a dimension over exactly the
///   reduced axes (after those it already splits), else an all-reduce;
/// - an axis that moves from one dimension to another moves with one
///   all-to-all;
/// - what remains split but not wanted is all-gathered, and what is wanted
///   split is sliced locally (all_slice), which sends nothing.
/// Fails, with an error at `loc`, where the target asks for a pending sum
/// the source does not hold (a replicated value is not a partial sum).
FailureOr<Value> lowerReshard(OpBuilder &builder, Location loc, Value local,
                              ShardingAttr from, ShardingAttr to, MeshOp mesh);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PARTITIONING_RESHARDLOWERING_H
