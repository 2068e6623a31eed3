//===- Normalization.cpp - Layer and batch normalization ------------------===//
//
// Statistics are computed in double in two passes (mean, then the mean
// squared deviation), and the normalized values in double, rounded once.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

Tensor interpreter::layerNorm(const Tensor &input, const Tensor &scale,
                              const Tensor *bias, int64_t axis,
                              double epsilon) {
  ArrayRef<int64_t> shape = input.getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < axis ? outer : inner) *= shape[d];
  Tensor result(input.getKind(), shape);

  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *gamma = scale.getData<T>().data();
    const T *beta = bias ? bias->getData<T>().data() : nullptr;
    for (int64_t o = 0; o < outer; ++o) {
      const T *in = input.getData<T>().data() + o * inner;
      T *out = result.getData<T>().data() + o * inner;
      double mean = 0, variance = 0;
      for (int64_t i = 0; i < inner; ++i)
        mean += in[i];
      mean /= static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i)
        variance += (in[i] - mean) * (in[i] - mean);
      variance /= static_cast<double>(inner);
      double inverse = 1.0 / std::sqrt(variance + epsilon);
      for (int64_t i = 0; i < inner; ++i) {
        double value = (in[i] - mean) * inverse * gamma[i];
        if (beta)
          value += beta[i];
        out[i] = static_cast<T>(value);
      }
    }
  });
  return result;
}

FailureOr<SmallVector<Tensor>>
interpreter::batchNorm(Operation *op, const Tensor &input, const Tensor &scale,
                       const Tensor &bias, const Tensor &runningMean,
                       const Tensor &runningVar, double epsilon,
                       double momentum, bool training) {
  ArrayRef<int64_t> shape = input.getShape();
  int64_t batch = shape[0], channels = shape[1], inner = 1;
  for (size_t d = 2; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t count = batch * inner;
  if (training && count < 2)
    return op->emitError("training-mode batch_norm needs more than one value "
                         "per channel, got ")
           << count;

  SmallVector<Tensor> results = {Tensor(input.getKind(), shape), runningMean,
                                 runningVar, runningMean, runningVar};
  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *in = input.getData<T>().data();
    T *out = results[0].getData<T>().data();
    MutableArrayRef<T> newMean = results[1].getData<T>();
    MutableArrayRef<T> newVar = results[2].getData<T>();
    MutableArrayRef<T> batchMean = results[3].getData<T>();
    MutableArrayRef<T> batchVar = results[4].getData<T>();
    for (int64_t c = 0; c < channels; ++c) {
      auto at = [&](int64_t b, int64_t i) {
        return (b * channels + c) * inner + i;
      };
      double mean = runningMean.getData<T>()[c];
      double variance = runningVar.getData<T>()[c];
      if (training) {
        mean = 0;
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < inner; ++i)
            mean += in[at(b, i)];
        mean /= static_cast<double>(count);
        variance = 0;
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < inner; ++i)
            variance += (in[at(b, i)] - mean) * (in[at(b, i)] - mean);
        double unbiased = variance / static_cast<double>(count - 1);
        variance /= static_cast<double>(count);
        newMean[c] = static_cast<T>(momentum * runningMean.getData<T>()[c] +
                                    (1 - momentum) * mean);
        newVar[c] = static_cast<T>(momentum * runningVar.getData<T>()[c] +
                                   (1 - momentum) * unbiased);
        batchMean[c] = static_cast<T>(mean);
        batchVar[c] = static_cast<T>(variance);
      }
      double inverse = 1.0 / std::sqrt(variance + epsilon);
      double gamma = scale.getData<T>()[c], beta = bias.getData<T>()[c];
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < inner; ++i)
          out[at(b, i)] =
              static_cast<T>((in[at(b, i)] - mean) * inverse * gamma + beta);
    }
  });
  return results;
}
