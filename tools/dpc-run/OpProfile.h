//===- OpProfile.h - Every op's time beside its prediction ------*- C++ -*-===//
//
// `dpc-run --profile=FILE.json`: each rank times the ops its program marks
// (ProgramAbi.h) over the timed steps; rank 0 joins every rank's times
// with the manifest's table of those ops (their work and the cost model's
// prediction), writes the whole, and prints a summary by op type, so that
// a step slower than the plan said shows which ops make the difference.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_OPPROFILE_H
#define DPC_TOOLS_DPC_RUN_OPPROFILE_H

#include "Manifest.h"

namespace mlir::dpc::artifact {

/// One rank's op times (seconds over `steps` steps that took
/// `stepSeconds` in all), as rank 0 reads them back.
std::string serializeOpTimes(const std::vector<double> &opSeconds,
                             double stepSeconds, int steps);

/// Writes `file` from every rank's serializeOpTimes, in rank order, and
/// prints rank 0's summary to stdout.
::dpc::Status writeOpProfile(const Manifest &manifest,
                             const std::vector<std::string> &perRank, int steps,
                             const std::string &file);

} // namespace mlir::dpc::artifact

#endif // DPC_TOOLS_DPC_RUN_OPPROFILE_H
