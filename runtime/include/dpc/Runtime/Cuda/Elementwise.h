//===- Elementwise.h - Rounding, checks and dropout on the GPU --*- C++ -*-===//
//
// What generated elementwise kernels call (the 16-bit roundings and the
// float-to-integer cast, as the interpreter conforms every result), and
// the elementwise passes a program runs after some ops: rounding a
// kernel's f16/bf16 results held in floats, checking results for NaN and
// Inf under --check-finite, and dropout with the Philox mask every backend
// shares.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_ELEMENTWISE_H
#define DPC_RUNTIME_CUDA_ELEMENTWISE_H

#include "dpc/Runtime/Cuda/Context.h"
#include "dpc/Runtime/Philox.h"

#include <cmath>
#include <cstring>

#ifdef DPC_CUDA_EMULATION
#include "dpc/Runtime/FloatConversion.h"
#else
#include <cuda_fp16.h>
#endif

namespace dpc::cuda {

/// `value` rounded to the nearest bfloat16 (ties to even), as a float.
DPC_HOST_DEVICE inline float roundToBFloat16(double value) {
  float narrow = float(value);
  uint32_t bits;
#ifdef __CUDA_ARCH__
  bits = __float_as_uint(narrow);
#else
  std::memcpy(&bits, &narrow, sizeof(bits));
#endif
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    bits |= 0x00400000u; // NaN stays (quiet) NaN
  else
    bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  std::memcpy(&narrow, &bits, sizeof(bits));
  return narrow;
#endif
}

/// `value` rounded to the nearest IEEE half (ties to even), as a float.
DPC_HOST_DEVICE inline float roundToHalf(double value) {
#ifdef DPC_CUDA_EMULATION
  return dpc::roundToHalf(float(value));
#else
  return __half2float(__float2half_rn(float(value)));
#endif
}

/// `truncated` as an integer of `width` bits; sets `outOfRange` (and
/// gives 0) when it does not fit.
DPC_HOST_DEVICE inline int64_t castToInteger(double truncated, int width,
                                             bool &outOfRange) {
  double limit = double(uint64_t(1) << (width - 1));
  if (!(truncated >= -limit && truncated < limit)) {
    outOfRange = true;
    return 0;
  }
  return int64_t(truncated);
}

enum class Rounding { BFloat16, Half };

/// Rounds `count` floats in place.
inline void roundInPlace(Context *context, float *data, int64_t count,
                         Rounding rounding) {
  forEach(
      context, count, DPC_KERNEL(int64_t i) {
        data[i] = rounding == Rounding::BFloat16 ? roundToBFloat16(data[i])
                                                 : roundToHalf(data[i]);
      });
}

/// Records a NotFinite fault of op `op`'s result `result` if `data` holds
/// NaN or Inf.
template <typename T>
void checkFinite(Context *context, int32_t op, int32_t result, const T *data,
                 int64_t count) {
  FaultRecord *faults = context->faults;
  forEach(
      context, count, DPC_KERNEL(int64_t i) {
        if (!(data[i] - data[i] == 0))
          raise(faults, op, Fault::NotFinite, result);
      });
}

/// Elements dpc::dropoutKeeps drops are zeroed, the others scaled by
/// 1 / (1 - ratio); element i has global index *offset + i. The seed and
/// offset are read where they are, on the device.
template <typename T>
void dropout(Context *context, const T *input, int64_t count,
             const int64_t *seed, const int64_t *offset, double ratio,
             int64_t stream, T *out) {
  double scale = 1.0 / (1.0 - ratio);
  forEach(
      context, count, DPC_KERNEL(int64_t i) {
        bool keep = dpc::dropoutKeeps(uint64_t(*seed), uint64_t(stream),
                                      uint64_t(*offset) + uint64_t(i), ratio);
        out[i] = keep ? T(input[i] * scale) : T(0);
      });
}

/// Copies `bytes` within the device, in stream order.
inline void copy(Context *context, void *to, const void *from, int64_t bytes) {
#ifdef DPC_CUDA_EMULATION
  (void)context;
  std::memmove(to, from, size_t(bytes));
#else
  cudaMemcpyAsync(to, from, size_t(bytes), cudaMemcpyDeviceToDevice,
                  context->compute);
#endif
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_ELEMENTWISE_H
