//===- InPlaceUpdates.h - Results written over the arguments ----*- C++ -*-===//
//
// A training step returns every parameter, state and optimizer state it
// updates. Holding both the old and the new copy doubles the model state
// a rank keeps, so the caller passes the argument's own buffer for the
// result that updates it (as XLA's donated buffers, or an optimizer that
// steps in place): the program then must not read the argument after it
// starts writing the result there.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_INPLACEUPDATES_H
#define DPC_TARGET_CPU_INPLACEUPDATES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::dpc {

class ProgramOrder;

/// For each result of `func`, the argument whose buffer it is written
/// into: the argument of the same role (parameter, state or optimizer
/// state), name and type. None where no argument matches, where two results
/// would share one, or where the result is stored in another argument or
/// the argument is returned as another result (a copy at the end would
/// then read what was overwritten).
SmallVector<std::optional<unsigned>> getUpdatedArguments(func::FuncOp func);

/// Whether the op that makes `value` may write it straight over
/// `argument`: every read of the argument (through views, inside fused
/// loops, by collectives until their wait) happens before that op, or in
/// that op's own elementwise loop at the element it writes.
bool canWriteInPlace(Value value, BlockArgument argument,
                     const ProgramOrder &order,
                     llvm::function_ref<bool(Operation *)> isFused);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_INPLACEUPDATES_H
