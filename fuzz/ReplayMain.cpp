//===- ReplayMain.cpp - Runs a fuzz target once on each input -------------===//
//
// The main of a fuzz target built without libFuzzer: each argument is a
// file, or a folder whose files are taken in name order, and each file is
// given to LLVMFuzzerTestOneInput once. A crash or a broken invariant
// aborts, as under libFuzzer; otherwise it prints how many inputs ran.
// Arguments that start with '-' are libFuzzer's flags and are skipped, so
// that one command line runs a corpus under either main.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/// The files `path` names: itself, or a folder's regular files in order.
static std::vector<std::string> listInputs(llvm::StringRef path) {
  std::vector<std::string> files;
  if (!llvm::sys::fs::is_directory(path)) {
    files.push_back(path.str());
    return files;
  }
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(path, error), end;
       it != end && !error; it.increment(error))
    if (llvm::sys::fs::is_regular_file(it->path()))
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: " << argv[0] << " FILE_OR_FOLDER...\n";
    return 2;
  }
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    // libFuzzer's flags (-runs=0 ...), which its own main would read.
    if (argv[i][0] == '-')
      continue;
    if (!llvm::sys::fs::exists(argv[i])) {
      llvm::errs() << argv[0] << ": " << argv[i] << ": no such file\n";
      return 2;
    }
    for (const std::string &file : listInputs(argv[i])) {
      auto buffer = llvm::MemoryBuffer::getFile(file);
      if (!buffer) {
        llvm::errs() << argv[0] << ": cannot read " << file << "\n";
        return 2;
      }
      llvm::errs() << "running " << file << "\n";
      LLVMFuzzerTestOneInput(
          reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
          (*buffer)->getBufferSize());
      ++count;
    }
  }
  llvm::outs() << "ran " << count << " inputs\n";
  return 0;
}
