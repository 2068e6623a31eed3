//===- Pooling.h - Max and average pooling on the GPU -----------*- C++ -*-===//
//
// A thread per output element visits its window: taps in the padding are
// skipped (they never win a max) and, for the average, counted only under
// count_include_pad; taps past the end padding (ceil_mode) are never
// counted, as PyTorch. The gradients are gathered by a thread per input
// element from the windows that hold it, in the order the CPU kernels
// scatter them, summing in double.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_POOLING_H
#define DPC_RUNTIME_CUDA_POOLING_H

#include "dpc/Runtime/Cuda/Context.h"

#include <limits>

namespace dpc::cuda {

struct Pool2DParams {
  int64_t kernel[2];
  int64_t strides[2];
  /// [top, left, bottom, right].
  int64_t padding[4];
  int64_t dilations[2];
  bool countIncludePad;
};

namespace detail {
/// Calls `tap(offset)` for each tap of window (oy, ox) inside the
/// `height` x `width` input; returns the taps inside the padded input.
template <typename Tap>
DPC_HOST_DEVICE int64_t visitWindow(const Pool2DParams &p, int64_t height,
                                    int64_t width, int64_t oy, int64_t ox,
                                    Tap tap) {
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

/// The first maximum (or first NaN) of window (oy, ox) of `in`; -1 for a
/// window without inputs.
template <typename T>
DPC_HOST_DEVICE int64_t findWinner(const T *in, const Pool2DParams &p,
                                   int64_t height, int64_t width, int64_t oy,
                                   int64_t ox) {
  int64_t winner = -1;
  visitWindow(p, height, width, oy, ox, [&](int64_t tap) {
    bool winnerIsNan = winner >= 0 && in[winner] != in[winner];
    if (winner < 0 ||
        (!winnerIsNan && (in[tap] != in[tap] || in[tap] > in[winner])))
      winner = tap;
  });
  return winner;
}

/// Calls `window(oy, ox)` for each output window that holds input element
/// (iy, ix), in row-major order of the windows.
template <typename Window>
DPC_HOST_DEVICE void forWindowsHolding(const Pool2DParams &p, int64_t iy,
                                       int64_t ix, int64_t outHeight,
                                       int64_t outWidth, Window window) {
  for (int64_t y = p.kernel[0] - 1; y >= 0; --y) {
    int64_t t = iy + p.padding[0] - y * p.dilations[0];
    if (t < 0 || t % p.strides[0] != 0 || t / p.strides[0] >= outHeight)
      continue;
    for (int64_t x = p.kernel[1] - 1; x >= 0; --x) {
      int64_t u = ix + p.padding[1] - x * p.dilations[1];
      if (u < 0 || u % p.strides[1] != 0 || u / p.strides[1] >= outWidth)
        continue;
      window(t / p.strides[0], u / p.strides[1]);
    }
  }
}
} // namespace detail

template <typename T>
void maxPool2d(Context *context, const T *input, Shape inShape, Pool2DParams p,
               T *out, Shape outShape) {
  int64_t height = inShape[2], width = inShape[3];
  int64_t outHeight = outShape[2], outWidth = outShape[3];
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t e) {
        int64_t ox = e % outWidth, oy = (e / outWidth) % outHeight;
        const T *in = input + (e / (outWidth * outHeight)) * height * width;
        T best = -std::numeric_limits<T>::infinity();
        detail::visitWindow(p, height, width, oy, ox, [&](int64_t tap) {
          // NaN wins, and stays.
          if (best == best && (in[tap] != in[tap] || in[tap] > best))
            best = in[tap];
        });
        out[e] = best;
      });
}

template <typename T>
void avgPool2d(Context *context, const T *input, Shape inShape, Pool2DParams p,
               T *out, Shape outShape) {
  int64_t height = inShape[2], width = inShape[3];
  int64_t outHeight = outShape[2], outWidth = outShape[3];
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t e) {
        int64_t ox = e % outWidth, oy = (e / outWidth) % outHeight;
        const T *in = input + (e / (outWidth * outHeight)) * height * width;
        double sum = 0;
        int64_t valid = 0;
        int64_t padded =
            detail::visitWindow(p, height, width, oy, ox, [&](int64_t tap) {
              sum += double(in[tap]);
              ++valid;
            });
        out[e] = T(sum / double(p.countIncludePad ? padded : valid));
      });
}

/// Each element of `outGrad` goes to the first maximum of its window.
template <typename T>
void maxPool2dGrad(Context *context, const T *input, Shape inShape,
                   const T *outGrad, Shape outGradShape, Pool2DParams p,
                   T *out) {
  int64_t height = inShape[2], width = inShape[3];
  int64_t outHeight = outGradShape[2], outWidth = outGradShape[3];
  forEach(
      context, inShape.product(), DPC_KERNEL(int64_t e) {
        int64_t ix = e % width, iy = (e / width) % height;
        int64_t plane = e / (width * height);
        const T *in = input + plane * height * width;
        const T *grad = outGrad + plane * outHeight * outWidth;
        double sum = 0;
        detail::forWindowsHolding(
            p, iy, ix, outHeight, outWidth, [&](int64_t oy, int64_t ox) {
              if (detail::findWinner(in, p, height, width, oy, ox) ==
                  iy * width + ix)
                sum += double(grad[oy * outWidth + ox]);
            });
        out[e] = T(sum);
      });
}

template <typename T>
void avgPool2dGrad(Context *context, const T *outGrad, Shape outGradShape,
                   Pool2DParams p, T *out, Shape outShape) {
  int64_t height = outShape[2], width = outShape[3];
  int64_t outHeight = outGradShape[2], outWidth = outGradShape[3];
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t e) {
        int64_t ix = e % width, iy = (e / width) % height;
        const T *grad = outGrad + (e / (width * height)) * outHeight * outWidth;
        double sum = 0;
        detail::forWindowsHolding(
            p, iy, ix, outHeight, outWidth, [&](int64_t oy, int64_t ox) {
              int64_t valid = 0;
              int64_t padded = detail::visitWindow(p, height, width, oy, ox,
                                                   [&](int64_t) { ++valid; });
              sum += double(grad[oy * outWidth + ox]) /
                     double(p.countIncludePad ? padded : valid);
            });
        out[e] = T(sum);
      });
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_POOLING_H
