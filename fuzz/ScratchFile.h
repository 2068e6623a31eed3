//===- ScratchFile.h - Fuzz inputs as files in a private folder -*- C++ -*-===//
//
// The readers under test take paths (the ONNX importer resolves external
// data against the model's folder), so each input is written to a file in
// a folder of this process's own, which holds nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FUZZ_SCRATCHFILE_H
#define DPC_FUZZ_SCRATCHFILE_H

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace dpc::fuzz {

/// Writes `size` bytes to `name` in this process's scratch folder and
/// returns the file's path; aborts when the file cannot be written, since
/// no input could then be tried.
inline std::string writeScratchFile(const uint8_t *data, size_t size,
                                    llvm::StringRef name) {
  static std::string folder = [] {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("dpc-fuzz", path)) {
      llvm::errs() << "dpc-fuzz: cannot create a scratch folder\n";
      std::abort();
    }
    return std::string(path);
  }();
  llvm::SmallString<128> path(folder);
  llvm::sys::path::append(path, name);
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error) {
    llvm::errs() << "dpc-fuzz: cannot write " << path << "\n";
    std::abort();
  }
  os.write(reinterpret_cast<const char *>(data), size);
  os.close();
  return std::string(path);
}

} // namespace dpc::fuzz

#endif // DPC_FUZZ_SCRATCHFILE_H
