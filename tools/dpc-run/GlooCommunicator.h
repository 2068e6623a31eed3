//===- GlooCommunicator.h - One rank of a Gloo communicator ----*- C++ -*-===//
//
// A rank of a Gloo communicator over TCP, joined through a file store that
// every rank of the host can see. Gloo reports failures by throwing; this
// wrapper catches them and returns their message, so that its callers build
// without exceptions like the rest of dpc.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_GLOOCOMMUNICATOR_H
#define DPC_TOOLS_DPC_RUN_GLOOCOMMUNICATOR_H

#include "llvm/ADT/ArrayRef.h"

#include <chrono>
#include <memory>
#include <string>

namespace gloo {
class Context;
} // namespace gloo

namespace mlir::dpc {

class GlooCommunicator {
public:
  /// Joins rank `rank` of `size` ranks that meet through files in
  /// `storeDir` and talk TCP on `hostname`'s address. Connecting and every
  /// later operation give up after `timeout`, so a dead rank ends the others
  /// with an error instead of a hang. Returns null, with `error` set, on
  /// failure.
  static std::unique_ptr<GlooCommunicator>
  connect(int rank, int size, const std::string &storeDir,
          const std::string &hostname, std::chrono::milliseconds timeout,
          std::string &error);

  ~GlooCommunicator();

  int getRank() const;
  int getSize() const;

  /// Returns once every rank has called it.
  bool barrier(std::string &error);

  /// Sums `data` over the ranks, in place, with Gloo's ring algorithm
  /// (reduce-scatter, then all-gather).
  bool allReduceSum(llvm::MutableArrayRef<float> data, std::string &error);

private:
  explicit GlooCommunicator(std::shared_ptr<gloo::Context> context);

  std::shared_ptr<gloo::Context> context;
};

} // namespace mlir::dpc

#endif // DPC_TOOLS_DPC_RUN_GLOOCOMMUNICATOR_H
