//===- TrainingData.h - Batches and the learning rate -----------*- C++ -*-===//
//
// What changes from step to step besides the model: each step's global
// batch (drawn, or read from a .npz) and its learning rate.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_TRAININGDATA_H
#define DPC_TOOLS_DPC_RUN_TRAININGDATA_H

#include "ArtifactRun.h"
#include "Manifest.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::dpc::artifact {

/// The learning rate of step `step` (1-based): `base` after the warm-up,
/// decayed as --lr-schedule says.
double getLearningRate(const ArtifactRunOptions &options, double base,
                       int step);

/// The global batches of --data FILE.npz, by input name.
struct DataSource {
  llvm::StringMap<::dpc::HostTensor> arrays;
  /// How many batches each array holds (its leading dimension over the
  /// batch's).
  int64_t batches = 1;
};

/// Reads --data (nothing for synthetic data) and checks it against the
/// step's inputs.
::dpc::Status loadData(const ArtifactRunOptions &options,
                       const Manifest &manifest, DataSource &data);

/// The global value of input `spec` at step `step` (1-based).
::dpc::Status getBatch(const ArtifactRunOptions &options,
                       const TensorSpec &spec, const DataSource &data, int step,
                       ::dpc::HostTensor &out);

} // namespace mlir::dpc::artifact

#endif // DPC_TOOLS_DPC_RUN_TRAININGDATA_H
