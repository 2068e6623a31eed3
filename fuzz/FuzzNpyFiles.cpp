//===- FuzzNpyFiles.cpp - The .npy and .npz readers -----------------------===//
//
// dpc-run reads initial values and batches from .npy and .npz files. Any
// bytes must read or fail with an error: never crash or allocate what the
// file does not hold. A tensor that reads must write back and read again
// to the same bytes.
//
//===----------------------------------------------------------------------===//

#include "ScratchFile.h"

#include "dpc/Runtime/Npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dpc::HostTensor tensor;
  if (dpc::parseNpy(data, size, "fuzz.npy", tensor).isSuccess()) {
    std::string bytes, again;
    dpc::HostTensor reread;
    if (dpc::serializeNpy(tensor, bytes).isError() ||
        dpc::parseNpy(bytes.data(), bytes.size(), "printed.npy", reread)
            .isError() ||
        dpc::serializeNpy(reread, again).isError() || again != bytes)
      std::abort(); // What was accepted does not round-trip.
  }
  std::string path = dpc::fuzz::writeScratchFile(data, size, "fuzz.npz");
  std::vector<dpc::NamedTensor> tensors;
  (void)dpc::readNpzFile(path, tensors);
  return 0;
}
