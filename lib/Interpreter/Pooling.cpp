//===- Pooling.cpp - Max and average pooling ------------------------------===//
//
// Each output element visits its window; taps in the padding are skipped
// (they never win a max) and, for the average, counted only under
// count_include_pad. Taps past the end padding, which ceil_mode can
// produce, are not padding and never counted (as PyTorch).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

namespace {

/// Calls `tap(offset)` for each tap of window (oy, ox) inside the input,
/// and returns the number of taps inside the padded input.
template <typename Tap>
int64_t visitWindow(const Pool2DParams &p, int64_t height, int64_t width,
                    int64_t oy, int64_t ox, Tap tap) {
  int64_t padded = 0;
  for (int64_t y = 0; y < p.kernel[0]; ++y) {
    int64_t iy = oy * p.strides[0] + y * p.dilations[0] - p.padding[0];
    if (iy >= height + p.padding[2])
      continue;
    for (int64_t x = 0; x < p.kernel[1]; ++x) {
      int64_t ix = ox * p.strides[1] + x * p.dilations[1] - p.padding[1];
      if (ix >= width + p.padding[3])
        continue;
      ++padded;
      if (iy >= 0 && iy < height && ix >= 0 && ix < width)
        tap(iy * width + ix);
    }
  }
  return padded;
}

template <typename Reduce>
Tensor pool(const Tensor &input, const Pool2DParams &params,
            ArrayRef<int64_t> resultShape, Reduce reduce) {
  Tensor result(input.getKind(), resultShape);
  ArrayRef<int64_t> shape = input.getShape();
  int64_t planes = shape[0] * shape[1], height = shape[2], width = shape[3];
  int64_t outHeight = resultShape[2], outWidth = resultShape[3];
  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *in = input.getData<T>().data();
    T *out = result.getData<T>().data();
    for (int64_t plane = 0; plane < planes; ++plane)
      for (int64_t oy = 0; oy < outHeight; ++oy)
        for (int64_t ox = 0; ox < outWidth; ++ox)
          *out++ = static_cast<T>(
              reduce(in + plane * height * width, height, width, oy, ox));
  });
  return result;
}

} // namespace

Tensor interpreter::maxPool2d(const Tensor &input, const Pool2DParams &params,
                              ArrayRef<int64_t> resultShape) {
  return pool(
      input, params, resultShape,
      [&](const auto *plane, int64_t height, int64_t width, int64_t oy,
          int64_t ox) {
        using T = std::remove_cv_t<std::remove_reference_t<decltype(*plane)>>;
        T best = -std::numeric_limits<T>::infinity();
        visitWindow(params, height, width, oy, ox, [&](int64_t at) {
          // NaN wins, and stays.
          if (!std::isnan(best) && (std::isnan(plane[at]) || plane[at] > best))
            best = plane[at];
        });
        return best;
      });
}

Tensor interpreter::avgPool2d(const Tensor &input, const Pool2DParams &params,
                              ArrayRef<int64_t> resultShape) {
  return pool(input, params, resultShape,
              [&](const auto *plane, int64_t height, int64_t width, int64_t oy,
                  int64_t ox) {
                double sum = 0;
                int64_t valid = 0;
                int64_t padded =
                    visitWindow(params, height, width, oy, ox, [&](int64_t at) {
                      sum += plane[at];
                      ++valid;
                    });
                return sum / static_cast<double>(
                                 params.countIncludePad ? padded : valid);
              });
}

Tensor interpreter::maxPool2dGrad(const Tensor &input, const Tensor &outGrad,
                                  const Pool2DParams &params) {
  ArrayRef<int64_t> shape = input.getShape(), og = outGrad.getShape();
  Tensor result(input.getKind(), shape);
  int64_t planes = shape[0] * shape[1], height = shape[2], width = shape[3];
  int64_t outHeight = og[2], outWidth = og[3];
  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<double> sums(height * width);
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T *in = input.getData<T>().data() + plane * height * width;
      const T *grad =
          outGrad.getData<T>().data() + plane * outHeight * outWidth;
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t oy = 0; oy < outHeight; ++oy)
        for (int64_t ox = 0; ox < outWidth; ++ox) {
          // The forward's winner: the first maximum, or the first NaN.
          int64_t winner = -1;
          visitWindow(params, height, width, oy, ox, [&](int64_t at) {
            if (winner < 0 || (!std::isnan(in[winner]) &&
                               (std::isnan(in[at]) || in[at] > in[winner])))
              winner = at;
          });
          if (winner >= 0)
            sums[winner] += grad[oy * outWidth + ox];
        }
      std::copy(sums.begin(), sums.end(),
                result.getData<T>().data() + plane * height * width);
    }
  });
  return result;
}

Tensor interpreter::avgPool2dGrad(const Tensor &outGrad,
                                  const Pool2DParams &params,
                                  ArrayRef<int64_t> resultShape) {
  Tensor result(outGrad.getKind(), resultShape);
  ArrayRef<int64_t> og = outGrad.getShape();
  int64_t planes = resultShape[0] * resultShape[1];
  int64_t height = resultShape[2], width = resultShape[3];
  int64_t outHeight = og[2], outWidth = og[3];
  dispatchFloatKind(outGrad.getKind(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<double> sums(height * width);
    SmallVector<int64_t> taps;
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T *grad =
          outGrad.getData<T>().data() + plane * outHeight * outWidth;
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t oy = 0; oy < outHeight; ++oy)
        for (int64_t ox = 0; ox < outWidth; ++ox) {
          taps.clear();
          int64_t padded = visitWindow(params, height, width, oy, ox,
                                       [&](int64_t at) { taps.push_back(at); });
          double share = grad[oy * outWidth + ox] /
                         static_cast<double>(
                             params.countIncludePad ? padded : taps.size());
          for (int64_t at : taps)
            sums[at] += share;
        }
      std::copy(sums.begin(), sums.end(),
                result.getData<T>().data() + plane * height * width);
    }
  });
  return result;
}
