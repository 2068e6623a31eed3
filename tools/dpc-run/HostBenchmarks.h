//===- HostBenchmarks.h - GEMM and memory-bandwidth probes -----*- C++ -*-===//
//
// The compute and memory probes of `dpc-run --calibrate`: single-threaded
// OpenBLAS GEMMs and a STREAM triad, each timed best-of-several so that a
// moment when another process held the core does not count.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_HOSTBENCHMARKS_H
#define DPC_TOOLS_DPC_RUN_HOSTBENCHMARKS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlir::dpc {

/// Seconds on a monotonic clock, for differences only.
double getMonotonicSeconds();

/// Makes OpenBLAS compute on the calling thread only: one rank per core is
/// the model the calibration measures. Call before forking ranks.
void useSingleThreadedBlas();

/// The element type of a GEMM probe.
enum class GemmType { F32, F64 };

/// The best FLOP/s (2 n^3 per n x n x n product) of cblas_{s,d}gemm over
/// the square `sizes`, each repeated for about `secondsPerSize` (at least
/// three timed runs after one untimed one).
double measureGemmFlops(GemmType type, ArrayRef<int64_t> sizes,
                        double secondsPerSize);

/// The median of `values` (the mean of the middle two for an even count).
double median(std::vector<double> values);

/// One f32 GEMM of a training step: out[m, n] = op(a)[m, k] op(b)[k, n],
/// op transposing where asked (as a layer's backward reads its operands).
struct GemmShape {
  int64_t m, n, k;
  bool transposeA, transposeB;
};

/// The GEMMs a layer's step runs, on `tokens` rows and widths of 256 and
/// 1024: forward x w, input gradient dy w^T, weight gradient x^T dy.
SmallVector<GemmShape> getTrainingGemmShapes(int64_t tokens);

/// One f32 GEMM's operands, allocated once so that the product can be run
/// again and again (a probe's unit of compute).
class GemmRunner {
public:
  explicit GemmRunner(const GemmShape &shape);
  /// One cblas_sgemm of the shape.
  void run();
  /// Seconds `runs` products in a row take.
  double time(int64_t runs);
  /// Floating-point operations of one run: 2 m n k.
  double getFlops() const;

private:
  GemmShape shape;
  std::vector<float> a, b, c;
};

/// The median over `shapes` of each one's best f32 FLOP/s (cblas_sgemm,
/// about `secondsPerShape` each, at least three timed runs).
double measureMedianGemmFlops(ArrayRef<GemmShape> shapes,
                              double secondsPerShape);

/// The best bandwidth in bytes/s of the STREAM triad a[i] = b[i] + s * c[i]
/// over three double arrays of `bytesPerArray` bytes, repeated for about
/// `seconds` (at least three timed runs). Bytes are counted as STREAM does:
/// 24 per element, without the write-allocate read of `a`.
double measureTriadBandwidth(size_t bytesPerArray, double seconds);

} // namespace mlir::dpc

#endif // DPC_TOOLS_DPC_RUN_HOSTBENCHMARKS_H
