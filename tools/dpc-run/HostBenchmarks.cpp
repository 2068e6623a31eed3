//===- HostBenchmarks.cpp - GEMM and memory-bandwidth probes --------------===//
//
// Each probe keeps the best of its timed runs: on a shared machine the
// slower runs measure whoever else was using the core, not the core.
//
//===----------------------------------------------------------------------===//

#include "HostBenchmarks.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <vector>

using namespace mlir;
using namespace mlir::dpc;

// Declared here as well as in OpenBLAS's cblas.h: Debian's cblas.h may be
// another BLAS's (update-alternatives), and the library linked is OpenBLAS.
extern "C" void openblas_set_num_threads(int numThreads);

double mlir::dpc::getMonotonicSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void mlir::dpc::useSingleThreadedBlas() { openblas_set_num_threads(1); }

/// Keeps the compiler from dropping stores nobody reads back.
static void clobberMemory(const void *data) {
  asm volatile("" : : "r"(data) : "memory");
}

/// Runs `step` once untimed, then until `seconds` have passed and at least
/// three timed runs are in; returns the shortest run.
template <typename Step> static double timeBestOf(double seconds, Step step) {
  step();
  double best = 0.0;
  double start = getMonotonicSeconds();
  for (int run = 0;; ++run) {
    double begin = getMonotonicSeconds();
    step();
    double elapsed = getMonotonicSeconds() - begin;
    if (run == 0 || elapsed < best)
      best = elapsed;
    if (run >= 2 && getMonotonicSeconds() - start >= seconds)
      return best;
  }
}

template <typename T> static double measureGemm(int64_t n, double seconds) {
  size_t elements = static_cast<size_t>(n * n);
  // Values of order one, so that no operand is denormal or zero.
  std::vector<T> a(elements), b(elements), c(elements);
  for (size_t i = 0; i < elements; ++i) {
    a[i] = static_cast<T>(1.0 + static_cast<double>(i % 7) / 8);
    b[i] = static_cast<T>(1.0 - static_cast<double>(i % 5) / 8);
  }
  auto step = [&] {
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                  a.data(), n, b.data(), n, 0.0f, c.data(), n);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0,
                  a.data(), n, b.data(), n, 0.0, c.data(), n);
  };
  double best = timeBestOf(seconds, step);
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) *
         static_cast<double>(n) / best;
}

double mlir::dpc::measureGemmFlops(GemmType type, ArrayRef<int64_t> sizes,
                                   double secondsPerSize) {
  double best = 0.0;
  for (int64_t n : sizes)
    best = std::max(best, type == GemmType::F32
                              ? measureGemm<float>(n, secondsPerSize)
                              : measureGemm<double>(n, secondsPerSize));
  return best;
}

double mlir::dpc::median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

SmallVector<GemmShape> mlir::dpc::getTrainingGemmShapes(int64_t tokens) {
  SmallVector<GemmShape> shapes;
  for (auto [in, out] : {std::pair<int64_t, int64_t>(256, 1024),
                         std::pair<int64_t, int64_t>(1024, 256)}) {
    shapes.push_back({tokens, out, in, false, false}); // x w
    shapes.push_back({tokens, in, out, false, true});  // dy w^T
    shapes.push_back({in, out, tokens, true, false});  // x^T dy
  }
  return shapes;
}

GemmRunner::GemmRunner(const GemmShape &shape)
    : shape(shape), a(static_cast<size_t>(shape.m * shape.k)),
      b(static_cast<size_t>(shape.k * shape.n)),
      c(static_cast<size_t>(shape.m * shape.n)) {
  // Stored as op(a) and op(b) are read: a is k x m when transposed. Values
  // of order one, so that no operand is denormal or zero.
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = 1.0f + static_cast<float>(i % 7) / 8;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 1.0f - static_cast<float>(i % 5) / 8;
}

void GemmRunner::run() {
  int64_t lda = shape.transposeA ? shape.m : shape.k;
  int64_t ldb = shape.transposeB ? shape.k : shape.n;
  cblas_sgemm(CblasRowMajor, shape.transposeA ? CblasTrans : CblasNoTrans,
              shape.transposeB ? CblasTrans : CblasNoTrans, shape.m, shape.n,
              shape.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(),
              shape.n);
  clobberMemory(c.data());
}

double GemmRunner::time(int64_t runs) {
  double begin = getMonotonicSeconds();
  for (int64_t i = 0; i < runs; ++i)
    run();
  return getMonotonicSeconds() - begin;
}

double GemmRunner::getFlops() const {
  return 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
         static_cast<double>(shape.k);
}

double mlir::dpc::measureMedianGemmFlops(ArrayRef<GemmShape> shapes,
                                         double secondsPerShape) {
  std::vector<double> rates;
  for (const GemmShape &shape : shapes) {
    GemmRunner gemm(shape);
    double best = timeBestOf(secondsPerShape, [&] { gemm.run(); });
    rates.push_back(gemm.getFlops() / best);
  }
  return median(std::move(rates));
}

double mlir::dpc::measureTriadBandwidth(size_t bytesPerArray, double seconds) {
  size_t n = bytesPerArray / sizeof(double);
  // Constructing the arrays touches every page, so page faults are not
  // timed.
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  double *__restrict out = a.data();
  const double *__restrict x = b.data();
  const double *__restrict y = c.data();
  const double scalar = 3.0;
  auto step = [&] {
    for (size_t i = 0; i < n; ++i)
      out[i] = x[i] + scalar * y[i];
    clobberMemory(out);
  };
  double best = timeBestOf(seconds, step);
  return 3.0 * sizeof(double) * static_cast<double>(n) / best;
}
