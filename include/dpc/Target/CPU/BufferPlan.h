//===- BufferPlan.h - Where each value of a program lives -------*- C++ -*-===//
//
// A compiled program keeps its intermediate values in one arena, allocated
// once. The plan gives each value that needs storage of its own a byte
// offset in it, reusing the space of values that are dead: a value is live
// from the op that defines it to its last reader, where an op computed
// inside its consumer's loop (fused) reads at its consumer, and the operand
// of an asynchronous collective is read until the collective's wait.
// Values that only re-label another's elements (reshape, wait) share its
// storage, as does a slice that is a contiguous run of its operand;
// arguments, constants and results written straight into the caller's
// buffers live outside the arena. An all-reduce whose operand is dead once
// it starts reduces it where it lies, and a value that only a
// concatenation reads is made inside the concatenation's storage.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_BUFFERPLAN_H
#define DPC_TARGET_CPU_BUFFERPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>

namespace mlir::dpc {

/// The storage of a value on the target: its size in bytes.
int64_t getStorageBytes(Value value);

struct BufferPlan {
  /// The arena offset, in bytes, of every value with storage of its own.
  llvm::DenseMap<Value, int64_t> offsets;
  /// Values stored in another value's storage, mapped to that value.
  llvm::DenseMap<Value, Value> aliases;
  /// Values made in place inside another value's storage, at a byte
  /// offset: the operands a concatenation alone reads (a gradient made
  /// straight into its bucket).
  llvm::DenseMap<Value, std::pair<Value, int64_t>> placements;
  int64_t arenaBytes = 0;
  /// The sum of every buffer's size: what the arena would be without
  /// reuse.
  int64_t unsharedBytes = 0;
  /// The most bytes alive at one op: what a placement without gaps would
  /// need (the arena is this plus what first fit leaves between buffers).
  int64_t liveBytes = 0;

  /// The value whose storage holds `value` (itself if not an alias).
  Value getStorage(Value value) const;
};

/// Whether `op` is a slice whose result is one contiguous run of its
/// operand's elements (only the first dimension cut, unit strides): it is
/// then a view, at an element offset, not a copy.
bool isContiguousSlice(Operation *op);

/// Whether `op`'s result re-labels its operand's elements without moving
/// them (reshape, wait, a contiguous slice): it is stored in its operand.
bool isView(Operation *op);

/// The ops of a single-block function in order, and where each reads its
/// operands: an op computed inside its users (fused) reads where they run,
/// and an asynchronous collective reads its operand until its wait.
class ProgramOrder {
public:
  ProgramOrder(func::FuncOp func, std::function<bool(Operation *)> isFused);

  int64_t getPosition(Operation *op) const { return positions.lookup(op); }
  /// The last position at which `user` reads its operands.
  int64_t getReadPosition(Operation *user) const;

private:
  llvm::DenseMap<Operation *, int64_t> positions;
  std::function<bool(Operation *)> isFused;
};

/// Plans the single-block function `func`; `isFused(op)` says whether an
/// op is computed inside its users (an elementwise op in its user's loop, a
/// transpose by the GEMMs that read it): it then has no storage, and its
/// operands are read where its users run.
/// `isExternal(value)` says whether a value lives outside the arena (a
/// result written straight into the caller's buffer). A value is made
/// inside a concatenation only at a byte offset that is a multiple of
/// `placementAlignment` (what the target's kernels need of a pointer).
BufferPlan planBuffers(func::FuncOp func,
                       llvm::function_ref<bool(Operation *)> isFused,
                       llvm::function_ref<bool(Value)> isExternal,
                       int64_t placementAlignment);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_BUFFERPLAN_H
