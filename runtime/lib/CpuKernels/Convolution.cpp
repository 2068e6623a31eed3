//===- Convolution.cpp - 2-D convolutions through GEMM --------------------===//
//
// conv2d unfolds each image and group into a column matrix (im2col: one
// row per filter tap, one column per output position, zeros where the tap
// reads padding) and multiplies the group's filters by it. The filter
// gradient multiplies the output gradient by the transposed columns,
// summed over the batch; the transposed convolution multiplies the
// transposed filters by the input and folds the columns back onto the
// output (col2im), each tap adding where it lands. A 1x1 kernel with unit
// strides and no padding needs no columns: the image is its own matrix.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "KernelSupport.h"
#include "OneDnnConvolution.h"

#include <algorithm>
#include <vector>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

namespace {

/// The output positions `[begin, end)` along one dimension whose input
/// position `out * stride + offset` is inside `[0, size)`.
struct ValidRange {
  int64_t begin;
  int64_t end;
};

ValidRange getValidRange(int64_t offset, int64_t stride, int64_t size,
                         int64_t outSize) {
  // Smallest out with out * stride + offset >= 0.
  int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // One past the largest out with out * stride + offset <= size - 1.
  int64_t last = size - 1 - offset;
  int64_t end = last < 0 ? 0 : last / stride + 1;
  begin = std::min(begin, outSize);
  end = std::max(begin, std::min(end, outSize));
  return {begin, end};
}

/// The geometry of one convolution: `height` x `width` images, a `kh` x
/// `kw` kernel, `outHeight` x `outWidth` outputs.
struct Geometry {
  int64_t height, width, kh, kw, outHeight, outWidth;
  const Conv2DParams &params;

  /// Whether the im2col matrix of an image is the image itself.
  bool isPointwise() const {
    return kh == 1 && kw == 1 && params.strides[0] == 1 &&
           params.strides[1] == 1 && params.padding[0] == 0 &&
           params.padding[1] == 0 && outHeight == height && outWidth == width;
  }
};

/// The columns of `channels` planes of `in`: row (c, y, x) holds, for each
/// output position, the input element tap (y, x) of channel c reads there.
template <typename T>
void im2col(const T *in, int64_t channels, const Geometry &g, T *col) {
  int64_t positions = g.outHeight * g.outWidth;
  const Conv2DParams &p = g.params;
  for (int64_t c = 0; c < channels; ++c) {
    const T *plane = in + c * g.height * g.width;
    for (int64_t y = 0; y < g.kh; ++y)
      for (int64_t x = 0; x < g.kw; ++x) {
        T *row = col + ((c * g.kh + y) * g.kw + x) * positions;
        int64_t columnOffset = x * p.dilations[1] - p.padding[1];
        auto [begin, end] =
            getValidRange(columnOffset, p.strides[1], g.width, g.outWidth);
        for (int64_t oy = 0; oy < g.outHeight; ++oy) {
          T *to = row + oy * g.outWidth;
          int64_t iy = oy * p.strides[0] + y * p.dilations[0] - p.padding[0];
          if (iy < 0 || iy >= g.height) {
            std::fill(to, to + g.outWidth, T(0));
            continue;
          }
          const T *from = plane + iy * g.width;
          std::fill(to, to + begin, T(0));
          if (p.strides[1] == 1)
            std::copy(from + begin + columnOffset, from + end + columnOffset,
                      to + begin);
          else
            for (int64_t ox = begin; ox < end; ++ox)
              to[ox] = from[ox * p.strides[1] + columnOffset];
          std::fill(to + end, to + g.outWidth, T(0));
        }
      }
  }
}

/// The inverse of im2col, accumulating: adds each column element of
/// `planes` output planes to the output element its tap lands on. Here
/// `height` x `width` is the size of the transposed convolution's input
/// and `outHeight` x `outWidth` that of its output.
template <typename T>
void col2im(const T *col, int64_t planes, const Geometry &g, T *out) {
  int64_t positions = g.height * g.width;
  const Conv2DParams &p = g.params;
  for (int64_t f = 0; f < planes; ++f) {
    T *plane = out + f * g.outHeight * g.outWidth;
    for (int64_t y = 0; y < g.kh; ++y)
      for (int64_t x = 0; x < g.kw; ++x) {
        const T *row = col + ((f * g.kh + y) * g.kw + x) * positions;
        int64_t columnOffset = x * p.dilations[1] - p.padding[1];
        auto [begin, end] =
            getValidRange(columnOffset, p.strides[1], g.outWidth, g.width);
        for (int64_t iy = 0; iy < g.height; ++iy) {
          int64_t oy = iy * p.strides[0] + y * p.dilations[0] - p.padding[0];
          if (oy < 0 || oy >= g.outHeight)
            continue;
          const T *from = row + iy * g.width;
          T *to = plane + oy * g.outWidth;
          for (int64_t ix = begin; ix < end; ++ix)
            to[ix * p.strides[1] + columnOffset] += from[ix];
        }
      }
  }
}

/// Sets each of the `planes` planes of `size` elements of `out` to its
/// bias, or to zero without one.
template <typename T>
void fillBias(T *out, const T *bias, int64_t planes, int64_t size) {
  for (int64_t f = 0; f < planes; ++f)
    std::fill(out + f * size, out + (f + 1) * size, bias ? bias[f] : T(0));
}

} // namespace

