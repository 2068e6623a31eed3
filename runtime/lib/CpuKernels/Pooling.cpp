//===- Pooling.cpp - Max and average pooling ------------------------------===//
//
// Each output element visits its window; taps in the padding are skipped
// (they never win a max) and, for the average, counted only under
// count_include_pad. Taps past the end padding, which ceil_mode can
// produce, are not padding and never counted (as PyTorch). Sums and the
// gradients' accumulations are in double, as in the interpreter.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

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

/// The position of the forward's winner in window (oy, ox) of `in`: the
/// first maximum, or the first NaN; -1 for a window without inputs.
template <typename T>
int64_t findWinner(const T *in, const Pool2DParams &p, int64_t height,
                   int64_t width, int64_t oy, int64_t ox) {
  int64_t winner = -1;
  visitWindow(p, height, width, oy, ox, [&](int64_t tap) {
    if (winner < 0 || (!std::isnan(in[winner]) &&
                       (std::isnan(in[tap]) || in[tap] > in[winner])))
      winner = tap;
  });
  return winner;
}

} // namespace

/// The taps of each output position along one dimension that fall inside
/// the input: output o reads input positions taps[begin[o] .. begin[o+1]).
struct WindowTaps {
  std::vector<int64_t> taps, begin;
};

static WindowTaps getWindowTaps(int64_t inSize, int64_t outSize, int64_t kernel,
                                int64_t stride, int64_t dilation,
                                int64_t padBefore) {
  WindowTaps windows;
  for (int64_t o = 0; o < outSize; ++o) {
    windows.begin.push_back(static_cast<int64_t>(windows.taps.size()));
    for (int64_t k = 0; k < kernel; ++k) {
      int64_t i = o * stride + k * dilation - padBefore;
      if (i >= 0 && i < inSize)
        windows.taps.push_back(i);
    }
  }
  windows.begin.push_back(static_cast<int64_t>(windows.taps.size()));
  return windows;
}

/// The taps of every window's rows and of its columns.
static std::pair<WindowTaps, WindowTaps>
getWindowTaps(const Pool2DParams &p, int64_t height, int64_t width,
              int64_t outHeight, int64_t outWidth) {
  return {getWindowTaps(height, outHeight, p.kernel[0], p.strides[0],
                        p.dilations[0], p.padding[0]),
          getWindowTaps(width, outWidth, p.kernel[1], p.strides[1],
                        p.dilations[1], p.padding[1])};
}

/// Whether any of `count` values is NaN.
template <typename T> static bool hasNaN(const T *values, int64_t count) {
  bool found = false;
  for (int64_t i = 0; i < count; ++i)
    found |= values[i] != values[i];
  return found;
}

/// The maximum of a window is the maximum over its columns of each
/// column's maximum over the window's rows: one pass down the rows of the
/// input (contiguous, vectorized), one along the row of column maxima. A
/// plane holding a NaN takes the tap-by-tap walk, where NaN wins and stays.
template <typename T>
void dpc::cpu::maxPool2d(const T *input, Dims inputShape,
                         const Pool2DParams &params, T *out, Dims outShape) {
  int64_t planes = at(inputShape, 0) * at(inputShape, 1);
  int64_t height = at(inputShape, 2), width = at(inputShape, 3);
  int64_t outHeight = at(outShape, 2), outWidth = at(outShape, 3);
  auto [rows, columns] =
      getWindowTaps(params, height, width, outHeight, outWidth);
  constexpr T lowest = -std::numeric_limits<T>::infinity();
  std::vector<T> columnMaxima(width);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T *in = input + plane * height * width;
    if (hasNaN(in, height * width)) {
      for (int64_t oy = 0; oy < outHeight; ++oy)
        for (int64_t ox = 0; ox < outWidth; ++ox) {
          T best = lowest;
          visitWindow(params, height, width, oy, ox, [&](int64_t tap) {
            if (!std::isnan(best) && (std::isnan(in[tap]) || in[tap] > best))
              best = in[tap];
          });
          *out++ = best;
        }
      continue;
    }
    for (int64_t oy = 0; oy < outHeight; ++oy) {
      T *maxima = columnMaxima.data();
      std::fill(maxima, maxima + width, lowest);
      for (int64_t r = rows.begin[oy]; r < rows.begin[oy + 1]; ++r) {
        const T *row = in + rows.taps[r] * width;
        for (int64_t x = 0; x < width; ++x)
          maxima[x] = row[x] > maxima[x] ? row[x] : maxima[x];
      }
      for (int64_t ox = 0; ox < outWidth; ++ox) {
        T best = lowest;
        for (int64_t c = columns.begin[ox]; c < columns.begin[ox + 1]; ++c)
          best =
              maxima[columns.taps[c]] > best ? maxima[columns.taps[c]] : best;
        *out++ = best;
      }
    }
  }
}

