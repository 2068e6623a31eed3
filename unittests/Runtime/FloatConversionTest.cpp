//===- FloatConversionTest.cpp - Half and bfloat16 conversions ------------===//
//
// Rounding to nearest even, subnormals, overflow and NaN for both 16-bit
// formats.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/FloatConversion.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dpc;

namespace {

TEST(Half, ExactValues) {
  EXPECT_EQ(convertToHalf(1.0), 0x3c00);
  EXPECT_EQ(convertToHalf(-2.0), 0xc000);
  EXPECT_EQ(convertToHalf(65504.0), 0x7bff);
  EXPECT_EQ(convertToHalf(0.0), 0x0000);
  EXPECT_EQ(convertToHalf(-0.0), 0x8000);
  EXPECT_EQ(convertFromHalf(0x3555), 0.333251953125f);
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to even (1).
  EXPECT_EQ(convertToHalf(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between two odd/even neighbours: up.
  EXPECT_EQ(convertToHalf(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(convertToHalf(1.0 + std::ldexp(1.0, -11) + 1e-9), 0x3c01);
}

TEST(Half, SubnormalsOverflowAndNaN) {
  EXPECT_EQ(convertToHalf(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(convertToHalf(std::ldexp(1.0, -25)), 0x0000); // tie to even
  EXPECT_EQ(convertToHalf(std::ldexp(3.0, -25)), 0x0002);
  EXPECT_EQ(convertFromHalf(0x0001), std::ldexp(1.0f, -24));
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(convertToHalf(std::ldexp(1.0, -14) - std::ldexp(1.0, -26)), 0x0400);
  EXPECT_EQ(convertToHalf(65520.0), 0x7c00);
  EXPECT_EQ(convertToHalf(65519.0), 0x7bff);
  EXPECT_EQ(convertToHalf(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isnan(convertFromHalf(convertToHalf(NAN))));
}

TEST(Half, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = convertFromHalf(static_cast<uint16_t>(bits));
    if (std::isnan(value))
      continue;
    EXPECT_EQ(convertToHalf(value), bits);
  }
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(convertToBFloat16(1.0), 0x3f80);
  EXPECT_EQ(convertToBFloat16(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  EXPECT_EQ(convertToBFloat16(1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82);
  EXPECT_EQ(convertToBFloat16(3.0e38), 0x7f62);
  EXPECT_EQ(convertToBFloat16(3.4e38), 0x7f80); // overflows
  EXPECT_EQ(convertFromBFloat16(0x0001), std::ldexp(1.0f, -133));
  EXPECT_TRUE(std::isnan(convertFromBFloat16(convertToBFloat16(NAN))));
}

TEST(BFloat16, EveryBitPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = convertFromBFloat16(static_cast<uint16_t>(bits));
    if (std::isnan(value))
      continue;
    EXPECT_EQ(convertToBFloat16(value), bits);
  }
}

} // namespace
