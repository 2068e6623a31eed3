//===- Contraction.cpp - Batched matrix products --------------------------===//
//
// One OpenBLAS GEMM per batch element, the batch indices walked like an
// odometer with broadcast strides. When the right-hand side is shared by
// every batch and the left-hand side is not broadcast, the batches are
// rows of one taller GEMM, which BLAS runs much faster than many small ones
// (the [batch, seq, k] x [k, n] of a linear layer).
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "KernelSupport.h"

#include <algorithm>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

template <typename T>
void dpc::cpu::matmul(const T *lhs, Dims lhsShape, const T *rhs, Dims rhsShape,
                      T *out, Dims outShape) {
  matmul(lhs, lhsShape, false, rhs, rhsShape, false, out, outShape);
}

template <typename T>
void dpc::cpu::matmul(const T *lhs, Dims lhsShape, bool transLhs, const T *rhs,
                      Dims rhsShape, bool transRhs, T *out, Dims outShape) {
  int64_t lhsRank = getRank(lhsShape), rhsRank = getRank(rhsShape);
  int64_t outRank = getRank(outShape);
  // The stored matrices are [m, k] and [k, n], or their transposes.
  int64_t lhsRows = at(lhsShape, lhsRank - 2),
          lhsCols = at(lhsShape, lhsRank - 1);
  int64_t rhsRows = at(rhsShape, rhsRank - 2),
          rhsCols = at(rhsShape, rhsRank - 1);
  int64_t m = transLhs ? lhsCols : lhsRows, k = transLhs ? lhsRows : lhsCols;
  int64_t n = transRhs ? rhsRows : rhsCols;
  std::vector<int64_t> batch(outShape.begin(), outShape.end() - 2);
  int64_t batchCount = product(outShape, 0, outRank - 2);
  if (batchCount == 0 || m == 0 || n == 0)
    return;

  // Batch strides in whole matrices, 0 where broadcast.
  std::vector<int64_t> lhsStrides = getBroadcastStrides(
      std::vector<int64_t>(lhsShape.begin(), lhsShape.end() - 2), batch);
  std::vector<int64_t> rhsStrides = getBroadcastStrides(
      std::vector<int64_t>(rhsShape.begin(), rhsShape.end() - 2), batch);
  bool rhsShared = std::all_of(rhsStrides.begin(), rhsStrides.end(),
                               [](int64_t stride) { return stride == 0; });
  if (!transLhs && rhsShared &&
      product(lhsShape, 0, lhsRank - 2) == batchCount) {
    gemm<T>(false, transRhs, batchCount * m, n, k, T(1), lhs, lhsCols, rhs,
            rhsCols, T(0), out, n);
    return;
  }

  int64_t rank = static_cast<int64_t>(batch.size());
  std::vector<int64_t> index(rank, 0);
  int64_t lhsOffset = 0, rhsOffset = 0;
  for (int64_t b = 0; b < batchCount; ++b) {
    gemm<T>(transLhs, transRhs, m, n, k, T(1), lhs + lhsOffset * m * k, lhsCols,
            rhs + rhsOffset * k * n, rhsCols, T(0), out + b * m * n, n);
    for (int64_t d = rank - 1; d >= 0; --d) {
      lhsOffset += lhsStrides[d];
      rhsOffset += rhsStrides[d];
      if (++index[d] < batch[d])
        break;
      lhsOffset -= lhsStrides[d] * batch[d];
      rhsOffset -= rhsStrides[d] * batch[d];
      index[d] = 0;
    }
  }
}

template void dpc::cpu::matmul<float>(const float *, Dims, const float *, Dims,
                                      float *, Dims);
template void dpc::cpu::matmul<double>(const double *, Dims, const double *,
                                       Dims, double *, Dims);
template void dpc::cpu::matmul<float>(const float *, Dims, bool, const float *,
                                      Dims, bool, float *, Dims);
template void dpc::cpu::matmul<double>(const double *, Dims, bool,
                                       const double *, Dims, bool, double *,
                                       Dims);