template <typename T>
void dpc::cpu::avgPool2d(const T *input, Dims inputShape,
                         const Pool2DParams &params, T *out, Dims outShape) {
  int64_t planes = at(inputShape, 0) * at(inputShape, 1);
  int64_t height = at(inputShape, 2), width = at(inputShape, 3);
  int64_t outHeight = at(outShape, 2), outWidth = at(outShape, 3);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T *in = input + plane * height * width;
    for (int64_t oy = 0; oy < outHeight; ++oy)
      for (int64_t ox = 0; ox < outWidth; ++ox) {
        double sum = 0;
        int64_t valid = 0;
        int64_t padded =
            visitWindow(params, height, width, oy, ox, [&](int64_t tap) {
              sum += in[tap];
              ++valid;
            });
        *out++ = static_cast<T>(
            sum / static_cast<double>(params.countIncludePad ? padded : valid));
      }
  }
}

template <typename T>
void dpc::cpu::maxPool2dGrad(const T *input, Dims inputShape, const T *outGrad,
                             Dims outGradShape, const Pool2DParams &params,
                             T *out) {
  int64_t planes = at(inputShape, 0) * at(inputShape, 1);
  int64_t height = at(inputShape, 2), width = at(inputShape, 3);
  int64_t outHeight = at(outGradShape, 2), outWidth = at(outGradShape, 3);
  auto [rows, columns] =
      getWindowTaps(params, height, width, outHeight, outWidth);
  std::vector<double> sums(height * width);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T *in = input + plane * height * width;
    const T *grad = outGrad + plane * outHeight * outWidth;
    std::fill(sums.begin(), sums.end(), 0.0);
    bool nan = hasNaN(in, height * width);
    for (int64_t oy = 0; oy < outHeight; ++oy)
      for (int64_t ox = 0; ox < outWidth; ++ox) {
        int64_t winner;
        if (nan) {
          winner = findWinner(in, params, height, width, oy, ox);
        } else {
          // The first maximum in row-major order, without branches on the
          // data (a comparison a tap is as likely to win as to lose).
          int64_t rowsBegin = rows.begin[oy], rowsEnd = rows.begin[oy + 1];
          int64_t columnsBegin = columns.begin[ox],
                  columnsEnd = columns.begin[ox + 1];
          if (rowsBegin == rowsEnd || columnsBegin == columnsEnd)
            continue;
          winner = rows.taps[rowsBegin] * width + columns.taps[columnsBegin];
          T best = in[winner];
          for (int64_t r = rowsBegin; r < rowsEnd; ++r)
            for (int64_t c = columnsBegin; c < columnsEnd; ++c) {
              int64_t tap = rows.taps[r] * width + columns.taps[c];
              bool greater = in[tap] > best;
              best = greater ? in[tap] : best;
              winner = greater ? tap : winner;
            }
        }
        if (winner >= 0)
          sums[winner] += grad[oy * outWidth + ox];
      }
    std::copy(sums.begin(), sums.end(), out + plane * height * width);
  }
}

template <typename T>
void dpc::cpu::avgPool2dGrad(const T *outGrad, Dims outGradShape,
                             const Pool2DParams &params, T *out,
                             Dims outShape) {
  int64_t planes = at(outShape, 0) * at(outShape, 1);
  int64_t height = at(outShape, 2), width = at(outShape, 3);
  int64_t outHeight = at(outGradShape, 2), outWidth = at(outGradShape, 3);
  std::vector<double> sums(height * width);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T *grad = outGrad + plane * outHeight * outWidth;
    std::fill(sums.begin(), sums.end(), 0.0);
    for (int64_t oy = 0; oy < outHeight; ++oy)
      for (int64_t ox = 0; ox < outWidth; ++ox) {
        // Count the window first, then share the gradient over it.
        int64_t valid = 0;
        int64_t padded = visitWindow(params, height, width, oy, ox,
                                     [&](int64_t) { ++valid; });
        double share =
            grad[oy * outWidth + ox] /
            static_cast<double>(params.countIncludePad ? padded : valid);
        visitWindow(params, height, width, oy, ox,
                    [&](int64_t tap) { sums[tap] += share; });
      }
    std::copy(sums.begin(), sums.end(), out + plane * height * width);
  }
}

#define DPC_INSTANTIATE(T)                                                     \
  template void dpc::cpu::maxPool2d<T>(const T *, Dims, const Pool2DParams &,  \
                                       T *, Dims);                             \
  template void dpc::cpu::avgPool2d<T>(const T *, Dims, const Pool2DParams &,  \
                                       T *, Dims);                             \
  template void dpc::cpu::maxPool2dGrad<T>(const T *, Dims, const T *, Dims,   \
                                           const Pool2DParams &, T *);         \
  template void dpc::cpu::avgPool2dGrad<T>(const T *, Dims,                    \
                                           const Pool2DParams &, T *, Dims);
DPC_INSTANTIATE(float)
DPC_INSTANTIATE(double)
#undef DPC_INSTANTIATE
