//===- KernelSupport.h - Shapes and errors for the CPU kernels --*- C++ -*-===//
//
// What the kernel families share and callers never see: shape arithmetic
// on `Dims` and the setter of the thread's kernel error (the double sums
// that reductions and normalizations share are in CpuReduction.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_LIB_CPUKERNELS_KERNELSUPPORT_H
#define DPC_RUNTIME_LIB_CPUKERNELS_KERNELSUPPORT_H

#include "dpc/Runtime/CpuKernels.h"
#include "dpc/Runtime/CpuReduction.h"

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

/// exponentials[i] = e^(values[i] - shift) for i < count (VectorMath.cpp):
/// vectorized in float, within a few ulp of the correctly rounded
/// exponential of the exact difference; libm's in double.
void exponentiateShifted(const float *values, float shift, int64_t count,
                         float *exponentials);
void exponentiateShifted(const double *values, double shift, int64_t count,
                         double *exponentials);

/// The largest of `count` values (-inf for none), NaN if one is NaN.
float maximumOf(const float *values, int64_t count);
double maximumOf(const double *values, int64_t count);

/// Softmax's and cross-entropy's step over a row of `size` values `stride`
/// apart: the maximum taken out, one exponential per value, their sum in
/// double. Its buffers serve row after row.
template <typename T> class ShiftedExponentials {
public:
  ShiftedExponentials(int64_t size, int64_t stride)
      : exponentials(size), size(size), stride(stride),
        gathered(stride == 1 ? 0 : size) {}

  /// Returns the sum of e^(row[j * stride] - maximum).
  double compute(const T *row) {
    // A strided row is gathered first: the exponentials run over
    // contiguous values.
    values = row;
    if (stride != 1) {
      for (int64_t j = 0; j < size; ++j)
        gathered[j] = row[j * stride];
      values = gathered.data();
    }
    maximum = maximumOf(values, size);
    exponentiateShifted(values, maximum, size, exponentials.data());
    return sumInDouble<T>(0.0, size, [&](int64_t j) {
      return static_cast<double>(exponentials[j]);
    });
  }

  /// The last row's values (contiguous), maximum and exponentials.
  const T *values = nullptr;
  T maximum = 0;
  std::vector<T> exponentials;

private:
  int64_t size, stride;
  std::vector<T> gathered;
};

} // namespace dpc::cpu::detail

#endif // DPC_RUNTIME_LIB_CPUKERNELS_KERNELSUPPORT_H
