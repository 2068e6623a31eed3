//===- Contraction.cpp - Matrix products and convolution ------------------===//
//
// Straightforward loops in a cache-friendly order, accumulating in double
// (so results are within an ulp or so of exact, whatever the contraction
// length): matmul runs i-k-j so that the innermost loop walks a row of the
// right-hand side and of the accumulator; conv2d accumulates one output
// plane at a time, tap by tap, so that the innermost loop walks a row of
// the plane (and of the input when the stride is 1). Both vectorize;
// neither needs BLAS.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"
#include "Kernels.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

Tensor interpreter::matmul(const Tensor &lhs, const Tensor &rhs,
                           ArrayRef<int64_t> resultShape) {
  Tensor result(lhs.getKind(), resultShape);
  ArrayRef<int64_t> lhsShape = lhs.getShape(), rhsShape = rhs.getShape();
  int64_t m = lhsShape[lhsShape.size() - 2], k = lhsShape.back();
  int64_t n = rhsShape.back();
  ArrayRef<int64_t> batch = resultShape.drop_back(2);
  // Batch strides in elements of whole matrices, 0 where broadcast.
  std::array<SmallVector<int64_t>, 2> strides = {
      getBroadcastStrides(lhsShape.drop_back(2), batch),
      getBroadcastStrides(rhsShape.drop_back(2), batch)};
  for (int64_t &stride : strides[0])
    stride *= m * k;
  for (int64_t &stride : strides[1])
    stride *= k * n;

  dispatchFloatKind(lhs.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *a = lhs.getData<T>().data();
    const T *b = rhs.getData<T>().data();
    T *c = result.getData<T>().data();
    std::vector<double> row(n);
    forEachBroadcast<2>(batch, strides, [&](int64_t index, auto offsets) {
      const T *aMatrix = a + offsets[0];
      const T *bMatrix = b + offsets[1];
      T *cMatrix = c + index * m * n;
      for (int64_t i = 0; i < m; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t p = 0; p < k; ++p) {
          double scale = aMatrix[i * k + p];
          const T *bRow = bMatrix + p * n;
          for (int64_t j = 0; j < n; ++j)
            row[j] += scale * bRow[j];
        }
        std::copy(row.begin(), row.end(), cMatrix + i * n);
      }
    });
  });
  return result;
}

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

} // namespace

Tensor interpreter::conv2d(const Tensor &input, const Tensor &filter,
                           const Tensor *bias, const Conv2DParams &params,
                           ArrayRef<int64_t> resultShape) {
  Tensor result(input.getKind(), resultShape);
  ArrayRef<int64_t> in = input.getShape(), fs = filter.getShape();
  int64_t batch = in[0], channels = in[1], height = in[2], width = in[3];
  int64_t filters = fs[0], groupChannels = fs[1], kh = fs[2], kw = fs[3];
  int64_t outHeight = resultShape[2], outWidth = resultShape[3];
  int64_t groupFilters = filters / params.groups;
  auto [strideH, strideW] = params.strides;
  auto [dilationH, dilationW] = params.dilations;
  int64_t padTop = params.padding[0], padLeft = params.padding[1];

  // Per filter column: the output columns that read inside the input.
  SmallVector<ValidRange> columns;
  for (int64_t x = 0; x < kw; ++x)
    columns.push_back(
        getValidRange(x * dilationW - padLeft, strideW, width, outWidth));

  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *inData = input.getData<T>().data();
    const T *filterData = filter.getData<T>().data();
    T *outData = result.getData<T>().data();
    std::vector<double> plane(outHeight * outWidth);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t f = 0; f < filters; ++f) {
        int64_t group = f / groupFilters;
        std::fill(plane.begin(), plane.end(),
                  bias ? static_cast<double>(bias->getData<T>()[f]) : 0.0);
        for (int64_t c = 0; c < groupChannels; ++c) {
          const T *inPlane =
              inData +
              (b * channels + group * groupChannels + c) * height * width;
          const T *taps = filterData + (f * groupChannels + c) * kh * kw;
          for (int64_t y = 0; y < kh; ++y) {
            for (int64_t x = 0; x < kw; ++x) {
              double weight = taps[y * kw + x];
              int64_t columnOffset = x * dilationW - padLeft;
              auto [begin, end] = columns[x];
              for (int64_t oy = 0; oy < outHeight; ++oy) {
                int64_t iy = oy * strideH + y * dilationH - padTop;
                if (iy < 0 || iy >= height)
                  continue;
                const T *inRow = inPlane + iy * width + columnOffset;
                double *outRow = plane.data() + oy * outWidth;
                if (strideW == 1) {
                  for (int64_t ox = begin; ox < end; ++ox)
                    outRow[ox] += weight * inRow[ox];
                } else {
                  for (int64_t ox = begin; ox < end; ++ox)
                    outRow[ox] += weight * inRow[ox * strideW];
                }
              }
            }
          }
        }
        std::copy(plane.begin(), plane.end(),
                  outData + (b * filters + f) * outHeight * outWidth);
      }
    }
  });
  return result;
}

