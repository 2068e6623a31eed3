//===- SimdMath.h - exp, erf and tanh that loops can vectorize --*- C++ -*-===//
//
// Single-precision exp, erf and tanh written without branches or calls, so
// that the compiler inlines them into the generated elementwise loops and
// vectorizes those loops; libm's expf and erff are calls that keep a loop
// scalar (GeLU's erf alone took 7% of the GPT's step). Each is within 2-4
// units in the last place of the correctly rounded result (SimdMathTest.cpp
// walks every 97th float of each range); NaN stays NaN, overflow gives
// infinity, and the limits at infinity are exact.
//
// The polynomials are Chebyshev fits made for dpc (degree enough for
// single precision, relative error below 1e-8 on their intervals).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_SIMDMATH_H
#define DPC_RUNTIME_SIMDMATH_H

#include <cmath>
#include <cstdint>

// Inlined at every use, however many a loop body has: a call keeps the
// loop scalar.
#define DPC_SIMD_INLINE inline __attribute__((always_inline))

namespace dpc::simd {

namespace detail {

/// c0 + x (c1 + x (c2 + ...)), as straight-line code: a loop over a table
/// of coefficients left a loop inside the caller's that SSE and AVX2 builds
/// did not vectorize.
DPC_SIMD_INLINE float evaluate(float, float last) { return last; }
template <typename... Rest>
DPC_SIMD_INLINE float evaluate(float x, float first, Rest... rest) {
  return first + x * evaluate(x, rest...);
}

/// 2^n for an integral n in [-127, 127], from its exponent bits.
DPC_SIMD_INLINE float exp2Integral(float n) {
  // A bit cast, not memcpy: a copy through memory keeps GCC's SSE and
  // AVX2 builds from vectorizing the caller's loop.
  return __builtin_bit_cast(float, (static_cast<int32_t>(n) + 127) << 23);
}

} // namespace detail

/// e^x.
DPC_SIMD_INLINE float exp(float x) {
  // exp(x) = 2^n exp(r) with x = n ln 2 + r, |r| <= ln(2)/2. The clamp
  // keeps 2^n's two halves normal; beyond it the product overflows to
  // infinity or rounds to zero as exp does. A NaN is clamped too (the
  // comparisons are false), so that no NaN is converted to an integer.
  float clamped = x > -104.0f ? (x < 89.0f ? x : 89.0f) : -104.0f;
  // Round to nearest by adding and subtracting 1.5 * 2^23.
  float n = (clamped * 1.44269504f + 12582912.0f) - 12582912.0f;
  // ln 2 split in two (Cody and Waite): n * 0.693359375 is exact.
  float r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  float expR =
      1.0f + r +
      r * r *
          detail::evaluate(r, 0.5000000014f, 0.1666657340f, 0.04166645692f,
                           0.008363769615f, 0.001393453144f);
  float half = (n * 0.5f + 12582912.0f) - 12582912.0f;
  float scaled =
      expR * detail::exp2Integral(half) * detail::exp2Integral(n - half);
  return x != x ? x : scaled;
}

/// The error function.
DPC_SIMD_INLINE float erf(float x) {
  float a = std::fabs(x);
  float t = a * a;
  // |x| < 1: erf(x) = x + x S(x^2), x added last so that what is rounded
  // is small beside it.
  float small =
      a + a * detail::evaluate(t, 0.1283791659f, -0.3761262690f, 0.1128359746f,
                               -0.02685432880f, 0.005189311943f,
                               -8.018854992e-4f, 7.882497105e-5f);
  // |x| >= 1: erf(x) = 1 - e^(-x^2) Q(1/x); e^(-x^2) rounds to zero past 10.
  float u = 1.0f / (a < 1.0f ? 1.0f : a);
  float large =
      1.0f - exp(-t) * detail::evaluate(
                           u, 4.013130163e-05f, 0.5634333265f, 0.005539640080f,
                           -0.2980309764f, -0.02752687313f, 0.8088958802f,
                           -1.390951832f, 1.293122072f, -0.7280707388f,
                           0.2344867963f, -0.03335385011f);
  return std::copysign(a < 1.0f ? small : large, x);
}

/// The hyperbolic tangent.
DPC_SIMD_INLINE float tanh(float x) {
  float a = std::fabs(x);
  float t = a * a;
  // |x| < 0.625: tanh(x) = x + x^3 T(x^2), without 1 - 2/(e^2x + 1)'s
  // cancellation.
  float small = a + a * t *
                        detail::evaluate(t, -0.3333333318f, 0.1333330435f,
                                         -0.05395941662f, 0.02177002357f,
                                         -0.008347140894f, 0.002295990580f);
  float large = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  return std::copysign(a < 0.625f ? small : large, x);
}

/// 1 / (1 + e^-x).
DPC_SIMD_INLINE float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

} // namespace dpc::simd

#undef DPC_SIMD_INLINE

#endif // DPC_RUNTIME_SIMDMATH_H
