//===- SimdMathTest.cpp - Vectorizable exp, erf and tanh ------------------===//
//
// Floats across the whole range where the result is neither zero nor
// saturated (every 97th bit pattern: about ten million per range, all
// exponents and low bits) against libm's double-precision result, in units
// in the last place of the float nearest it; and the special values.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/SimdMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// How many floats lie between `actual` and the float nearest `exact`.
double getUlpError(float actual, double exact) {
  float rounded = static_cast<float>(exact);
  if (actual == rounded)
    return 0;
  // The spacing of floats at `rounded` (the smallest normal's below it).
  float magnitude = std::fabs(rounded);
  float spacing =
      std::nextafter(std::fmax(magnitude, std::numeric_limits<float>::min()),
                     std::numeric_limits<float>::infinity()) -
      std::fmax(magnitude, std::numeric_limits<float>::min());
  return std::fabs(static_cast<double>(actual) - exact) / spacing;
}

/// The largest error of `approximate` against `exact` over the floats of
/// [`low`, `high`] (both of one sign), every 97th bit pattern.
template <typename Approximate, typename Exact>
double getMaxUlpError(Approximate approximate, Exact exact, float low,
                      float high) {
  const uint32_t stride = 97;
  uint32_t first, last;
  float from = std::fabs(low) < std::fabs(high) ? low : high;
  float to = std::fabs(low) < std::fabs(high) ? high : low;
  std::memcpy(&first, &from, sizeof(first));
  std::memcpy(&last, &to, sizeof(last));
  double worst = 0;
  for (uint64_t bits = first; bits <= last; bits += stride) {
    float x = fromBits(static_cast<uint32_t>(bits));
    worst = std::fmax(worst, getUlpError(approximate(x), exact(double(x))));
  }
  return worst;
}

double exactExp(double x) { return std::exp(x); }
double exactErf(double x) { return std::erf(x); }
double exactTanh(double x) { return std::tanh(x); }

TEST(SimdMathTest, ExpIsWithinTwoUlp) {
  // Normal results only: below -87.3 exp is subnormal, where the error is
  // one rounding of a much coarser spacing.
  EXPECT_LE(getMaxUlpError(dpc::simd::exp, exactExp, 0.0f, 88.72f), 2.0);
  EXPECT_LE(getMaxUlpError(dpc::simd::exp, exactExp, -0.0f, -87.3f), 2.0);
}

TEST(SimdMathTest, ExpLimits) {
  float infinity = std::numeric_limits<float>::infinity();
  EXPECT_EQ(dpc::simd::exp(0.0f), 1.0f);
  EXPECT_EQ(dpc::simd::exp(89.0f), infinity);
  EXPECT_EQ(dpc::simd::exp(1e30f), infinity);
  EXPECT_EQ(dpc::simd::exp(infinity), infinity);
  EXPECT_EQ(dpc::simd::exp(-infinity), 0.0f);
  EXPECT_EQ(dpc::simd::exp(-1e30f), 0.0f);
  EXPECT_TRUE(std::isnan(dpc::simd::exp(std::nanf(""))));
  // Subnormal results, within one spacing of the smallest subnormal.
  for (float x : {-88.0f, -95.0f, -103.0f})
    EXPECT_NEAR(dpc::simd::exp(x), std::exp(double(x)), 1.5e-45) << x;
}

TEST(SimdMathTest, ErfIsWithinTwoUlp) {
  // Up to 4 (erf rounds to 1 beyond 3.92), both signs.
  EXPECT_LE(getMaxUlpError(dpc::simd::erf, exactErf, 0.0f, 4.0f), 2.0);
  EXPECT_LE(getMaxUlpError(dpc::simd::erf, exactErf, -0.0f, -4.0f), 2.0);
}

TEST(SimdMathTest, ErfLimits) {
  float infinity = std::numeric_limits<float>::infinity();
  EXPECT_EQ(dpc::simd::erf(infinity), 1.0f);
  EXPECT_EQ(dpc::simd::erf(-infinity), -1.0f);
  EXPECT_EQ(dpc::simd::erf(10.0f), 1.0f);
  EXPECT_EQ(dpc::simd::erf(-1e30f), -1.0f);
  EXPECT_TRUE(std::signbit(dpc::simd::erf(-0.0f)));
  EXPECT_FLOAT_EQ(dpc::simd::erf(1e-30f), static_cast<float>(std::erf(1e-30)));
  EXPECT_TRUE(std::isnan(dpc::simd::erf(std::nanf(""))));
}

TEST(SimdMathTest, TanhIsWithinThreeUlp) {
  EXPECT_LE(getMaxUlpError(dpc::simd::tanh, exactTanh, 0.0f, 9.1f), 3.0);
  EXPECT_LE(getMaxUlpError(dpc::simd::tanh, exactTanh, -0.0f, -9.1f), 3.0);
}

TEST(SimdMathTest, TanhLimits) {
  float infinity = std::numeric_limits<float>::infinity();
  EXPECT_EQ(dpc::simd::tanh(infinity), 1.0f);
  EXPECT_EQ(dpc::simd::tanh(-infinity), -1.0f);
  EXPECT_EQ(dpc::simd::tanh(100.0f), 1.0f);
  EXPECT_TRUE(std::signbit(dpc::simd::tanh(-0.0f)));
  EXPECT_TRUE(std::isnan(dpc::simd::tanh(std::nanf(""))));
}

TEST(SimdMathTest, SigmoidIsWithinFourUlp) {
  auto exact = [](double x) { return 1 / (1 + std::exp(-x)); };
  EXPECT_LE(getMaxUlpError(dpc::simd::sigmoid, exact, -0.0f, -87.0f), 4.0);
  EXPECT_LE(getMaxUlpError(dpc::simd::sigmoid, exact, 0.0f, 17.0f), 4.0);
  EXPECT_EQ(dpc::simd::sigmoid(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(dpc::simd::sigmoid(-std::numeric_limits<float>::infinity()), 0.0f);
}

} // namespace
