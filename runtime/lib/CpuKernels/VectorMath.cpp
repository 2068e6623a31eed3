//===- VectorMath.cpp - Vectorized row maxima and exponentials ------------===//
//
// Softmax and cross-entropy spend their time in a maximum and one
// exponential per element. In float the exponential is SimdMath.h's, which
// vectorizes; this library is built for the baseline x86-64 (an artifact
// built for any CPU links it), so the loops are compiled for AVX2 and for
// the baseline, and the dynamic loader picks the one the CPU runs (GCC's
// target_clones). In double the exponential is libm's, as the interpreter
// computes it.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include "dpc/Runtime/SimdMath.h"

#include <cmath>
#include <limits>

using namespace dpc::cpu::detail;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DPC_FOR_AVX2_AND_BASELINE                                              \
  __attribute__((target_clones("avx2", "default")))
#else
#define DPC_FOR_AVX2_AND_BASELINE
#endif

DPC_FOR_AVX2_AND_BASELINE
void dpc::cpu::detail::exponentiateShifted(const float *values, float shift,
                                           int64_t count, float *exponentials) {
  for (int64_t i = 0; i < count; ++i) {
    // values[i] - shift rounded to float loses up to half an ulp of the
    // difference (4e-6 of a tail value's exponential 30 below the
    // maximum); its exact remainder (Knuth's two-sum) corrects the
    // exponential to first order: e^(r + e) = e^r (1 + e).
    float rounded = values[i] - shift;
    float back = rounded - values[i];
    float remainder = (values[i] - (rounded - back)) + (-shift - back);
    // A masked value (-inf) has e^-inf = 0 and no remainder (it is NaN).
    if (!(std::fabs(rounded) <= std::numeric_limits<float>::max()))
      remainder = 0.0f;
    exponentials[i] = dpc::simd::exp(rounded) * (1.0f + remainder);
  }
}

void dpc::cpu::detail::exponentiateShifted(const double *values, double shift,
                                           int64_t count,
                                           double *exponentials) {
  for (int64_t i = 0; i < count; ++i)
    exponentials[i] = std::exp(values[i] - shift);
}

/// Eight running maxima and a NaN flag: straight-line lanes the compiler
/// vectorizes, where one running maximum that propagates NaN stays scalar.
/// Inlined into each clone, so that each is compiled for its target.
template <typename T>
static inline __attribute__((always_inline)) T getMaximumOf(const T *values,
                                                            int64_t count) {
  constexpr int64_t lanes = 8;
  T maxima[lanes];
  bool nan[lanes];
  for (int64_t k = 0; k < lanes; ++k) {
    maxima[k] = -std::numeric_limits<T>::infinity();
    nan[k] = false;
  }
  int64_t i = 0;
  for (; i + lanes <= count; i += lanes)
    for (int64_t k = 0; k < lanes; ++k) {
      T value = values[i + k];
      nan[k] |= value != value;
      maxima[k] = value > maxima[k] ? value : maxima[k];
    }
  T maximum = -std::numeric_limits<T>::infinity();
  bool anyNan = false;
  for (; i < count; ++i) {
    anyNan |= values[i] != values[i];
    maximum = values[i] > maximum ? values[i] : maximum;
  }
  for (int64_t k = 0; k < lanes; ++k) {
    anyNan |= nan[k];
    maximum = maxima[k] > maximum ? maxima[k] : maximum;
  }
  return anyNan ? std::numeric_limits<T>::quiet_NaN() : maximum;
}

DPC_FOR_AVX2_AND_BASELINE
float dpc::cpu::detail::maximumOf(const float *values, int64_t count) {
  return getMaximumOf(values, count);
}

double dpc::cpu::detail::maximumOf(const double *values, int64_t count) {
  return getMaximumOf(values, count);
}
