//===- Calibrate.h - dpc-run --calibrate: measure this host -----*- C++ -*-===//
//
// `dpc-run --calibrate[=OUT.json]` measures this host's GEMM throughput,
// memory bandwidth, and all-reduce latency and bandwidth over the real
// communicator (Gloo over TCP loopback, one forked process per rank), and
// writes them as a cluster file (docs/cluster.md) the cost model reads with
// `--cluster=OUT.json`.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_CALIBRATE_H
#define DPC_TOOLS_DPC_RUN_CALIBRATE_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::dpc {

struct CalibrationOptions {
  /// Where the cluster file goes; empty: stdout.
  std::string outputPath;
  /// Processes to measure with, one per core (at least 2: a collective
  /// needs peers).
  int ranks = 2;
  /// Smaller messages and shorter timings (a few seconds in all), for tests.
  bool quick = false;
  /// For tests of the failure paths: this rank exits before it connects;
  /// this one never returns.
  int failRank = -1;
  int hangRank = -1;
  /// Seconds before every rank is stopped; 0: the default (60 s quick,
  /// 120 s otherwise).
  int deadlineSeconds = 0;
};

/// Measures the host and writes the cluster file, with a summary on stderr.
/// Reports its own errors (`dpc-run: calibration: ...`); the output file is
/// written whole at the end or not at all.
LogicalResult runCalibration(const CalibrationOptions &options);

} // namespace mlir::dpc

#endif // DPC_TOOLS_DPC_RUN_CALIBRATE_H
