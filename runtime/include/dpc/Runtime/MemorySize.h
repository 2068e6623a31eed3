//===- MemorySize.h - Sizes of memory as users write them -------*- C++ -*-===//

#ifndef DPC_RUNTIME_MEMORYSIZE_H
#define DPC_RUNTIME_MEMORYSIZE_H

#include "dpc/Runtime/Status.h"

#include <string>

namespace dpc {

/// `text` in bytes: a positive number with an optional unit, B, KB/MB/GB/TB
/// in powers of 1000 or KiB/MiB/GiB/TiB in powers of 1024; a bare number is
/// in `defaultUnitBytes`.
Status parseMemorySize(const std::string &text, double defaultUnitBytes,
                       double &bytes);

} // namespace dpc

#endif // DPC_RUNTIME_MEMORYSIZE_H
