//===- BatchSummedProducts.h - Batched products summed as one ---*- C++ -*-===//
//
// The backward pass of a linear layer applied to [batch, sequence, in]
// makes its weight gradient as a batched product summed over the batch:
// reduce_sum(transpose(X) . dY, batch), one small GEMM per sample into a
// buffer as large as the weight times the batch, then a reduction. The
// sum over the batch of X_b^T . dY_b is X^T . dY with the batch and
// sequence dimensions merged: one GEMM over all the rows, into the
// weight-sized result, with the operands reshaped where they lie.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_BATCHSUMMEDPRODUCTS_H
#define DPC_TARGET_CPU_BATCHSUMMEDPRODUCTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dpc {

/// Rewrites, in the single-block `func`, each reduce_sum over all the batch
/// dimensions (dropping them) of a batched matrix product that nothing else
/// reads, whose left operand is a matrix transpose of X [batch..., k, m]
/// and whose right operand Y [batch..., k, n] has the same batch
/// dimensions, into transpose(reshape(X, [rows, m])) . reshape(Y, [rows,
/// n]) with rows the batch elements times k.
void sumBatchedProductsInOneProduct(func::FuncOp func);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_BATCHSUMMEDPRODUCTS_H