Tensor interpreter::convTranspose2d(const Tensor &input, const Tensor &filter,
                                    const Tensor *bias,
                                    const Conv2DParams &params,
                                    ArrayRef<int64_t> resultShape) {
  Tensor result(input.getKind(), resultShape);
  ArrayRef<int64_t> in = input.getShape(), fs = filter.getShape();
  int64_t batch = in[0], channels = in[1], height = in[2], width = in[3];
  int64_t groupFilters = fs[1], kh = fs[2], kw = fs[3];
  int64_t filters = resultShape[1];
  int64_t outHeight = resultShape[2], outWidth = resultShape[3];
  int64_t groupChannels = channels / params.groups;
  auto [strideH, strideW] = params.strides;
  auto [dilationH, dilationW] = params.dilations;
  int64_t padTop = params.padding[0], padLeft = params.padding[1];

  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *inData = input.getData<T>().data();
    const T *filterData = filter.getData<T>().data();
    T *outData = result.getData<T>().data();
    // One output plane at a time, gathering what every input of its group
    // scatters into it.
    std::vector<double> plane(outHeight * outWidth);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t f = 0; f < filters; ++f) {
        int64_t group = f / groupFilters, local = f % groupFilters;
        std::fill(plane.begin(), plane.end(),
                  bias ? static_cast<double>(bias->getData<T>()[f]) : 0.0);
        for (int64_t c = group * groupChannels; c < (group + 1) * groupChannels;
             ++c) {
          const T *inPlane = inData + (b * channels + c) * height * width;
          const T *taps = filterData + (c * groupFilters + local) * kh * kw;
          for (int64_t y = 0; y < kh; ++y)
            for (int64_t x = 0; x < kw; ++x) {
              double weight = taps[y * kw + x];
              for (int64_t iy = 0; iy < height; ++iy) {
                int64_t oy = iy * strideH - padTop + y * dilationH;
                if (oy < 0 || oy >= outHeight)
                  continue;
                for (int64_t ix = 0; ix < width; ++ix) {
                  int64_t ox = ix * strideW - padLeft + x * dilationW;
                  if (ox >= 0 && ox < outWidth)
                    plane[oy * outWidth + ox] +=
                        weight * inPlane[iy * width + ix];
                }
              }
            }
        }
        std::copy(plane.begin(), plane.end(),
                  outData + (b * filters + f) * outHeight * outWidth);
      }
    }
  });
  return result;
}

Tensor interpreter::conv2dFilterGrad(const Tensor &input, const Tensor &outGrad,
                                     const Conv2DParams &params,
                                     ArrayRef<int64_t> resultShape) {
  Tensor result(input.getKind(), resultShape);
  ArrayRef<int64_t> in = input.getShape(), og = outGrad.getShape();
  int64_t batch = in[0], channels = in[1], height = in[2], width = in[3];
  int64_t filters = resultShape[0], groupChannels = resultShape[1];
  int64_t kh = resultShape[2], kw = resultShape[3];
  int64_t outHeight = og[2], outWidth = og[3];
  int64_t groupFilters = filters / params.groups;
  auto [strideH, strideW] = params.strides;
  auto [dilationH, dilationW] = params.dilations;
  int64_t padTop = params.padding[0], padLeft = params.padding[1];

  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *inData = input.getData<T>().data();
    const T *gradData = outGrad.getData<T>().data();
    T *out = result.getData<T>().data();
    for (int64_t f = 0; f < filters; ++f) {
      int64_t group = f / groupFilters;
      for (int64_t c = 0; c < groupChannels; ++c)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x) {
            int64_t columnOffset = x * dilationW - padLeft;
            auto [begin, end] =
                getValidRange(columnOffset, strideW, width, outWidth);
            double sum = 0;
            for (int64_t b = 0; b < batch; ++b) {
              const T *inPlane =
                  inData +
                  (b * channels + group * groupChannels + c) * height * width;
              const T *gradPlane =
                  gradData + (b * filters + f) * outHeight * outWidth;
              for (int64_t oy = 0; oy < outHeight; ++oy) {
                int64_t iy = oy * strideH + y * dilationH - padTop;
                if (iy < 0 || iy >= height)
                  continue;
                for (int64_t ox = begin; ox < end; ++ox)
                  sum += static_cast<double>(gradPlane[oy * outWidth + ox]) *
                         inPlane[iy * width + ox * strideW + columnOffset];
              }
            }
            *out++ = static_cast<T>(sum);
          }
    }
  });
  return result;
}
