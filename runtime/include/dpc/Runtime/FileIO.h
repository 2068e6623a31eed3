//===- FileIO.h - Whole-file reads and atomic writes ------------*- C++ -*-===//
//
// Reading a file into memory and writing one so that readers never see it
// half-written: the bytes go to a temporary file next to it, which is then
// renamed over the destination.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_FILEIO_H
#define DPC_RUNTIME_FILEIO_H

#include "dpc/Runtime/Status.h"

#include <string>

namespace dpc {

/// Reads all of `path` into `contents`.
Status readFile(const std::string &path, std::string &contents);

/// Writes `contents` to `path` through a temporary file and a rename, so
/// `path` holds either its old contents or all of the new ones.
Status writeFileAtomically(const std::string &path,
                           const std::string &contents);

} // namespace dpc

#endif // DPC_RUNTIME_FILEIO_H