template <typename T>
void dpc::cpu::conv2d(const T *input, Dims inputShape, const T *filter,
                      Dims filterShape, const T *bias,
                      const Conv2DParams &params, T *out, Dims outShape) {
  if constexpr (std::is_same_v<T, float>)
    if (oneDnnConv2d(input, inputShape, filter, filterShape, bias, params, out,
                     outShape))
      return;
  int64_t batch = at(inputShape, 0), channels = at(inputShape, 1);
  int64_t filters = at(filterShape, 0), groupChannels = at(filterShape, 1);
  Geometry g{at(inputShape, 2),
             at(inputShape, 3),
             at(filterShape, 2),
             at(filterShape, 3),
             at(outShape, 2),
             at(outShape, 3),
             params};
  int64_t groupFilters = filters / params.groups;
  int64_t taps = groupChannels * g.kh * g.kw;
  int64_t positions = g.outHeight * g.outWidth;
  bool pointwise = g.isPointwise();
  std::vector<T> col(pointwise ? 0 : taps * positions);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t group = 0; group < params.groups; ++group) {
      const T *image =
          input + (b * channels + group * groupChannels) * g.height * g.width;
      if (!pointwise)
        im2col(image, groupChannels, g, col.data());
      T *result = out + (b * filters + group * groupFilters) * positions;
      fillBias(result, bias ? bias + group * groupFilters : nullptr,
               groupFilters, positions);
      gemm<T>(false, false, groupFilters, positions, taps, T(1),
              filter + group * groupFilters * taps, taps,
              pointwise ? image : col.data(), positions, T(1), result,
              positions);
    }
}

