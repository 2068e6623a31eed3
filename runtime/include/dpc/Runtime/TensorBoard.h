//===- TensorBoard.h - Scalars as TensorBoard event files -------*- C++ -*-===//
//
// Writes `events.out.tfevents.<time>.<host>` files that TensorBoard reads:
// a TFRecord stream (length, masked CRC-32C of the length, data, masked
// CRC-32C of the data) of Event protocol buffers, the first naming the
// file version, the others each holding scalar summaries of one step. The
// few protobuf fields needed are encoded here, so the runtime needs no
// protobuf or TensorFlow.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TENSORBOARD_H
#define DPC_RUNTIME_TENSORBOARD_H

#include "dpc/Runtime/Status.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace dpc {

class TensorBoardWriter {
public:
  /// Creates the directory if needed and an event file in it.
  Status open(const std::string &dir);
  ~TensorBoardWriter();

  /// Appends the scalars `(tag, value)` of step `step`; flushed at once,
  /// so that a running TensorBoard sees them.
  Status addScalars(int64_t step,
                    const std::vector<std::pair<std::string, double>> &values);

  const std::string &getPath() const { return path; }

private:
  Status writeRecord(const std::string &data);

  std::string path;
  std::FILE *file = nullptr;
};

} // namespace dpc

#endif // DPC_RUNTIME_TENSORBOARD_H
