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
// by element into a run of outputs, both tight loops.
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

/// Combines every element of the input (`value(i)`, an Acc) into `acc` by
/// `op`; `runs` (non-empty, sizes > 0) describe the input, `outStrides`
/// the position of each run's index in `acc` (0 on reduced runs).
template <typename T, typename Acc, typename Op, typename Value>
void accumulate(const std::vector<Run> &runs,
                const std::vector<int64_t> &outStrides, Acc *acc, Op op,
                Value value) {
  int64_t rank = static_cast<int64_t>(runs.size());
  int64_t inner = runs.back().size;
  bool innerReduced = runs.back().reduced;
  int64_t outerCount = 1;
  for (int64_t d = 0; d + 1 < rank; ++d)
    outerCount *= runs[d].size;
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
      offset += outStrides[d];
      if (++index[d] < runs[d].size)
        break;
      offset -= outStrides[d] * runs[d].size;
      index[d] = 0;
    }
  }
}

} // namespace reduction

/// Reduces `dims` of a tensor of `shape` whose element at flat index i is
/// `read(i)` (a T); the output has the remaining elements in order.
template <typename T, typename Read>
void reduceElements(Dims shape, Dims dims, ReduceKind kind, T *out,
                    Read read) {
  using reduction::Run;
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> isReduced(rank, false);
  for (int64_t dim : dims)
    isReduced[dim] = true;
  int64_t reducedCount = 1, outCount = 1, inCount = 1;
  std::vector<Run> runs;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = shape.begin()[d];
    inCount *= size;
    (isReduced[d] ? reducedCount : outCount) *= size;
    if (size == 1)
      continue;
    if (!runs.empty() && runs.back().reduced == isReduced[d])
      runs.back().size *= size;
    else
      runs.push_back({size, isReduced[d]});
  }
  if (runs.empty())
    runs.push_back({1, false});
  std::vector<int64_t> outStrides(runs.size(), 0);
  for (int64_t d = static_cast<int64_t>(runs.size()) - 1, stride = 1; d >= 0;
       --d)
    if (!runs[d].reduced) {
      outStrides[d] = stride;
      stride *= runs[d].size;
    }

  // Floats accumulate in double, integers in (wrapping) int64.
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  Acc lowest, highest;
  if constexpr (std::is_floating_point_v<T>) {
    highest = std::numeric_limits<Acc>::infinity();
    lowest = -highest;
  } else {
    lowest = std::numeric_limits<Acc>::min();
    highest = std::numeric_limits<Acc>::max();
  }
  Acc initial = kind == ReduceKind::Max   ? lowest
                : kind == ReduceKind::Min ? highest
                                          : Acc(0);
  std::vector<Acc> acc(outCount, initial);
  auto value = [&](int64_t i) { return static_cast<Acc>(read(i)); };
  if (inCount > 0) {
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      reduction::accumulate<T>(runs, outStrides, acc.data(), reduction::Add(),
                               value);
      break;
    case ReduceKind::Max:
      reduction::accumulate<T>(runs, outStrides, acc.data(), reduction::Max(),
                               value);
      break;
    case ReduceKind::Min:
      reduction::accumulate<T>(runs, outStrides, acc.data(), reduction::Min(),
                               value);
      break;
    }
  }
  for (int64_t i = 0; i < outCount; ++i) {
    Acc result = acc[i];
    // The mean of integers truncates toward zero; of nothing, is NaN.
    if (kind == ReduceKind::Mean) {
      if constexpr (std::is_floating_point_v<T>)
        result /= static_cast<double>(reducedCount);
      else
        result = reducedCount ? result / reducedCount : 0;
    }
    out[i] = static_cast<T>(result);
  }
}

} // namespace dpc::cpu

#endif // DPC_RUNTIME_CPUREDUCTION_H