template <typename T>
void dpc::cpu::convTranspose2d(const T *input, Dims inputShape, const T *filter,
                               Dims filterShape, const T *bias,
                               const Conv2DParams &params, T *out,
                               Dims outShape) {
  // The adjoint of a convolution with this (OIHW) filter: its backward data.
  if constexpr (std::is_same_v<T, float>)
    if (oneDnnConv2dBackwardData(input, inputShape, filter, filterShape, params,
                                 out, outShape)) {
      if (bias) {
        int64_t planes = at(outShape, 1);
        int64_t size = at(outShape, 2) * at(outShape, 3);
        for (int64_t b = 0; b < at(outShape, 0); ++b)
          for (int64_t f = 0; f < planes; ++f)
            for (int64_t i = 0; i < size; ++i)
              out[(b * planes + f) * size + i] += bias[f];
      }
      return;
    }
  int64_t batch = at(inputShape, 0), channels = at(inputShape, 1);
  int64_t groupFilters = at(filterShape, 1), filters = at(outShape, 1);
  Geometry g{at(inputShape, 2),
             at(inputShape, 3),
             at(filterShape, 2),
             at(filterShape, 3),
             at(outShape, 2),
             at(outShape, 3),
             params};
  int64_t groupChannels = channels / params.groups;
  int64_t taps = groupFilters * g.kh * g.kw;
  int64_t positions = g.height * g.width;
  int64_t outPositions = g.outHeight * g.outWidth;
  bool pointwise = g.isPointwise();
  std::vector<T> col(pointwise ? 0 : taps * positions);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t group = 0; group < params.groups; ++group) {
      const T *image =
          input + (b * channels + group * groupChannels) * positions;
      // The group's filters are a groupChannels x taps matrix.
      const T *groupFilter = filter + group * groupChannels * taps;
      T *result = out + (b * filters + group * groupFilters) * outPositions;
      fillBias(result, bias ? bias + group * groupFilters : nullptr,
               groupFilters, outPositions);
      if (pointwise) {
        gemm<T>(true, false, groupFilters, positions, groupChannels, T(1),
                groupFilter, taps, image, positions, T(1), result, positions);
        continue;
      }
      gemm<T>(true, false, taps, positions, groupChannels, T(1), groupFilter,
              taps, image, positions, T(0), col.data(), positions);
      col2im(col.data(), groupFilters, g, result);
    }
}

template <typename T>
void dpc::cpu::conv2dFilterGrad(const T *input, Dims inputShape,
                                const T *outGrad, Dims outGradShape,
                                const Conv2DParams &params, T *out,
                                Dims outShape) {
  if constexpr (std::is_same_v<T, float>)
    if (oneDnnConv2dBackwardWeights(input, inputShape, outGrad, outGradShape,
                                    params, out, outShape))
      return;
  int64_t batch = at(inputShape, 0), channels = at(inputShape, 1);
  int64_t filters = at(outShape, 0), groupChannels = at(outShape, 1);
  Geometry g{at(inputShape, 2),
             at(inputShape, 3),
             at(outShape, 2),
             at(outShape, 3),
             at(outGradShape, 2),
             at(outGradShape, 3),
             params};
  int64_t groupFilters = filters / params.groups;
  int64_t taps = groupChannels * g.kh * g.kw;
  int64_t positions = g.outHeight * g.outWidth;
  bool pointwise = g.isPointwise();
  std::vector<T> col(pointwise ? 0 : taps * positions);
  std::fill(out, out + filters * taps, T(0));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t group = 0; group < params.groups; ++group) {
      const T *image =
          input + (b * channels + group * groupChannels) * g.height * g.width;
      if (!pointwise)
        im2col(image, groupChannels, g, col.data());
      gemm<T>(false, true, groupFilters, taps, positions, T(1),
              outGrad + (b * filters + group * groupFilters) * positions,
              positions, pointwise ? image : col.data(), positions, T(1),
              out + group * groupFilters * taps, taps);
    }
}

#define DPC_INSTANTIATE(T)                                                     \
  template void dpc::cpu::conv2d<T>(const T *, Dims, const T *, Dims,          \
                                    const T *, const Conv2DParams &, T *,      \
                                    Dims);                                     \
  template void dpc::cpu::convTranspose2d<T>(const T *, Dims, const T *, Dims, \
                                             const T *, const Conv2DParams &,  \
                                             T *, Dims);                       \
  template void dpc::cpu::conv2dFilterGrad<T>(                                 \
      const T *, Dims, const T *, Dims, const Conv2DParams &, T *, Dims);
DPC_INSTANTIATE(float)
DPC_INSTANTIATE(double)
#undef DPC_INSTANTIATE
