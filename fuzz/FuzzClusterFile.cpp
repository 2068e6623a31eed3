//===- FuzzClusterFile.cpp - The cluster-file reader ----------------------===//
//
// Any text must read as a cluster or fail with a one-line error; a cluster
// that reads must print to text that reads back to the same text.
//
//===----------------------------------------------------------------------===//

#include "dpc/Analysis/CostModel/Cluster.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::string error;
  mlir::FailureOr<mlir::dpc::Cluster> cluster =
      mlir::dpc::parseClusterJson(text, "fuzz.json", error);
  if (mlir::failed(cluster)) {
    if (error.empty())
      std::abort(); // Refused without saying why.
    return 0;
  }
  std::string printed = mlir::dpc::printClusterJson(*cluster);
  mlir::FailureOr<mlir::dpc::Cluster> reread =
      mlir::dpc::parseClusterJson(printed, "printed.json", error);
  if (mlir::failed(reread) || mlir::dpc::printClusterJson(*reread) != printed)
    std::abort(); // What was accepted does not round-trip.
  return 0;
}
