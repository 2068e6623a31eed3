//===- Collectives.h - Simulated ranks exchanging values --------*- C++ -*-===//
//
// The simulated ranks of one interpretRanks call run on threads and meet
// here: at its n-th collective, each rank deposits its local value under
// (n, its group) and waits, for a bounded time, until its whole group has;
// then each computes its own result from the group's values. A program is
// the same on every rank, so the n-th collective of every rank of a group
// is the same op.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_INTERPRETER_COLLECTIVES_H
#define DPC_LIB_INTERPRETER_COLLECTIVES_H

#include "Tensor.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace mlir::dpc::interpreter {

struct RankContext;

class CollectiveContext {
public:
  /// Waits at most `timeoutSeconds` for a group's last rank.
  explicit CollectiveContext(double timeoutSeconds = 60.0)
      : timeoutSeconds(timeoutSeconds) {}

  /// Deposits `value` as `rank`'s in its `sequence`-th collective among
  /// `group` (devices in the group's order) and returns every member's
  /// value, in that order. Fails with `error` when a peer failed or did not
  /// arrive in time.
  FailureOr<std::vector<Tensor>> exchange(int64_t rank, uint64_t sequence,
                                          ArrayRef<int64_t> group, Tensor value,
                                          std::string &error);

  /// Records that `rank` stopped on an error: its peers stop waiting.
  void abort(int64_t rank);

  /// Leaves `value` for rank `to`, from rank `from`; returns at once.
  void send(int64_t from, int64_t to, Tensor value);

  /// The oldest value rank `from` left for rank `to` and `to` has not taken,
  /// waiting at most the timeout for one. Fails with `error` when none came
  /// in time or a rank failed.
  FailureOr<Tensor> receive(int64_t from, int64_t to, std::string &error);

private:
  struct Meeting {
    std::vector<Tensor> values;
    size_t arrived = 0, left = 0;
  };
  double timeoutSeconds;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::pair<uint64_t, int64_t>, Meeting> meetings;
  /// Values sent and not yet received, per (sender, receiver), in order.
  std::map<std::pair<int64_t, int64_t>, std::deque<Tensor>> mailboxes;
  std::optional<int64_t> failedRank;
};

/// Runs a dpc.send (`input` is its operand) or a dpc.recv (returns the
/// value received) as `rank`.
FailureOr<Tensor> runPointToPoint(Operation *op, const Tensor *input,
                                  const RankContext &rank);

/// The result of the collective `op` for `rank`, whose local operand is
/// `input`; `sequence` counts the rank's collectives so far.
FailureOr<Tensor> runCollective(Operation *op, const Tensor &input,
                                const RankContext &rank, uint64_t sequence);

} // namespace mlir::dpc::interpreter

#endif // DPC_LIB_INTERPRETER_COLLECTIVES_H
