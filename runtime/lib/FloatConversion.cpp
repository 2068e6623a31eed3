//===- FloatConversion.cpp - IEEE half and bfloat16 conversions -----------===//
//
// Narrowing works on the value rather than on bit patterns: scaling by a
// power of two is exact in double, so the significand is rounded once by
// std::nearbyint (round to nearest even in the default rounding mode).
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/FloatConversion.h"

#include <cmath>
#include <cstring>

using namespace dpc;

namespace {

/// A binary float format with `exponentBits` and `mantissaBits` (explicit
/// bits, without the implicit leading one), at most 16 bits in all.
struct SmallFloatFormat {
  int exponentBits;
  int mantissaBits;

  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  uint32_t exponentMask() const { return (1u << exponentBits) - 1; }
};

constexpr SmallFloatFormat kHalf{5, 10};
constexpr SmallFloatFormat kBFloat16{8, 7};

uint16_t narrow(double value, SmallFloatFormat format) {
  uint32_t sign = std::signbit(value) ? 1u : 0u;
  uint32_t signBit = sign << (format.exponentBits + format.mantissaBits);
  uint32_t infinity = format.exponentMask() << format.mantissaBits;
  if (std::isnan(value))
    // A quiet NaN: the top mantissa bit set.
    return static_cast<uint16_t>(signBit | infinity |
                                 (1u << (format.mantissaBits - 1)));
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude))
    return static_cast<uint16_t>(signBit | infinity);

  int minExponent = 1 - format.bias();
  int exponent;
  std::frexp(magnitude, &exponent); // magnitude = f * 2^exponent, f in [.5,1)
  --exponent;                       // magnitude = g * 2^exponent, g in [1,2)
  if (magnitude == 0.0 || exponent < minExponent) {
    // Subnormal (or zero): a multiple of 2^(minExponent - mantissaBits).
    // Rounding up to 2^mantissaBits lands on the smallest normal, whose
    // encoding follows on from the largest subnormal.
    double scaled = std::ldexp(magnitude, format.mantissaBits - minExponent);
    uint32_t mantissa = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(signBit | mantissa);
  }
  double scaled = std::ldexp(magnitude, format.mantissaBits - exponent);
  uint32_t significand = static_cast<uint32_t>(std::nearbyint(scaled));
  if (significand == (2u << format.mantissaBits)) {
    significand >>= 1;
    ++exponent;
  }
  uint32_t biased = static_cast<uint32_t>(exponent + format.bias());
  if (biased >= format.exponentMask())
    return static_cast<uint16_t>(signBit | infinity);
  uint32_t mantissa = significand - (1u << format.mantissaBits);
  return static_cast<uint16_t>(signBit | (biased << format.mantissaBits) |
                               mantissa);
}

float widen(uint16_t bits, SmallFloatFormat format) {
  uint32_t mantissaMask = (1u << format.mantissaBits) - 1;
  uint32_t mantissa = bits & mantissaMask;
  uint32_t biased = (bits >> format.mantissaBits) & format.exponentMask();
  bool negative = (bits >> (format.exponentBits + format.mantissaBits)) & 1;
  double magnitude;
  if (biased == format.exponentMask())
    magnitude = mantissa ? NAN : INFINITY;
  else if (biased == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa),
                           1 - format.bias() - format.mantissaBits);
  else
    magnitude = std::ldexp(static_cast<double>(mantissa | (mantissaMask + 1)),
                           static_cast<int>(biased) - format.bias() -
                               format.mantissaBits);
  return static_cast<float>(negative ? -magnitude : magnitude);
}

} // namespace

uint16_t dpc::convertToHalf(double value) { return narrow(value, kHalf); }

float dpc::convertFromHalf(uint16_t bits) { return widen(bits, kHalf); }

uint16_t dpc::convertToBFloat16(double value) {
  return narrow(value, kBFloat16);
}

float dpc::convertFromBFloat16(uint16_t bits) { return widen(bits, kBFloat16); }
