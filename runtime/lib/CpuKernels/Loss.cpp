//===- Loss.cpp - Classification losses -----------------------------------===//
//
// softmax_cross_entropy and nll_loss over input [N, C, d...] and labels
// [N, d...]: the class dimension is 1, each (n, d...) is a sample. Samples
// labelled ignore_index contribute 0 and are not counted by the mean (a
// mean over no samples is NaN, as in PyTorch). Every label is checked
// before anything is written.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

template <typename T>
bool dpc::cpu::classificationLoss(const T *input, Dims inputShape,
                                  const int64_t *labels,
                                  LossReduction reduction, int64_t ignoreIndex,
                                  bool fromLogits, T *out) {
  int64_t batch = at(inputShape, 0), classes = at(inputShape, 1);
  int64_t inner = product(inputShape, 2);
  int64_t samples = batch * inner;
  for (int64_t i = 0; i < samples; ++i) {
    int64_t label = labels[i];
    if (label != ignoreIndex && (label < 0 || label >= classes))
      return fail("label " + std::to_string(label) + " (element " +
                  std::to_string(i) +
                  " of the labels) is neither a class in [0, " +
                  std::to_string(classes) + ") nor the ignore_index " +
                  std::to_string(ignoreIndex));
  }

  double total = 0;
  int64_t counted = 0;
  ShiftedExponentials<T> exponentials(fromLogits ? classes : 0, inner);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t sample = n * inner + i;
      int64_t label = labels[sample];
      const T *row = input + n * classes * inner + i;
      double loss = 0;
      if (label != ignoreIndex) {
        loss = -static_cast<double>(row[label * inner]);
        if (fromLogits) {
          // log sum exp, the maximum taken out.
          double sum = exponentials.compute(row);
          loss += static_cast<double>(exponentials.maximum) + std::log(sum);
        }
        total += loss;
        ++counted;
      }
      if (reduction == LossReduction::None)
        out[sample] = static_cast<T>(loss);
    }
  if (reduction == LossReduction::Sum)
    out[0] = static_cast<T>(total);
  else if (reduction == LossReduction::Mean)
    out[0] = static_cast<T>(total / static_cast<double>(counted));
  return true;
}

template bool dpc::cpu::classificationLoss<float>(const float *, Dims,
                                                  const int64_t *,
                                                  LossReduction, int64_t, bool,
                                                  float *);
template bool dpc::cpu::classificationLoss<double>(const double *, Dims,
                                                   const int64_t *,
                                                   LossReduction, int64_t, bool,
                                                   double *);
