//===- Fusion.h - Ops the CPU backend computes inside others ----*- C++ -*-===//
//
// Two kinds of op need no storage of their own on the CPU: an elementwise
// op whose only user is an elementwise op of the same shape (it is
// computed inside that user's loop) or a reduction (computed as the
// reduction reads each element: a gradient's squares summed for its norm
// are never stored), and a transpose of the last two dimensions that only
// matrix products read (BLAS reads the matrix transposed). An elementwise
// op whose fusion would hold more memory while other buffers are made (its
// operands die at it, outweigh its result, and would be read only where
// its user runs, after other work) is stored instead. The buffer plan and
// the emitter both follow this choice.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_FUSION_H
#define DPC_TARGET_CPU_FUSION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dpc {

/// Whether `op` is a transpose that swaps the last two dimensions and
/// nothing else.
bool isMatrixTranspose(Operation *op);

/// Whether `op` is a reduction the backends compute by walking its
/// operand's elements in order (reduceElements in the kernel libraries),
/// so that its operand may be computed as it is read.
bool isElementReduction(Operation *op);

/// The ops of the single-block `func` that are computed inside their
/// users.
llvm::DenseSet<Operation *> getFusedOps(func::FuncOp func);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_FUSION_H
