//===- LocalRanks.h - Ranks forked on this host ----------------*- C++ -*-===//
//
// Forks one process per rank, collects what each sends back, and ends them
// all together: one rank that fails or outlives the deadline gets the others
// killed at once, so nothing waits on a dead peer.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_LOCALRANKS_H
#define DPC_TOOLS_DPC_RUN_LOCALRANKS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <chrono>
#include <string>
#include <vector>

namespace mlir::dpc {

/// Runs `body(rank, result)` in `numRanks` processes forked from this one
/// and returns each rank's `result`, in rank order. A body that returns
/// false has reported why on stderr; its process exits with status 1. When
/// a rank exits non-zero, dies of a signal, or has not finished after
/// `deadline`, every other rank is killed and `error` names the rank and
/// what happened ("rank 1 exited with status 1"). Flush buffered output
/// before calling: the children inherit the buffers.
FailureOr<std::vector<std::string>>
runLocalRanks(int numRanks, std::chrono::seconds deadline,
              function_ref<bool(int rank, std::string &result)> body,
              std::string &error);

} // namespace mlir::dpc

#endif // DPC_TOOLS_DPC_RUN_LOCALRANKS_H
