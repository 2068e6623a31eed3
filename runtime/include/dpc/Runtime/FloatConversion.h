//===- FloatConversion.h - IEEE half and bfloat16 conversions ---*- C++ -*-===//
//
// Conversions between the 16-bit float formats (IEEE binary16 and
// bfloat16, as their bit patterns) and float/double. Narrowing rounds to
// nearest, ties to even, in one step from double, so a float narrowed
// through double is never rounded twice.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_FLOATCONVERSION_H
#define DPC_RUNTIME_FLOATCONVERSION_H

#include <cstdint>

namespace dpc {

/// The IEEE half nearest to `value` (ties to even); NaN stays NaN and
/// overflow gives infinity.
uint16_t convertToHalf(double value);
/// The value of the IEEE half with bits `bits`.
float convertFromHalf(uint16_t bits);

/// The bfloat16 nearest to `value` (ties to even).
uint16_t convertToBFloat16(double value);
/// The value of the bfloat16 with bits `bits`.
float convertFromBFloat16(uint16_t bits);

/// `value` rounded to the nearest half, as a float.
inline float roundToHalf(float value) {
  return convertFromHalf(convertToHalf(value));
}
/// `value` rounded to the nearest bfloat16, as a float.
inline float roundToBFloat16(float value) {
  return convertFromBFloat16(convertToBFloat16(value));
}

} // namespace dpc

#endif // DPC_RUNTIME_FLOATCONVERSION_H
