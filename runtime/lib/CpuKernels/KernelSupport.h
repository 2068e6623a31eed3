//===- KernelSupport.h - Shapes and errors for the CPU kernels --*- C++ -*-===//
//
// What the kernel families share and callers never see: shape arithmetic
// on `Dims`, the setter of the thread's kernel error, and the double sums
// that reductions and normalizations share.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_LIB_CPUKERNELS_KERNELSUPPORT_H
#define DPC_RUNTIME_LIB_CPUKERNELS_KERNELSUPPORT_H

#include "dpc/Runtime/CpuKernels.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace dpc::cpu::detail {

/// Records why the kernel running on this thread fails; returns false so
/// that kernels can `return fail(...)`.
bool fail(std::string message);

inline std::vector<int64_t> toVector(Dims dims) {
  return std::vector<int64_t>(dims.begin(), dims.end());
}

inline int64_t getRank(Dims dims) { return static_cast<int64_t>(dims.size()); }

inline int64_t at(Dims dims, int64_t i) { return dims.begin()[i]; }

/// The product of `dims[begin, end)`.
inline int64_t product(Dims dims, int64_t begin = 0, int64_t end = -1) {
  if (end < 0)
    end = getRank(dims);
  int64_t result = 1;
  for (int64_t d = begin; d < end; ++d)
    result *= at(dims, d);
  return result;
}

/// Row-major strides of `shape`, in elements.
inline std::vector<int64_t> getStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Strides for reading a tensor of `shape` with the indices of its NumPy
/// broadcast `resultShape`: aligned from the right, 0 where broadcast.
inline std::vector<int64_t>
getBroadcastStrides(const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &resultShape) {
  std::vector<int64_t> own = getStrides(shape);
  std::vector<int64_t> strides(resultShape.size(), 0);
  size_t offset = resultShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      strides[offset + d] = own[d];
  return strides;
}

/// `initial` plus the sum, in double, of `term(i)` for i < count. For
/// double data the terms are added in order, matching the interpreter bit
/// for bit. For float data, four interleaved partial sums break the chain
/// of dependent adds: they differ from the sequential sum by a few double
/// ulps, far below the float the result is eventually rounded to.
template <typename T, typename Term>
double sumInDouble(double initial, int64_t count, Term term) {
  if constexpr (std::is_same_v<T, float>) {
    double partial[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= count; i += 4)
      for (int64_t k = 0; k < 4; ++k)
        partial[k] += term(i + k);
    double sum = (partial[0] + partial[1]) + (partial[2] + partial[3]);
    for (; i < count; ++i)
      sum += term(i);
    return initial + sum;
  } else {
    for (int64_t i = 0; i < count; ++i)
      initial += term(i);
    return initial;
  }
}

} // namespace dpc::cpu::detail

#endif // DPC_RUNTIME_LIB_CPUKERNELS_KERNELSUPPORT_H
