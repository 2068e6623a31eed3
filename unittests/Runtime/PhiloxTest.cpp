//===- PhiloxTest.cpp - Counter-based random numbers ----------------------===//

#include "dpc/Runtime/Philox.h"

#include <gtest/gtest.h>

#include <array>

using namespace dpc;

// Known-answer vectors of Philox4x32-10 from the Random123 distribution
// (kat_vectors).
namespace {
std::array<uint32_t, 4> philox(std::array<uint32_t, 4> counter,
                               std::array<uint32_t, 2> key) {
  philox4x32(counter.data(), key[0], key[1]);
  return counter;
}
} // namespace

TEST(PhiloxTest, KnownAnswers) {
  EXPECT_EQ(philox({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu,
                                     0x9b00dbd8u}));
  EXPECT_EQ(philox({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                   {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u,
                                     0x6d5451fdu}));
  EXPECT_EQ(philox({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                   {0xa4093822u, 0x299f31d0u}),
            (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u,
                                     0x24126ea1u}));
}

TEST(PhiloxTest, DropoutKeepsTheExpectedFraction) {
  for (double ratio : {0.1, 0.5, 0.9}) {
    int kept = 0, count = 100000;
    for (int i = 0; i < count; ++i)
      kept += dropoutKeeps(/*seed=*/42, /*stream=*/3, i, ratio);
    // Binomial standard deviation is at most 0.0016 of the count here.
    EXPECT_NEAR(static_cast<double>(kept) / count, 1.0 - ratio, 0.01);
  }
  for (int i = 0; i < 1000; ++i)
    EXPECT_TRUE(dropoutKeeps(1, 2, i, 0.0));
}

TEST(PhiloxTest, DropoutDependsOnSeedStreamAndIndex) {
  int sameSeed = 0, sameStream = 0;
  for (int i = 0; i < 1000; ++i) {
    bool base = dropoutKeeps(7, 0, i, 0.5);
    EXPECT_EQ(base, dropoutKeeps(7, 0, i, 0.5));
    sameSeed += base == dropoutKeeps(8, 0, i, 0.5);
    sameStream += base == dropoutKeeps(7, 1, i, 0.5);
  }
  // Independent masks agree on about half the elements.
  EXPECT_NEAR(sameSeed, 500, 80);
  EXPECT_NEAR(sameStream, 500, 80);
}
