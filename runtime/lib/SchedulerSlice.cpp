//===- SchedulerSlice.cpp - Short scheduler slices for communication -----===//

#include "dpc/Runtime/SchedulerSlice.h"

#include <linux/sched.h>
#include <linux/sched/types.h>
#include <sys/syscall.h>
#include <unistd.h>

bool dpc::setSchedulerSlice(uint64_t nanoseconds) {
  sched_attr attr = {};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0)
    return false;
  // Only a fair thread's slice: a real-time or deadline policy set by the
  // user stays as it is.
  if (attr.sched_policy != SCHED_NORMAL && attr.sched_policy != SCHED_BATCH)
    return false;
  attr.size = sizeof(attr);
  attr.sched_flags = 0;
  attr.sched_runtime = nanoseconds;
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}
