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

/// The first op of `block` that reads `value` (itself or through an op
/// nested in it), or null.
Operation *getFirstReader(Block &block, Value value);

} // namespace mlir::dpc

#endif // DPC_LIB_TRANSFORMS_COLLECTIVES_SCHEDULING_H
