//===- CpuReduction.h - Reductions of computed elements ---------*- C++ -*-===//
//
// A reduction reads its input through a function of the element's flat
// index, so that a compiled program can reduce an elementwise chain
// without storing it (the squares of a gradient summed for its norm).
// The kernel library's `reduce` is this function reading memory; both
// compute what the interpreter computes: float sums in double, integer
// sums wrapping, max and min propagating NaN.
//
// The walk merges adjacent dimensions that are both reduced or both kept
// (and drops those of size 1), then visits the input once in order: the
// innermost run either folds into one output element or combines element
// by element into a run of outputs, both tight loops. Only those loops
// are templates of the reader; the merging is the library's.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CPUREDUCTION_H
#define DPC_RUNTIME_CPUREDUCTION_H

#include "dpc/Runtime/CpuKernels.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace dpc::cpu {

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

namespace reduction {

/// One dimension of a reduction after merging.
struct Run {
  int64_t size;
  bool reduced;
};

struct Add {
  template <typename A> A operator()(A x, A y) const {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(static_cast<uint64_t>(x) +
                            static_cast<uint64_t>(y));
    else
      return x + y;
  }
};

struct Max {
  template <typename A> A operator()(A x, A y) const {
    if constexpr (std::is_floating_point_v<A>)
      if (std::isnan(x) || std::isnan(y))
        return std::numeric_limits<A>::quiet_NaN();
    return x < y ? y : x;
  }
};

struct Min {
  template <typename A> A operator()(A x, A y) const {
    if constexpr (std::is_floating_point_v<A>)
      if (std::isnan(x) || std::isnan(y))
        return std::numeric_limits<A>::quiet_NaN();
    return y < x ? y : x;
  }
};

/// A reduction's input after merging, and its counts.
struct Layout {
  std::vector<Run> runs;
  /// The position of each run's index in the output (0 on reduced runs).
  std::vector<int64_t> outStrides;
  int64_t inCount = 1, outCount = 1, reducedCount = 1;
};

/// Reducing `dims` of a tensor of `shape`: adjacent dimensions that are
/// both reduced or both kept merged into runs (never none), those of size
/// 1 dropped.
Layout getLayout(Dims shape, Dims dims);

/// Floats accumulate in double, integers in (wrapping) int64.
template <typename T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <typename T> Accumulator<T> getInitial(ReduceKind kind) {
  using Acc = Accumulator<T>;
  if (kind == ReduceKind::Max)
    return std::is_floating_point_v<T> ? -std::numeric_limits<Acc>::infinity()
                                       : std::numeric_limits<Acc>::min();
  if (kind == ReduceKind::Min)
    return std::is_floating_point_v<T> ? std::numeric_limits<Acc>::infinity()
                                       : std::numeric_limits<Acc>::max();
  return Acc(0);
}

/// Writes the accumulated outputs as T: a mean divided by the count (of
/// integers truncating toward zero; of nothing, NaN).
template <typename T>
void finish(ReduceKind kind, const Layout &layout, const Accumulator<T> *acc,
            T *out) {
  for (int64_t i = 0; i < layout.outCount; ++i) {
    Accumulator<T> result = acc[i];
    if (kind == ReduceKind::Mean) {
      if constexpr (std::is_floating_point_v<T>)
        result /= static_cast<double>(layout.reducedCount);
      else
        result = layout.reducedCount ? result / layout.reducedCount : 0;
    }
    out[i] = static_cast<T>(result);
  }
}

/// Combines every element of the input (`value(i)`, an Acc) into `acc` by
/// `op`: the innermost run either folds into one output element or
/// combines element by element into a run of outputs.
template <typename T, typename Acc, typename Op, typename Value>
void accumulate(const Layout &layout, Acc *acc, Op op, Value value) {
  const std::vector<Run> &runs = layout.runs;
  int64_t rank = static_cast<int64_t>(runs.size());
  int64_t inner = runs.back().size;
  bool innerReduced = runs.back().reduced;
  int64_t outerCount = layout.inCount / inner;
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t o = 0, base = 0; o < outerCount; ++o, base += inner) {
    if (!innerReduced) {
      Acc *target = acc + offset;
      for (int64_t j = 0; j < inner; ++j)
        target[j] = op(target[j], value(base + j));
    } else if constexpr (std::is_floating_point_v<T> &&
                         std::is_same_v<Op, Add>) {
      acc[offset] = sumInDouble<T>(acc[offset], inner,
                                   [&](int64_t j) { return value(base + j); });
    } else {
      for (int64_t j = 0; j < inner; ++j)
        acc[offset] = op(acc[offset], value(base + j));
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += layout.outStrides[d];
      if (++index[d] < runs[d].size)
        break;
      offset -= layout.outStrides[d] * runs[d].size;
      index[d] = 0;
    }
  }
}

} // namespace reduction

/// Reduces `dims` of a tensor of `shape` whose element at flat index i is
/// `read(i)` (a T); the output has the remaining elements in order. The
/// kind is a template argument, so that a compiled program instantiates
/// one walk per reduction it fuses.
template <ReduceKind Kind, typename T, typename Read>
void reduceElements(Dims shape, Dims dims, T *out, Read read) {
  using Acc = reduction::Accumulator<T>;
  reduction::Layout layout = reduction::getLayout(shape, dims);
  std::vector<Acc> acc(layout.outCount, reduction::getInitial<T>(Kind));
  auto value = [&](int64_t i) { return static_cast<Acc>(read(i)); };
  if (layout.inCount > 0) {
    if constexpr (Kind == ReduceKind::Max)
      reduction::accumulate<T>(layout, acc.data(), reduction::Max(), value);
    else if constexpr (Kind == ReduceKind::Min)
      reduction::accumulate<T>(layout, acc.data(), reduction::Min(), value);
    else
      reduction::accumulate<T>(layout, acc.data(), reduction::Add(), value);
  }
  reduction::finish(Kind, layout, acc.data(), out);
}

} // namespace dpc::cpu

#endif // DPC_RUNTIME_CPUREDUCTION_H
