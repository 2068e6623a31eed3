//===- CoreBinding.h - Each local rank on its own cores ---------*- C++ -*-===//
//
// Ranks forked on one host run their compute, communication and Gloo
// threads wherever the scheduler puts them. With as many ranks as cores,
// a rank's compute thread woken after a wait often lands on a core another
// rank computes on, and both run at half speed until the load balancer
// moves one: milliseconds by which that rank lags and every collective
// waits (on the bench GPT's data-parallel step, 7 ms of waits a step
// unbound, 4 bound). As `mpirun --bind-to core` and `torchrun`'s NUMA
// binding do, each local rank is bound to its own share of the CPUs the
// job may use.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COREBINDING_H
#define DPC_RUNTIME_COREBINDING_H

#include "dpc/Runtime/Status.h"

#include <vector>

namespace dpc {

/// The CPUs the calling thread may run on, ascending (empty where the
/// system does not say).
std::vector<int> getAllowedCpus();

/// Part `index` of `cpus` cut into `count` contiguous parts, the first
/// ones a CPU larger where `count` does not divide them (empty where there
/// are fewer CPUs than parts).
std::vector<int> getCpuShare(const std::vector<int> &cpus, int index,
                             int count);

/// Binds the calling thread, and every thread it creates afterwards, to
/// `cpus`.
Status bindToCpus(const std::vector<int> &cpus);

} // namespace dpc

#endif // DPC_RUNTIME_COREBINDING_H
