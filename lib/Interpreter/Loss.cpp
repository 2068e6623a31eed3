//===- Loss.cpp - Classification losses -----------------------------------===//
//
// softmax_cross_entropy and nll_loss over input [N, C, d...] and labels
// [N, d...]: the class dimension is 1, each (n, d...) is a sample. Samples
// labelled ignore_index contribute 0 and are not counted by the mean.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

FailureOr<Tensor>
interpreter::classificationLoss(Operation *op, const Tensor &input,
                                const Tensor &labels, LossReduction reduction,
                                int64_t ignoreIndex, bool fromLogits) {
  ArrayRef<int64_t> shape = input.getShape();
  int64_t batch = shape[0], classes = shape[1], inner = 1;
  for (size_t d = 2; d < shape.size(); ++d)
    inner *= shape[d];
  ArrayRef<int64_t> ids = labels.getData<int64_t>();
  for (auto [i, label] : llvm::enumerate(ids))
    if (label != ignoreIndex && (label < 0 || label >= classes))
      return op->emitError("label ")
             << label << " (element " << i << " of the labels) is neither "
             << "a class in [0, " << classes << ") nor the ignore_index "
             << ignoreIndex;

  Tensor result(input.getKind(), reduction == LossReduction::none
                                     ? labels.getShape()
                                     : ArrayRef<int64_t>());
  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *in = input.getData<T>().data();
    MutableArrayRef<T> out = result.getData<T>();
    double total = 0;
    int64_t counted = 0;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t sample = n * inner + i;
        int64_t label = ids[sample];
        auto at = [&](int64_t c) { return in[(n * classes + c) * inner + i]; };
        double loss = 0;
        if (label != ignoreIndex) {
          loss = -static_cast<double>(at(label));
          if (fromLogits) {
            double maximum = -std::numeric_limits<double>::infinity();
            for (int64_t c = 0; c < classes; ++c)
              maximum = std::max(maximum, static_cast<double>(at(c)));
            double sum = 0;
            for (int64_t c = 0; c < classes; ++c)
              sum += std::exp(at(c) - maximum);
            loss += maximum + std::log(sum);
          }
          total += loss;
          ++counted;
        }
        if (reduction == LossReduction::none)
          out[sample] = static_cast<T>(loss);
      }
    }
    if (reduction == LossReduction::sum)
      out[0] = static_cast<T>(total);
    else if (reduction == LossReduction::mean)
      out[0] = static_cast<T>(total / static_cast<double>(counted));
  });
  return result;
}
