//===- BufferPlan.h - Where each value of a program lives -------*- C++ -*-===//
//
// A compiled program keeps its intermediate values in one arena, allocated
// once. The plan gives each value that needs storage of its own a byte
// offset in it, reusing the space of values that are dead: a value is live
// from the op that defines it to its last reader, where an op computed
// inside its consumer's loop (fused) reads at its consumer, and the operand
// of an asynchronous collective is read until the collective's wait.
// Values that only re-label another's elements (reshape, wait) share its
// storage; arguments and constants live outside the arena.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_BUFFERPLAN_H
#define DPC_TARGET_CPU_BUFFERPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::dpc {

/// The storage of a value on the target: its size in bytes.
int64_t getStorageBytes(Value value);

struct BufferPlan {
  /// The arena offset, in bytes, of every value with storage of its own.
  llvm::DenseMap<Value, int64_t> offsets;
  /// Values stored in another value's storage, mapped to that value.
  llvm::DenseMap<Value, Value> aliases;
  int64_t arenaBytes = 0;
  /// The sum of every buffer's size: what the arena would be without
  /// reuse.
  int64_t unsharedBytes = 0;

  /// The value whose storage holds `value` (itself if not an alias).
  Value getStorage(Value value) const;
};

/// Plans the single-block function `func`; `isFused(op)` says whether an
/// op is computed inside its only user's loop (it then has no storage).
BufferPlan planBuffers(func::FuncOp func,
                       llvm::function_ref<bool(Operation *)> isFused);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_BUFFERPLAN_H
