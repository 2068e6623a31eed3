//===- Portability.h - One kernel source for the GPU and for tests -*- C++ -*-//
//
// The CUDA backend's kernels are written once, as a body run for each
// index of a range (forEach, Context.h), and compiled two ways: by nvcc
// for the GPU, where every index is a thread, and by a host C++ compiler
// with DPC_CUDA_EMULATION defined, where the range is a loop. The second
// runs the generated program of a CUDA artifact on machines without a GPU,
// so that its arithmetic, index computations and buffer plan are tested
// against the interpreter wherever dpc is built.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_PORTABILITY_H
#define DPC_RUNTIME_CUDA_PORTABILITY_H

#include <cstdint>
#include <initializer_list>

#ifdef DPC_CUDA_EMULATION
#define DPC_HOST_DEVICE
/// A lambda run for each index of a range (on the GPU: by each thread).
#define DPC_KERNEL [=]
/// A program's constant data, at file scope.
#define DPC_DEVICE_DATA
#else
#ifndef __CUDACC__
#error "CUDA kernels are compiled by nvcc, or with DPC_CUDA_EMULATION"
#endif
#define DPC_HOST_DEVICE __host__ __device__
#define DPC_KERNEL [=] __device__
#define DPC_DEVICE_DATA __device__
#endif

namespace dpc::cuda {

/// A shape passed by value into kernels (at most 8 dimensions, as the
/// partitioned programs have).
struct Shape {
  static constexpr int kMaxRank = 8;
  int32_t rank = 0;
  int64_t d[kMaxRank] = {};

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) {
    for (int64_t size : dims)
      d[rank++] = size;
  }
  DPC_HOST_DEVICE int64_t operator[](int32_t i) const { return d[i]; }
  /// The product of dimensions [begin, end).
  DPC_HOST_DEVICE int64_t product(int32_t begin = 0, int32_t end = -1) const {
    if (end < 0)
      end = rank;
    int64_t result = 1;
    for (int32_t i = begin; i < end; ++i)
      result *= d[i];
    return result;
  }
  /// The row-major stride of dimension `i`, in elements.
  DPC_HOST_DEVICE int64_t stride(int32_t i) const { return product(i + 1); }
};

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_PORTABILITY_H
