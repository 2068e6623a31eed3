//===- TransposedProducts.h - Products computed transposed ------*- C++ -*-===//
//
// The backward pass of a linear layer makes its weight gradient as
// transpose(X^T . dY): a GEMM into a buffer, then a copy that transposes it,
// both alive at once. A GEMM computes (A.B)^T = B^T.A^T as cheaply, with
// the transposes read by BLAS, so before emission such a transpose of a
// product becomes the product of the transposed operands.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_TRANSPOSEDPRODUCTS_H
#define DPC_TARGET_CPU_TRANSPOSEDPRODUCTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dpc {

/// Rewrites, in the single-block `func`, each transpose of the last two
/// dimensions whose operand is a matrix product (of operands of rank 2 or
/// more) that nothing else reads into the product of the transposed
/// operands in swapped order; an operand that is itself such a transpose
/// is read through it, and a transpose of a transpose is its operand's
/// operand.
void computeTransposedProducts(func::FuncOp func);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_TRANSPOSEDPRODUCTS_H
