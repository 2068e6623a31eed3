//===- CloneIntoBackward.h - Forward ops run again -------------*- C++ -*-===//
//
// Shared by the passes that recompute forward values instead of storing
// them: pointwise chains (-dpc-recompute-pointwise) and whole layers
// (-dpc-recompute-layers).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_AUTODIFF_CLONEINTOBACKWARD_H
#define DPC_TRANSFORMS_AUTODIFF_CLONEINTOBACKWARD_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::dpc {

/// Clones each of `candidates` (forward ops of `block`, in program order)
/// that a backward op needs, directly or through another clone, marked
/// backward, just before the first backward op that needs it, and makes
/// the backward ops read the clones. `isRecomputed` says which ops are
/// candidates: a clone reads the clones of its recomputed operands and the
/// originals of the rest.
void cloneIntoBackward(Block &block, ArrayRef<Operation *> candidates,
                       llvm::function_ref<bool(Operation *)> isRecomputed);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_AUTODIFF_CLONEINTOBACKWARD_H
