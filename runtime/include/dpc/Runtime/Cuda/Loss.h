//===- Loss.h - Classification losses on the GPU ----------------*- C++ -*-===//
//
// softmax_cross_entropy and nll_loss over input [N, C, d...] and labels
// [N, d...]: a thread per sample computes its loss in double; a sum or
// mean is then taken by one thread in sample order, so that it is the
// same on every run. Samples labelled ignore_index add 0 and are not
// counted (a mean over none is NaN, as in PyTorch); a label that is
// neither is a fault.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_LOSS_H
#define DPC_RUNTIME_CUDA_LOSS_H

#include "dpc/Runtime/Cuda/Context.h"

#include <cmath>

namespace dpc::cuda {

enum class LossReduction { None, Sum, Mean };

template <typename T>
void classificationLoss(Context *context, int32_t op, const T *input,
                        Shape shape, const int64_t *labels,
                        LossReduction reduction, int64_t ignoreIndex,
                        bool fromLogits, T *out) {
  int64_t classes = shape[1], inner = shape.product(2);
  int64_t samples = shape[0] * inner;
  FaultRecord *faults = context->faults;
  // Per-sample losses, and whether each counts, in scratch.
  double *losses = getScratch(context, 2 * samples);
  forEach(
      context, samples, DPC_KERNEL(int64_t sample) {
        int64_t label = labels[sample];
        double loss = 0;
        bool counted = label != ignoreIndex;
        if (counted && (label < 0 || label >= classes)) {
          raise(faults, op, Fault::LabelOutOfRange, label, sample);
          counted = false;
        }
        if (counted) {
          const T *row =
              input + (sample / inner) * classes * inner + sample % inner;
          loss = -double(row[label * inner]);
          if (fromLogits) {
            double maximum = double(row[0]);
            for (int64_t c = 1; c < classes; ++c)
              maximum = double(row[c * inner]) > maximum
                            ? double(row[c * inner])
                            : maximum;
            double sum = 0;
            for (int64_t c = 0; c < classes; ++c)
              sum += std::exp(double(row[c * inner]) - maximum);
            loss += maximum + std::log(sum);
          }
        }
        losses[sample] = loss;
        losses[samples + sample] = counted ? 1.0 : 0.0;
        if (reduction == LossReduction::None)
          out[sample] = T(loss);
      });
  if (reduction == LossReduction::None)
    return;
  forEach(
      context, 1, DPC_KERNEL(int64_t) {
        double total = 0, counted = 0;
        for (int64_t sample = 0; sample < samples; ++sample) {
          total += losses[sample];
          counted += losses[samples + sample];
        }
        out[0] = T(reduction == LossReduction::Sum ? total : total / counted);
      });
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_LOSS_H
