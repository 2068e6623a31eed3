//===- GlooCommunicator.h - One rank of a Gloo communicator ----*- C++ -*-===//
//
// A rank of a Gloo communicator over TCP, joined through a file store that
// every rank of the host can see. Gloo reports failures by throwing; this
// wrapper catches them and returns their message as a Status, so that its
// callers build without exceptions like the rest of dpc.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_GLOOCOMMUNICATOR_H
#define DPC_RUNTIME_GLOOCOMMUNICATOR_H

#include "dpc/Runtime/Status.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace gloo {
class Context;
} // namespace gloo

namespace dpc {

class GlooCommunicator {
public:
  /// Joins rank `rank` of `size` ranks that meet through files in
  /// `storeDir` and talk TCP on `hostname`'s address. Connecting and every
  /// later operation give up after `timeout`, so a dead rank ends the
  /// others with an error instead of a hang.
  static Status connect(int rank, int size, const std::string &storeDir,
                        const std::string &hostname,
                        std::chrono::milliseconds timeout,
                        std::unique_ptr<GlooCommunicator> &communicator);

  ~GlooCommunicator();

  int getRank() const;
  int getSize() const;

  /// Returns once every rank has called it.
  Status barrier();

  /// Sums the `count` floats at `data` over the ranks, in place, with
  /// Gloo's ring algorithm (reduce-scatter, then all-gather).
  Status allReduceSum(float *data, size_t count);

private:
  explicit GlooCommunicator(std::shared_ptr<gloo::Context> context);

  std::shared_ptr<gloo::Context> context;
};

} // namespace dpc

#endif // DPC_RUNTIME_GLOOCOMMUNICATOR_H
