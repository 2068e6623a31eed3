//===- Reduction.cpp - Reductions, softmax and top-k ----------------------===//
//
// A reduction merges adjacent dimensions that are both reduced or both
// kept (and drops those of size 1), then walks the input once in order:
// the innermost run either folds into one output element or combines
// element by element into a run of outputs, both tight loops. Float sums
// accumulate in double (see sumInDouble) and integer sums wrap, as in the
// interpreter; max and min propagate NaN. Softmax computes each slice in
// double, rounding once.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

namespace {

struct AddOp {
  template <typename A> A operator()(A x, A y) const {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(static_cast<uint64_t>(x) +
                            static_cast<uint64_t>(y));
    else
      return x + y;
  }
};

struct MaxOp {
  template <typename A> A operator()(A x, A y) const {
    if constexpr (std::is_floating_point_v<A>)
      if (std::isnan(x) || std::isnan(y))
        return std::numeric_limits<A>::quiet_NaN();
    return x < y ? y : x;
  }
};

struct MinOp {
  template <typename A> A operator()(A x, A y) const {
    if constexpr (std::is_floating_point_v<A>)
      if (std::isnan(x) || std::isnan(y))
        return std::numeric_limits<A>::quiet_NaN();
    return y < x ? y : x;
  }
};

/// One dimension of a reduction after merging.
struct Run {
  int64_t size;
  bool reduced;
};

/// `value` combined with the `count` elements of `in` by `op`.
template <typename T, typename Acc, typename Op>
Acc foldRun(Acc value, const T *in, int64_t count, Op op) {
  if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, AddOp>) {
    return sumInDouble<T>(
        value, count, [&](int64_t j) { return static_cast<double>(in[j]); });
  } else {
    for (int64_t j = 0; j < count; ++j)
      value = op(value, static_cast<Acc>(in[j]));
    return value;
  }
}

/// Combines every element of `in` into `acc` by `op`; `runs` (non-empty,
/// sizes > 0) describe the input, `outStrides` the position of each run's
/// index in `acc` (0 on reduced runs).
template <typename T, typename Acc, typename Op>
void accumulate(const T *in, const std::vector<Run> &runs,
                const std::vector<int64_t> &outStrides, Acc *acc, Op op) {
  int64_t rank = static_cast<int64_t>(runs.size());
  int64_t inner = runs.back().size;
  bool innerReduced = runs.back().reduced;
  int64_t outerCount = 1;
  for (int64_t d = 0; d + 1 < rank; ++d)
    outerCount *= runs[d].size;
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t o = 0; o < outerCount; ++o, in += inner) {
    if (innerReduced) {
      acc[offset] = foldRun(acc[offset], in, inner, op);
    } else {
      Acc *target = acc + offset;
      for (int64_t j = 0; j < inner; ++j)
        target[j] = op(target[j], static_cast<Acc>(in[j]));
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

} // namespace

template <typename T>
void dpc::cpu::reduce(const T *input, Dims inputShape, Dims dims,
                      ReduceKind kind, T *out) {
  int64_t rank = getRank(inputShape);
  std::vector<bool> isReduced(rank, false);
  for (int64_t dim : dims)
    isReduced[dim] = true;
  int64_t reducedCount = 1, outCount = 1, inCount = product(inputShape);
  std::vector<Run> runs;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = at(inputShape, d);
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
  if (inCount > 0) {
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      accumulate(input, runs, outStrides, acc.data(), AddOp());
      break;
    case ReduceKind::Max:
      accumulate(input, runs, outStrides, acc.data(), MaxOp());
      break;
    case ReduceKind::Min:
      accumulate(input, runs, outStrides, acc.data(), MinOp());
      break;
    }
  }
  for (int64_t i = 0; i < outCount; ++i) {
    Acc value = acc[i];
    // The mean of integers truncates toward zero; of nothing, is NaN.
    if (kind == ReduceKind::Mean) {
      if constexpr (std::is_floating_point_v<T>)
        value /= static_cast<double>(reducedCount);
      else
        value = reducedCount ? value / reducedCount : 0;
    }
    out[i] = static_cast<T>(value);
  }
}

template <typename T>
void dpc::cpu::softmax(const T *input, Dims shape, int64_t axis, bool logarithm,
                       T *out) {
  int64_t outer = product(shape, 0, axis), size = at(shape, axis);
  int64_t inner = product(shape, axis + 1);
  std::vector<double> shifted(size), exponentials(size);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *in = input + o * size * inner + i;
      T *to = out + o * size * inner + i;
      double maximum = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < size; ++j)
        maximum = MaxOp()(maximum, static_cast<double>(in[j * inner]));
      // One exp per element: the sum's terms are the softmax's numerators.
      double sum = 0;
      for (int64_t j = 0; j < size; ++j) {
        shifted[j] = in[j * inner] - maximum;
        exponentials[j] = std::exp(shifted[j]);
        sum += exponentials[j];
      }
      if (logarithm) {
        double logSum = std::log(sum);
        for (int64_t j = 0; j < size; ++j)
          to[j * inner] = static_cast<T>(shifted[j] - logSum);
      } else {
        for (int64_t j = 0; j < size; ++j)
          to[j * inner] = static_cast<T>(exponentials[j] / sum);
      }
    }
}

template <typename T>
void dpc::cpu::topK(const T *input, int64_t size, int64_t k, T *values,
                    int64_t *indices) {
  std::vector<int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  auto magnitude = [&](int64_t i) {
    T x = std::abs(input[i]);
    return std::isnan(x) ? std::numeric_limits<T>::infinity() : x;
  };
  // NaN first, then by decreasing magnitude, then by position: a total
  // order, so the unstable partial sort is deterministic.
  auto before = [&](int64_t a, int64_t b) {
    bool nanA = std::isnan(input[a]), nanB = std::isnan(input[b]);
    if (nanA != nanB)
      return nanA;
    T x = magnitude(a), y = magnitude(b);
    return x != y ? x > y : a < b;
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
  for (int64_t i = 0; i < k; ++i) {
    values[i] = input[order[i]];
    indices[i] = order[i];
  }
}

#define DPC_INSTANTIATE_FLOAT(T)                                               \
  template void dpc::cpu::softmax<T>(const T *, Dims, int64_t, bool, T *);     \
  template void dpc::cpu::topK<T>(const T *, int64_t, int64_t, T *, int64_t *);
#define DPC_INSTANTIATE(T)                                                     \
  template void dpc::cpu::reduce<T>(const T *, Dims, Dims, ReduceKind, T *);
DPC_INSTANTIATE_FLOAT(float)
DPC_INSTANTIATE_FLOAT(double)
DPC_INSTANTIATE(float)
DPC_INSTANTIATE(double)
DPC_INSTANTIATE(int64_t)
#undef DPC_INSTANTIATE
#undef DPC_INSTANTIATE_FLOAT
