//===- KernelError.cpp - Why the last kernel failed -----------------------===//
//
// Kernels run without exceptions; the few that can fail on their data
// return false and leave the reason here, one per thread, so that ranks
// running as threads do not overwrite each other's message.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <utility>

namespace {
thread_local std::string kernelError;
} // namespace

const std::string &dpc::cpu::getKernelError() { return kernelError; }

bool dpc::cpu::detail::fail(std::string message) {
  kernelError = std::move(message);
  return false;
}
