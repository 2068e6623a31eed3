//===- dpc-run-artifact.cpp - dpc-run's training mode, without MLIR -------===//
//
// `dpc-run-artifact model.dpc ...` is `dpc-run model.dpc ...`: the same
// launcher, ranks and reports, linked with LLVM's support library alone
// (no MLIR, no interpreter), so that it and a few small libraries can be
// carried to a machine that has a GPU driver and nothing else
// (scripts/gpu-check.sh).
//
//===----------------------------------------------------------------------===//

#include "ArtifactFlags.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::dpc::artifact;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::HideUnrelatedOptions({&runCategory, &trainCategory});
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "dpc-run-artifact: trains a dpc artifact (dpc-run's training mode)\n\n"
      "  dpc-run-artifact model.dpc [--nproc-per-node N] [--steps K] "
      "[--data FILE.npz]\n");
  if (artifactPath.empty()) {
    llvm::errs() << "dpc-run-artifact: error: nothing to run: pass an "
                    "artifact (model.dpc)\n";
    return 1;
  }
  return runArtifactFromFlags();
}
