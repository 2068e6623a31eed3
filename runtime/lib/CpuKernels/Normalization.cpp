//===- Normalization.cpp - Layer and batch normalization ------------------===//
//
// Statistics are computed in double in two passes (mean, then the mean
// squared deviation), and the normalized values in double, rounded once:
// the interpreter's arithmetic, operation for operation (float sums run
// as interleaved partial sums, see sumInDouble).
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <cmath>
#include <string>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

template <typename T>
void dpc::cpu::layerNorm(const T *input, Dims shape, const T *scale,
                         const T *bias, int64_t axis, double epsilon, T *out) {
  int64_t outer = product(shape, 0, axis), inner = product(shape, axis);
  for (int64_t o = 0; o < outer; ++o) {
    const T *in = input + o * inner;
    T *to = out + o * inner;
    double mean =
        sumInDouble<T>(0.0, inner,
                       [&](int64_t i) { return static_cast<double>(in[i]); }) /
        static_cast<double>(inner);
    double variance = sumInDouble<T>(0.0, inner,
                                     [&](int64_t i) {
                                       return (in[i] - mean) * (in[i] - mean);
                                     }) /
                      static_cast<double>(inner);
    double inverse = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t i = 0; i < inner; ++i) {
      double value = (in[i] - mean) * inverse * scale[i];
      if (bias)
        value += bias[i];
      to[i] = static_cast<T>(value);
    }
  }
}

template <typename T>
bool dpc::cpu::batchNorm(const T *input, Dims shape, const T *scale,
                         const T *bias, const T *runningMean,
                         const T *runningVar, double epsilon, double momentum,
                         bool training, T *out, T *newMean, T *newVar,
                         T *batchMean, T *batchVar) {
  int64_t batch = at(shape, 0), channels = at(shape, 1);
  int64_t inner = product(shape, 2);
  int64_t count = batch * inner;
  // The unbiased variance of a single value is undefined (as PyTorch).
  if (training && count < 2)
    return fail("training-mode batch_norm needs more than one value per "
                "channel, got " +
                std::to_string(count));

  for (int64_t c = 0; c < channels; ++c) {
    auto index = [&](int64_t b, int64_t i) {
      return (b * channels + c) * inner + i;
    };
    double mean = runningMean[c];
    double variance = runningVar[c];
    newMean[c] = runningMean[c];
    newVar[c] = runningVar[c];
    if (training) {
      mean = 0;
      for (int64_t b = 0; b < batch; ++b) {
        const T *in = input + index(b, 0);
        mean = sumInDouble<T>(
            mean, inner, [&](int64_t i) { return static_cast<double>(in[i]); });
      }
      mean /= static_cast<double>(count);
      variance = 0;
      for (int64_t b = 0; b < batch; ++b) {
        const T *in = input + index(b, 0);
        variance = sumInDouble<T>(variance, inner, [&](int64_t i) {
          return (in[i] - mean) * (in[i] - mean);
        });
      }
      double unbiased = variance / static_cast<double>(count - 1);
      variance /= static_cast<double>(count);
      newMean[c] =
          static_cast<T>(momentum * runningMean[c] + (1 - momentum) * mean);
      newVar[c] =
          static_cast<T>(momentum * runningVar[c] + (1 - momentum) * unbiased);
    }
    batchMean[c] = static_cast<T>(mean);
    batchVar[c] = static_cast<T>(variance);
    double inverse = 1.0 / std::sqrt(variance + epsilon);
    double gamma = scale[c], beta = bias ? bias[c] : 0.0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < inner; ++i)
        out[index(b, i)] = static_cast<T>(
            (input[index(b, i)] - mean) * inverse * gamma + beta);
  }
  return true;
}

#define DPC_INSTANTIATE(T)                                                     \
  template void dpc::cpu::layerNorm<T>(const T *, Dims, const T *, const T *,  \
                                       int64_t, double, T *);                  \
  template bool dpc::cpu::batchNorm<T>(const T *, Dims, const T *, const T *,  \
                                       const T *, const T *, double, double,   \
                                       bool, T *, T *, T *, T *, T *);
DPC_INSTANTIATE(float)
DPC_INSTANTIATE(double)
#undef DPC_INSTANTIATE
