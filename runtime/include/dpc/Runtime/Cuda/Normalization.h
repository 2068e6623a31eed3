//===- Normalization.h - Layer and batch normalization on the GPU -*- C++ -*-//
//
// Statistics in double, in two passes (mean, then the mean squared
// deviation), the normalized value in double rounded once: the
// interpreter's arithmetic. A thread per normalized row (layer norm) or
// per channel (batch norm).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_NORMALIZATION_H
#define DPC_RUNTIME_CUDA_NORMALIZATION_H

#include "dpc/Runtime/Cuda/Context.h"

#include <cmath>

namespace dpc::cuda {

/// Normalizes over [axis, rank) with the biased variance, then scale and
/// (optional) bias.
template <typename T>
void layerNorm(Context *context, const T *input, Shape shape, const T *scale,
               const T *bias, int64_t axis, double epsilon, T *out) {
  int64_t inner = shape.product(int32_t(axis));
  forEach(
      context, shape.product(0, int32_t(axis)), DPC_KERNEL(int64_t o) {
        const T *in = input + o * inner;
        T *to = out + o * inner;
        double mean = 0, variance = 0;
        for (int64_t i = 0; i < inner; ++i)
          mean += double(in[i]);
        mean /= double(inner);
        for (int64_t i = 0; i < inner; ++i)
          variance += (double(in[i]) - mean) * (double(in[i]) - mean);
        variance /= double(inner);
        double inverse = 1.0 / std::sqrt(variance + epsilon);
        for (int64_t i = 0; i < inner; ++i) {
          double value = (double(in[i]) - mean) * inverse * double(scale[i]);
          if (bias)
            value += double(bias[i]);
          to[i] = T(value);
        }
      });
}

/// batch_norm over an NC... input: the output, the new running mean and
/// (unbiased) variance, and the mean and (biased) variance it normalized
/// with.
template <typename T>
void batchNorm(Context *context, int32_t op, const T *input, Shape shape,
               const T *scale, const T *bias, const T *runningMean,
               const T *runningVar, double epsilon, double momentum,
               bool training, T *out, T *newMean, T *newVar, T *batchMean,
               T *batchVar) {
  int64_t batch = shape[0], channels = shape[1], inner = shape.product(2);
  int64_t count = batch * inner;
  FaultRecord *faults = context->faults;
  forEach(
      context, channels, DPC_KERNEL(int64_t c) {
        auto at = [&](int64_t b, int64_t i) {
          return (b * channels + c) * inner + i;
        };
        double mean = double(runningMean[c]), variance = double(runningVar[c]);
        newMean[c] = runningMean[c];
        newVar[c] = runningVar[c];
        if (training) {
          if (count < 2) {
            raise(faults, op, Fault::SingleValueBatch, count);
            return;
          }
          mean = 0;
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t i = 0; i < inner; ++i)
              mean += double(input[at(b, i)]);
          mean /= double(count);
          variance = 0;
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t i = 0; i < inner; ++i)
              variance += (double(input[at(b, i)]) - mean) *
                          (double(input[at(b, i)]) - mean);
          double unbiased = variance / double(count - 1);
          variance /= double(count);
          newMean[c] =
              T(momentum * double(runningMean[c]) + (1 - momentum) * mean);
          newVar[c] =
              T(momentum * double(runningVar[c]) + (1 - momentum) * unbiased);
        }
        batchMean[c] = T(mean);
        batchVar[c] = T(variance);
        double inverse = 1.0 / std::sqrt(variance + epsilon);
        double gamma = double(scale[c]), beta = bias ? double(bias[c]) : 0.0;
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < inner; ++i)
            out[at(b, i)] =
                T((double(input[at(b, i)]) - mean) * inverse * gamma + beta);
      });
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_NORMALIZATION_H
