//===- SchedulerSlice.h - Short scheduler slices for communication -------===//
//
// A rank's communication threads wake to move a few bytes while its compute
// thread holds the core. Linux's fair scheduler (EEVDF, 6.6 and later) lets
// a woken thread wait out the running thread's slice, milliseconds, unless
// its own slice is shorter: each small collective (a batch norm's
// statistics) then costs that wait on every rank. The communication threads
// ask for a short slice (Linux 6.12 and later take sched_runtime as a fair
// thread's slice; older kernels keep their default, and a refusal changes
// nothing), so they run as soon as their data arrives and give the core
// back when they block.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_SCHEDULERSLICE_H
#define DPC_RUNTIME_SCHEDULERSLICE_H

#include <cstdint>

namespace dpc {

/// The slice the communication threads ask for: the kernel's shortest.
constexpr uint64_t kCommunicationSliceNs = 100000;

/// Sets the calling thread's scheduler slice (0: the kernel's default);
/// threads it creates afterwards inherit it. Returns whether the kernel
/// took it.
bool setSchedulerSlice(uint64_t nanoseconds);

} // namespace dpc

#endif // DPC_RUNTIME_SCHEDULERSLICE_H
