//===- LocalRanks.h - Ranks forked on this host ----------------*- C++ -*-===//
//
// Forks one process per rank, collects what each sends back, and ends them
// all together: one rank that fails or outlives the deadline gets the others
// killed at once, so nothing waits on a dead peer.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_LOCALRANKS_H
#define DPC_RUNTIME_LOCALRANKS_H

#include "dpc/Runtime/Status.h"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace dpc {

/// Runs `body(rank, result)` in `numRanks` processes forked from this one
/// and puts each rank's `result` in `results`, in rank order. A body that
/// returns false has reported why on stderr; its process exits with
/// status 1. When a rank exits non-zero, dies of a signal, or has not
/// finished after `deadline`, every other rank is killed and the error
/// names the rank and what happened ("rank 1 exited with status 1"). Flush
/// buffered output before calling: the children inherit the buffers.
Status
runLocalRanks(int numRanks, std::chrono::seconds deadline,
              const std::function<bool(int rank, std::string &result)> &body,
              std::vector<std::string> &results);

} // namespace dpc

#endif // DPC_RUNTIME_LOCALRANKS_H
