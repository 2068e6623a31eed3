//===- SchedulerSliceTest.cpp - The communication threads' short slice ----===//
//
// Reads the slice the kernel gives a thread from /proc (Linux 6.6 and
// later print `se.slice`); on kernels that do not, there is nothing to
// check.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/SchedulerSlice.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

using namespace dpc;

namespace {

/// The calling thread's slice in nanoseconds, if the kernel reports it.
std::optional<uint64_t> readSlice() {
  std::ifstream sched("/proc/thread-self/sched");
  std::string line;
  while (std::getline(sched, line)) {
    if (line.rfind("se.slice", 0) != 0)
      continue;
    std::istringstream fields(line.substr(line.find(':') + 1));
    uint64_t slice;
    if (fields >> slice)
      return slice;
  }
  return std::nullopt;
}

TEST(SchedulerSliceTest, ACommunicationThreadRunsInShortSlices) {
  std::thread([] {
    std::optional<uint64_t> before = readSlice();
    bool taken = setSchedulerSlice(kCommunicationSliceNs);
    std::optional<uint64_t> after = readSlice();
    if (!before || !taken)
      GTEST_SKIP() << "this kernel has no per-thread fair slice";
    EXPECT_EQ(*after, kCommunicationSliceNs);
    // Back to the default, which is longer.
    EXPECT_TRUE(setSchedulerSlice(0));
    EXPECT_EQ(readSlice(), before);
    EXPECT_GT(*before, kCommunicationSliceNs);
  }).join();
}

TEST(SchedulerSliceTest, ThreadsStartedAfterwardsInheritIt) {
  std::thread([] {
    if (!readSlice() || !setSchedulerSlice(kCommunicationSliceNs))
      GTEST_SKIP() << "this kernel has no per-thread fair slice";
    std::optional<uint64_t> child;
    std::thread([&] { child = readSlice(); }).join();
    EXPECT_EQ(child, kCommunicationSliceNs);
  }).join();
}

} // namespace
