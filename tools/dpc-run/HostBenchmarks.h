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

#include <cstddef>
#include <cstdint>

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

/// The best bandwidth in bytes/s of the STREAM triad a[i] = b[i] + s * c[i]
/// over three double arrays of `bytesPerArray` bytes, repeated for about
/// `seconds` (at least three timed runs). Bytes are counted as STREAM does:
/// 24 per element, without the write-allocate read of `a`.
double measureTriadBandwidth(size_t bytesPerArray, double seconds);

} // namespace mlir::dpc

#endif // DPC_TOOLS_DPC_RUN_HOSTBENCHMARKS_H
