//===- Scheduling.h - Moving ops around collectives -------------*- C++ -*-===//
//
// Shared by the collective passes: where a collective's readers go.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_TRANSFORMS_COLLECTIVES_SCHEDULING_H
#define DPC_LIB_TRANSFORMS_COLLECTIVES_SCHEDULING_H

#include "mlir/IR/Block.h"

namespace mlir::dpc {

/// Whether `op` is a collective that moves data between ranks.
bool isCommunicating(Operation *op);

/// Moves the pure ops of `block` that read collective results, directly
/// or not, as late as their users allow, so that what reads a collective
/// comes as late as it can.
void sinkConsumers(Block &block);

/// Moves each pure backward op of `block` that reads no gradient (a
/// forward value recomputed for the backward pass, a transpose of an
/// activation for a weight gradient) to just before its first reader.
/// Sinking the consumers of collectives moves the whole gradient chain
/// (it reads the loss normalizer's all-reduce) late: without this, every
/// layer's recomputation would be left ahead of the whole backward pass,
/// its activations alive all through it.
void sinkRecomputation(Block &block);

/// The first op of `block` that reads `value` (itself or through an op
/// nested in it), or null.
Operation *getFirstReader(Block &block, Value value);

/// Whether `value` is an argument of `block`, or is computed from its
/// arguments alone by pure ops of the block whose results only lead to
/// it (a bucket of parameter blocks: reshaped, concatenated): it can be
/// made anywhere in the block.
bool isMadeFromArguments(Block &block, Value value);

/// Moves `op` to just before `point`, and the ops of its block that make
/// its operands just before it, recursively; only valid where those ops
/// lead to nothing else (isMadeFromArguments).
void moveWithOperands(Operation *op, Operation *point);

} // namespace mlir::dpc

#endif // DPC_LIB_TRANSFORMS_COLLECTIVES_SCHEDULING_H
