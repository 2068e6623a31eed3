//===- ArtifactFlags.h - dpc-run's flags for training an artifact -*- C++ -*-//
//
// The command line of `dpc-run model.dpc ...`, shared by dpc-run and by
// dpc-run-artifact, the same launcher built without MLIR (linked with
// LLVM's support library alone), which a machine that has only a GPU
// driver can run.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_ARTIFACTFLAGS_H
#define DPC_TOOLS_DPC_RUN_ARTIFACTFLAGS_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::dpc::artifact {

extern llvm::cl::OptionCategory runCategory, trainCategory;
/// The artifact to train (positional), and where outputs go.
extern llvm::cl::opt<std::string> artifactPath, outputDir;

/// Checks the training flags and trains the artifact they name; returns
/// the exit status.
int runArtifactFromFlags();

} // namespace mlir::dpc::artifact

#endif // DPC_TOOLS_DPC_RUN_ARTIFACTFLAGS_H
