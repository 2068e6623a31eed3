//===- Convolution.h - 2-D convolutions on the GPU --------------*- C++ -*-===//
//
// Direct convolutions, a thread per output element summing its taps in a
// fixed order: NCHW inputs, OIHW filters, padding [top, left, bottom,
// right]. The transposed convolution (the adjoint of conv2d) and the
// filter gradient gather, per output element, the terms the forward
// scatters, so no two threads write one element.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CONVOLUTION_H
#define DPC_RUNTIME_CUDA_CONVOLUTION_H

#include "dpc/Runtime/Cuda/Context.h"

namespace dpc::cuda {

struct Conv2DParams {
  int64_t strides[2];
  /// [top, left, bottom, right].
  int64_t padding[4];
  int64_t dilations[2];
  int64_t groups;
};

/// NCHW input, OIHW filter, optional bias (F, or null).
template <typename T>
void conv2d(Context *context, const T *input, Shape inShape, const T *filter,
            Shape filterShape, const T *bias, Conv2DParams p, T *out,
            Shape outShape) {
  int64_t channels = inShape[1], height = inShape[2], width = inShape[3];
  int64_t groupChannels = filterShape[1], kh = filterShape[2],
          kw = filterShape[3];
  int64_t filters = outShape[1], outHeight = outShape[2],
          outWidth = outShape[3];
  int64_t groupFilters = filters / p.groups;
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t e) {
        int64_t ox = e % outWidth, oy = (e / outWidth) % outHeight;
        int64_t f = (e / (outWidth * outHeight)) % filters;
        int64_t b = e / (outWidth * outHeight * filters);
        int64_t firstChannel = (f / groupFilters) * groupChannels;
        T sum = bias ? bias[f] : T(0);
        for (int64_t c = 0; c < groupChannels; ++c)
          for (int64_t y = 0; y < kh; ++y) {
            int64_t iy = oy * p.strides[0] + y * p.dilations[0] - p.padding[0];
            if (iy < 0 || iy >= height)
              continue;
            for (int64_t x = 0; x < kw; ++x) {
              int64_t ix =
                  ox * p.strides[1] + x * p.dilations[1] - p.padding[1];
              if (ix < 0 || ix >= width)
                continue;
              sum += input[((b * channels + firstChannel + c) * height + iy) *
                               width +
                           ix] *
                     filter[((f * groupChannels + c) * kh + y) * kw + x];
            }
          }
        out[e] = sum;
      });
}

/// NCHW input, (C, F / groups, KH, KW) filter, optional bias: the adjoint
/// of conv2d (output_padding is in `outShape`).
template <typename T>
void convTranspose2d(Context *context, const T *input, Shape inShape,
                     const T *filter, Shape filterShape, const T *bias,
                     Conv2DParams p, T *out, Shape outShape) {
  int64_t channels = inShape[1], height = inShape[2], width = inShape[3];
  int64_t groupFilters = filterShape[1], kh = filterShape[2],
          kw = filterShape[3];
  int64_t filters = outShape[1], outHeight = outShape[2],
          outWidth = outShape[3];
  int64_t groupChannels = channels / p.groups;
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t e) {
        int64_t ox = e % outWidth, oy = (e / outWidth) % outHeight;
        int64_t f = (e / (outWidth * outHeight)) % filters;
        int64_t b = e / (outWidth * outHeight * filters);
        int64_t group = f / groupFilters, fInGroup = f % groupFilters;
        T sum = bias ? bias[f] : T(0);
        for (int64_t c = group * groupChannels; c < (group + 1) * groupChannels;
             ++c)
          for (int64_t y = 0; y < kh; ++y) {
            // The input row whose tap y lands on row oy.
            int64_t t = oy + p.padding[0] - y * p.dilations[0];
            if (t < 0 || t % p.strides[0] != 0 || t / p.strides[0] >= height)
              continue;
            int64_t iy = t / p.strides[0];
            for (int64_t x = 0; x < kw; ++x) {
              int64_t u = ox + p.padding[1] - x * p.dilations[1];
              if (u < 0 || u % p.strides[1] != 0 || u / p.strides[1] >= width)
                continue;
              int64_t ix = u / p.strides[1];
              sum += input[((b * channels + c) * height + iy) * width + ix] *
                     filter[((c * groupFilters + fInGroup) * kh + y) * kw + x];
            }
          }
        out[e] = sum;
      });
}

/// The gradient of conv2d with respect to its filter (of `outShape`).
template <typename T>
void conv2dFilterGrad(Context *context, const T *input, Shape inShape,
                      const T *outGrad, Shape outGradShape, Conv2DParams p,
                      T *out, Shape outShape) {
  int64_t batch = inShape[0], channels = inShape[1], height = inShape[2],
          width = inShape[3];
  int64_t filters = outShape[0], groupChannels = outShape[1], kh = outShape[2],
          kw = outShape[3];
  int64_t outHeight = outGradShape[2], outWidth = outGradShape[3];
  int64_t groupFilters = filters / p.groups;
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t e) {
        int64_t x = e % kw, y = (e / kw) % kh;
        int64_t c = (e / (kw * kh)) % groupChannels,
                f = e / (kw * kh * groupChannels);
        int64_t channel = (f / groupFilters) * groupChannels + c;
        T sum = 0;
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t oy = 0; oy < outHeight; ++oy) {
            int64_t iy = oy * p.strides[0] + y * p.dilations[0] - p.padding[0];
            if (iy < 0 || iy >= height)
              continue;
            for (int64_t ox = 0; ox < outWidth; ++ox) {
              int64_t ix =
                  ox * p.strides[1] + x * p.dilations[1] - p.padding[1];
              if (ix < 0 || ix >= width)
                continue;
              sum +=
                  input[((b * channels + channel) * height + iy) * width + ix] *
                  outGrad[((b * filters + f) * outHeight + oy) * outWidth + ox];
            }
          }
        out[e] = sum;
      });
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_CONVOLUTION_H
