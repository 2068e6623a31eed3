//===- Contraction.h - Batched matrix products on the GPU -------*- C++ -*-===//
//
// [..., m, k] x [..., k, n] -> [..., m, n] with NumPy-broadcast batch
// dimensions, either operand possibly stored transposed in its last two
// dimensions. On the GPU, cuBLASLt (fp32 with fp32 accumulation, or fp64);
// row-major products are computed as the column-major product of the
// transposes, C^T = B^T A^T, which is the same memory. Batches go in one
// strided call when each operand's batch is whole or broadcast whole
// (stride 0), else one call per output matrix. Under emulation, a
// thread per output element.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CONTRACTION_H
#define DPC_RUNTIME_CUDA_CONTRACTION_H

#include "dpc/Runtime/Cuda/Context.h"

#include <type_traits>

namespace dpc::cuda {

namespace detail {
/// The offset, in matrices, of output batch `b`'s operand of batch shape
/// `shape` (aligned right against `outShape`, broadcast where 1).
DPC_HOST_DEVICE inline int64_t batchOffset(int64_t b, const Shape &outShape,
                                           const Shape &shape) {
  int64_t offset = 0, stride = 1;
  int32_t shift = outShape.rank - shape.rank;
  for (int32_t d = outShape.rank - 1; d >= shift; --d) {
    int64_t size = shape[d - shift];
    if (size != 1)
      offset += (b % outShape[d]) * stride;
    stride *= size;
    b /= outShape[d];
  }
  return offset;
}

/// The batch dimensions of a matrix operand's shape.
inline Shape batchOf(const Shape &shape) {
  Shape batch;
  for (int32_t d = 0; d + 2 < shape.rank; ++d)
    batch.d[batch.rank++] = shape[d];
  return batch;
}
} // namespace detail

template <typename T>
void matmul(Context *context, const T *lhs, Shape lhsShape, bool transLhs,
            const T *rhs, Shape rhsShape, bool transRhs, T *out,
            Shape outShape) {
  static_assert(std::is_floating_point_v<T>, "products of floats");
  int64_t m = outShape[outShape.rank - 2], n = outShape[outShape.rank - 1];
  int64_t k =
      transLhs ? lhsShape[lhsShape.rank - 2] : lhsShape[lhsShape.rank - 1];
  Shape outBatch = detail::batchOf(outShape);
  Shape lhsBatch = detail::batchOf(lhsShape),
        rhsBatch = detail::batchOf(rhsShape);
  int64_t batches = outBatch.product();
#ifdef DPC_CUDA_EMULATION
  forEach(
      context, batches * m * n, DPC_KERNEL(int64_t e) {
        int64_t b = e / (m * n), i = (e / n) % m, j = e % n;
        const T *a = lhs + detail::batchOffset(b, outBatch, lhsBatch) * m * k;
        const T *c = rhs + detail::batchOffset(b, outBatch, rhsBatch) * k * n;
        T sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += (transLhs ? a[l * m + i] : a[i * k + l]) *
                 (transRhs ? c[j * k + l] : c[l * n + j]);
        out[e] = sum;
      });
#else
  constexpr bool isDouble = std::is_same_v<T, double>;
  cudaDataType_t type = isDouble ? CUDA_R_64F : CUDA_R_32F;
  cublasComputeType_t compute =
      isDouble ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  cublasLtMatmulDesc_t operation;
  cublasLtMatmulDescCreate(&operation, compute, type);
  // cuBLASLt's A is our rhs, its B our lhs (C^T = B^T A^T).
  cublasOperation_t opA = transRhs ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transLhs ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(operation, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                 sizeof(opA));
  cublasLtMatmulDescSetAttribute(operation, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                 sizeof(opB));
  // Stored column-major: a row-major [r, c] matrix is [c, r] with ld c.
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatrixLayoutCreate(&a, type, transRhs ? k : n, transRhs ? n : k,
                             transRhs ? k : n);
  cublasLtMatrixLayoutCreate(&b, type, transLhs ? m : k, transLhs ? k : m,
                             transLhs ? m : k);
  cublasLtMatrixLayoutCreate(&c, type, n, m, n);
  bool lhsWhole = lhsBatch.product() == batches || lhsBatch.product() == 1;
  bool rhsWhole = rhsBatch.product() == batches || rhsBatch.product() == 1;
  bool strided = lhsWhole && rhsWhole &&
                 (lhsBatch.product() == 1 || lhsBatch.rank == outBatch.rank) &&
                 (rhsBatch.product() == 1 || rhsBatch.rank == outBatch.rank);
  for (int32_t d = 0; strided && d < outBatch.rank; ++d) {
    // Whole batches must match dimension by dimension to be strided.
    if (lhsBatch.product() != 1 &&
        lhsBatch[d - (outBatch.rank - lhsBatch.rank)] != outBatch[d])
      strided = false;
    if (rhsBatch.product() != 1 &&
        rhsBatch[d - (outBatch.rank - rhsBatch.rank)] != outBatch[d])
      strided = false;
  }
  double alpha = 1, beta = 0;
  float alphaF = 1, betaF = 0;
  const void *alphaP = isDouble ? static_cast<const void *>(&alpha) : &alphaF;
  const void *betaP = isDouble ? static_cast<const void *>(&beta) : &betaF;
  auto run = [&](const T *l, const T *r, T *o) {
    cublasStatus_t status = cublasLtMatmul(
        context->blas, operation, alphaP, r, a, l, b, betaP, o, c, o, c,
        nullptr, context->workspace, context->workspaceBytes, context->compute);
    if (status != CUBLAS_STATUS_SUCCESS && context->error.empty())
      context->error =
          "cuBLASLt matmul failed (status " + std::to_string(int(status)) + ")";
  };
  if (strided) {
    int32_t count = int32_t(batches);
    int64_t lhsStride = lhsBatch.product() == 1 ? 0 : m * k;
    int64_t rhsStride = rhsBatch.product() == 1 ? 0 : k * n;
    int64_t outStride = m * n;
    auto setBatch = [&](cublasLtMatrixLayout_t layout, int64_t stride) {
      cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
      cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
          sizeof(stride));
    };
    setBatch(a, rhsStride);
    setBatch(b, lhsStride);
    setBatch(c, outStride);
    run(lhs, rhs, out);
  } else {
    for (int64_t i = 0; i < batches; ++i)
      run(lhs + detail::batchOffset(i, outBatch, lhsBatch) * m * k,
          rhs + detail::batchOffset(i, outBatch, rhsBatch) * k * n,
          out + i * m * n);
  }
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(c);
  cublasLtMatmulDescDestroy(operation);
#endif
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_CONTRACTION_H
