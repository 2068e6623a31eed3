//===- CoreBindingTest.cpp - Each local rank on its own cores -------------===//

#include "dpc/Runtime/CoreBinding.h"

#include <gtest/gtest.h>

#include <thread>

using namespace dpc;

namespace {

TEST(CoreBinding, SharesAreContiguousAndCoverEveryCpu) {
  std::vector<int> cpus = {0, 1, 2, 3, 4, 5, 6};
  // 7 CPUs in 3 shares: the first one a CPU larger.
  EXPECT_EQ(getCpuShare(cpus, 0, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(getCpuShare(cpus, 1, 3), (std::vector<int>{3, 4}));
  EXPECT_EQ(getCpuShare(cpus, 2, 3), (std::vector<int>{5, 6}));
  // The CPUs the job may use, not 0..n-1.
  EXPECT_EQ(getCpuShare({4, 5, 8, 9}, 1, 2), (std::vector<int>{8, 9}));
  EXPECT_EQ(getCpuShare({3}, 0, 1), (std::vector<int>{3}));
  // Fewer CPUs than ranks, or no such rank: nothing to bind to.
  EXPECT_TRUE(getCpuShare({0, 1}, 0, 3).empty());
  EXPECT_TRUE(getCpuShare(cpus, 3, 3).empty());
  EXPECT_TRUE(getCpuShare(cpus, -1, 3).empty());
}

TEST(CoreBinding, BindsTheThreadAndThoseItCreates) {
  std::vector<int> allowed = getAllowedCpus();
  ASSERT_FALSE(allowed.empty());
  // In a thread of its own, so that the test process keeps its CPUs.
  std::thread([&] {
    std::vector<int> last = {allowed.back()};
    ASSERT_TRUE(bindToCpus(last).isSuccess());
    EXPECT_EQ(getAllowedCpus(), last);
    std::vector<int> inherited;
    std::thread([&] { inherited = getAllowedCpus(); }).join();
    EXPECT_EQ(inherited, last);
  }).join();
  EXPECT_EQ(getAllowedCpus(), allowed);
}

TEST(CoreBinding, RefusesNoCpuOrOneOutOfRange) {
  std::thread([] {
    EXPECT_EQ(bindToCpus({}).getMessage(), "cannot bind to no CPU");
    EXPECT_EQ(bindToCpus({-1}).getMessage(), "cannot bind to CPU -1");
  }).join();
}

} // namespace
