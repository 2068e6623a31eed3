//===- CoreBinding.cpp - Each local rank on its own cores -----------------===//

#include "dpc/Runtime/CoreBinding.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sched.h>
#include <string>

std::vector<int> dpc::getAllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0)
    return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set))
      cpus.push_back(cpu);
  return cpus;
}

std::vector<int> dpc::getCpuShare(const std::vector<int> &cpus, int index,
                                  int count) {
  int total = static_cast<int>(cpus.size());
  if (count <= 0 || index < 0 || index >= count || total < count)
    return {};
  int base = total / count, larger = total % count;
  int begin = index * base + std::min(index, larger);
  int size = base + (index < larger ? 1 : 0);
  return std::vector<int>(cpus.begin() + begin, cpus.begin() + begin + size);
}

dpc::Status dpc::bindToCpus(const std::vector<int> &cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE)
      return Status::error("cannot bind to CPU " + std::to_string(cpu));
    CPU_SET(cpu, &set);
  }
  if (cpus.empty())
    return Status::error("cannot bind to no CPU");
  if (::sched_setaffinity(0, sizeof(set), &set) != 0)
    return Status::error(std::string("cannot bind to its CPUs: ") +
                         std::strerror(errno));
  return Status::success();
}
