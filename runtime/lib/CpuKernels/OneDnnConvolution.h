//===- OneDnnConvolution.h - fp32 convolutions through oneDNN ---*- C++ -*-===//
//
// Each returns false, having written nothing, when oneDNN cannot run the
// convolution; the caller then computes it with im2col and GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_LIB_CPUKERNELS_ONEDNNCONVOLUTION_H
#define DPC_RUNTIME_LIB_CPUKERNELS_ONEDNNCONVOLUTION_H

#include "dpc/Runtime/CpuKernels.h"

namespace dpc::cpu::detail {

/// conv2d: NCHW input, OIHW filter, optional bias.
bool oneDnnConv2d(const float *input, Dims inputShape, const float *filter,
                  Dims filterShape, const float *bias,
                  const Conv2DParams &params, float *out, Dims outShape);

/// The gradient of conv2d with respect to its input, from the gradient of
/// its output and its OIHW filter.
bool oneDnnConv2dBackwardData(const float *outGrad, Dims outGradShape,
                              const float *filter, Dims filterShape,
                              const Conv2DParams &params, float *inGrad,
                              Dims inGradShape);

/// The gradient of conv2d with respect to its filter.
bool oneDnnConv2dBackwardWeights(const float *input, Dims inputShape,
                                 const float *outGrad, Dims outGradShape,
                                 const Conv2DParams &params, float *filterGrad,
                                 Dims filterShape);

} // namespace dpc::cpu::detail

#endif // DPC_RUNTIME_LIB_CPUKERNELS_ONEDNNCONVOLUTION_H
