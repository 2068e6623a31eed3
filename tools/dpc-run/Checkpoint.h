//===- Checkpoint.h - Checkpoints as shards ---------------------*- C++ -*-===//
//
// DIR/step-<K>/rank<r>.npz holds rank r's blocks, each named
// "role:name@start,start"; DIR/step-<K>/meta.json the whole tensors'
// shapes and every shard's size and CRC-32C; DIR/latest the step to resume
// from. RankRunner::saveCheckpoint writes them.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_CHECKPOINT_H
#define DPC_TOOLS_DPC_RUN_CHECKPOINT_H

#include "Manifest.h"

namespace mlir::dpc::artifact {

/// The name of rank `rank`'s block of `spec` in its shard.
std::string getBlockName(const TensorSpec &spec, int rank);

/// Reads the checkpoint in `dir` (its `latest`, or `dir` itself when it is
/// one step's directory): every tensor, whole, keyed "role:name", and the
/// step it was saved after. Shards are checked against the sizes and
/// CRC-32Cs meta.json records; `where` is set to the step's directory.
::dpc::Status loadCheckpoint(const std::string &dir,
                             std::vector<::dpc::NamedTensor> &tensors,
                             int &step, std::string &where);

} // namespace mlir::dpc::artifact

#endif // DPC_TOOLS_DPC_RUN_CHECKPOINT_H
