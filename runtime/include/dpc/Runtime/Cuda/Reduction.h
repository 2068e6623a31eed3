//===- Reduction.h - Reductions and softmax on the GPU ----------*- C++ -*-===//
//
// A thread per output element (per slice for softmax), which walks its
// reduced elements in order, or, for few outputs, a thread per chunk of
// each and a second pass over the chunks: float sums accumulate in double
// and integer sums wrap, max and min propagate NaN, softmax computes in
// double and rounds once — the interpreter's arithmetic (lib/Interpreter),
// so that results agree with it and with the CPU backend.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_REDUCTION_H
#define DPC_RUNTIME_CUDA_REDUCTION_H

#include "dpc/Runtime/Cuda/Context.h"

#include <algorithm>
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

namespace detail {
/// Below this many outputs a reduction is split into chunks: one thread per
/// output would leave the GPU nearly idle while each walks millions of
/// elements (the norms of a large weight, one thread each, took seconds).
constexpr int64_t kParallelOutputs = 16384;
/// The fewest elements a chunk's thread sums.
constexpr int64_t kMinChunk = 256;
} // namespace detail

/// Reduces `dims` (ascending) of a tensor of `shape` whose element at flat
/// index i is `read(i)` (a T; a host-device functor, so that a compiled
/// program reduces an elementwise chain without storing it); the output
/// holds the remaining elements in order. With few outputs, each output's
/// elements are cut into chunks summed by threads of their own, and the
/// chunks' partial results are combined in order by a second kernel: still
/// one fixed order, in double for floats.
template <typename T, typename Read>
void reduceElements(Context *context, Shape shape, Shape dims, ReduceKind kind,
                    T *out, Read read) {
  using A = detail::Accumulator<T>;
  static_assert(sizeof(A) <= sizeof(double), "partials live in scratch");
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
  int64_t count = reduced.product(), outputs = kept.product();
  bool extremum = kind == ReduceKind::Max || kind == ReduceKind::Min;
  // About sqrt(count) chunks of about sqrt(count) elements: the two
  // passes then walk about as far.
  int64_t chunks = 1;
  if (outputs < detail::kParallelOutputs && count >= 2 * detail::kMinChunk)
    chunks = std::max<int64_t>(
        1, std::min(int64_t(std::sqrt(double(count))),
                    (detail::kParallelOutputs + outputs - 1) / outputs));
  // With chunks <= sqrt(count), (chunks - 1) * chunk < count: no chunk is
  // empty, so a max or min never combines a partial of nothing.
  int64_t chunk = (count + chunks - 1) / chunks;
  // Reduced dimensions that are the innermost ones are one run of
  // consecutive elements: no index arithmetic per element.
  bool innermost = reduced.rank == 0 || (dims[0] == shape.rank - dims.rank &&
                                         dims[dims.rank - 1] == shape.rank - 1);
  // Output o's reduced elements [begin, end) combined, in order.
  auto walk = [=] DPC_HOST_DEVICE(int64_t o, int64_t begin, int64_t end) {
    int64_t base = 0, rest = o;
    for (int32_t k = kept.rank - 1; k >= 0; --k) {
      base += (rest % kept[k]) * keptStrides[k];
      rest /= kept[k];
    }
    A acc = 0;
    for (int64_t r = begin; r < end; ++r) {
      int64_t offset = base + r;
      if (!innermost) {
        offset = base;
        for (int64_t k = reduced.rank - 1, left = r; k >= 0; --k) {
          offset += (left % reduced[int32_t(k)]) * reducedStrides[int32_t(k)];
          left /= reduced[int32_t(k)];
        }
      }
      A x = A(read(offset));
      acc = r == begin && extremum ? x : detail::combine(kind, acc, x);
    }
    return acc;
  };
  auto finish = [=] DPC_HOST_DEVICE(A acc) {
    if (kind == ReduceKind::Mean)
      acc = acc / A(count);
    return T(acc);
  };
  if (chunks == 1) {
    forEach(
        context, outputs, DPC_KERNEL(int64_t o) {
          out[o] = finish(walk(o, 0, count));
        });
    return;
  }
  A *partials = reinterpret_cast<A *>(getScratch(context, outputs * chunks));
  forEach(
      context, outputs * chunks, DPC_KERNEL(int64_t e) {
        int64_t o = e / chunks, c = e % chunks;
        int64_t begin = c * chunk, end = std::min(count, begin + chunk);
        partials[e] = walk(o, begin, end);
      });
  forEach(
      context, outputs, DPC_KERNEL(int64_t o) {
        const A *part = partials + o * chunks;
        A acc = part[0];
        for (int64_t c = 1; c < chunks; ++c)
          acc = detail::combine(kind, acc, part[c]);
        out[o] = finish(acc);
      });
}

/// reduceElements with the kind as a template argument, as the CPU
/// library's is, so that a compiled program calls both alike.
template <ReduceKind Kind, typename T, typename Read>
void reduceElements(Context *context, Shape shape, Shape dims, T *out,
                    Read read) {
  reduceElements(context, shape, dims, Kind, out, read);
}

/// Reduces `dims` (ascending) of `input` (reduceElements reading memory).
template <typename T>
void reduce(Context *context, const T *input, Shape shape, Shape dims,
            ReduceKind kind, T *out) {
  reduceElements(context, shape, dims, kind, out,
                 [=] DPC_HOST_DEVICE(int64_t i) { return input[i]; });
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
