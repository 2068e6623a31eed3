//===- Gemm.h - One GEMM for float and double -------------------*- C++ -*-===//
//
// Row-major C = alpha * op(A) * op(B) + beta * C through OpenBLAS, for
// matmul and the convolutions. An empty contraction (k = 0) is handled
// here, since BLAS requires leading dimensions of at least 1.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_LIB_CPUKERNELS_GEMM_H
#define DPC_RUNTIME_LIB_CPUKERNELS_GEMM_H

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace dpc::cpu::detail {

template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
          int64_t ldc) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "GEMM is for floats");
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  auto i = [](int64_t value) { return static_cast<blasint>(value); };
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, i(m), i(n), i(k), alpha, a, i(lda), b,
                i(ldb), beta, c, i(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, i(m), i(n), i(k), alpha, a, i(lda), b,
                i(ldb), beta, c, i(ldc));
}

} // namespace dpc::cpu::detail

#endif // DPC_RUNTIME_LIB_CPUKERNELS_GEMM_H
