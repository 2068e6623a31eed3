//===- Reduction.h - Reductions and softmax on the GPU ----------*- C++ -*-===//
//
// A thread per output element (per slice for softmax), which walks its
// reduced elements in order: float sums accumulate in double and integer
// sums wrap, max and min propagate NaN, softmax computes in double and
// rounds once — the interpreter's arithmetic (lib/Interpreter), so that
// results agree with it and with the CPU backend.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_REDUCTION_H
#define DPC_RUNTIME_CUDA_REDUCTION_H

#include "dpc/Runtime/Cuda/Context.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace dpc::cuda {

enum class ReduceKind { Sum, Mean, Max, Min };

namespace detail {
/// The accumulator of a reduction of T: double for floats, T otherwise.
template <typename T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <typename A>
DPC_HOST_DEVICE inline A combine(ReduceKind kind, A acc, A x) {
  if (kind == ReduceKind::Sum || kind == ReduceKind::Mean) {
    if constexpr (std::is_integral_v<A>)
      return A(uint64_t(acc) + uint64_t(x));
    else
      return acc + x;
  }
  if constexpr (std::is_floating_point_v<A>)
    if (acc != acc || x != x)
      return std::numeric_limits<A>::quiet_NaN();
  if (kind == ReduceKind::Max)
    return acc < x ? x : acc;
  return x < acc ? x : acc;
}
} // namespace detail

/// Reduces `dims` (ascending) of `input`; the output holds the remaining
/// elements in order.
template <typename T>
void reduce(Context *context, const T *input, Shape shape, Shape dims,
            ReduceKind kind, T *out) {
  // The kept and reduced dimensions, with their strides in the input.
  Shape kept, keptStrides, reduced, reducedStrides;
  for (int32_t d = 0, next = 0; d < shape.rank; ++d) {
    bool isReduced = next < dims.rank && dims[next] == d;
    next += isReduced;
    Shape &sizes = isReduced ? reduced : kept;
    Shape &strides = isReduced ? reducedStrides : keptStrides;
    strides.d[strides.rank++] = shape.stride(d);
    sizes.d[sizes.rank++] = shape[d];
  }
  int64_t count = reduced.product();
  bool extremum = kind == ReduceKind::Max || kind == ReduceKind::Min;
  forEach(
      context, kept.product(), DPC_KERNEL(int64_t o) {
        using A = detail::Accumulator<T>;
        int64_t base = 0, rest = o;
        for (int32_t k = kept.rank - 1; k >= 0; --k) {
          base += (rest % kept[k]) * keptStrides[k];
          rest /= kept[k];
        }
        A acc = 0;
        for (int64_t r = 0; r < count; ++r) {
          int64_t offset = base, left = r;
          for (int32_t k = reduced.rank - 1; k >= 0; --k) {
            offset += (left % reduced[k]) * reducedStrides[k];
            left /= reduced[k];
          }
          A x = A(input[offset]);
          acc = r == 0 && extremum ? x : detail::combine(kind, acc, x);
        }
        if (kind == ReduceKind::Mean)
          acc = acc / A(count);
        out[o] = T(acc);
      });
}

/// Softmax, or log-softmax, along `axis`, the maximum subtracted first; a
/// thread per slice.
template <typename T>
void softmax(Context *context, const T *input, Shape shape, int64_t axis,
             bool logarithm, T *out) {
  int64_t size = shape[int32_t(axis)], inner = shape.product(int32_t(axis) + 1);
  int64_t outer = shape.product(0, int32_t(axis));
  forEach(
      context, outer * inner, DPC_KERNEL(int64_t slice) {
        int64_t o = slice / inner, i = slice % inner;
        const T *in = input + o * size * inner + i;
        T *to = out + o * size * inner + i;
        double maximum = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < size; ++j)
          maximum =
              detail::combine(ReduceKind::Max, maximum, double(in[j * inner]));
        double sum = 0;
        for (int64_t j = 0; j < size; ++j)
          sum += std::exp(double(in[j * inner]) - maximum);
        double logSum = std::log(sum);
        for (int64_t j = 0; j < size; ++j) {
          double shifted = double(in[j * inner]) - maximum;
          to[j * inner] =
              T(logarithm ? shifted - logSum : std::exp(shifted) / sum);
        }
      });
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_REDUCTION_H
