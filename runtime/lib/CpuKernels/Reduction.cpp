//===- Reduction.cpp - Reductions, softmax and top-k ----------------------===//
//
// A reduction is CpuReduction.h's walk reading memory. Softmax takes one
// exponential per element in the element type (VectorMath.cpp) and sums
// and divides in double, rounding once; top-k orders by magnitude.
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

reduction::Layout dpc::cpu::reduction::getLayout(Dims shape, Dims dims) {
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> isReduced(rank, false);
  for (int64_t dim : dims)
    isReduced[dim] = true;
  Layout layout;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = shape.begin()[d];
    layout.inCount *= size;
    (isReduced[d] ? layout.reducedCount : layout.outCount) *= size;
    if (size == 1)
      continue;
    if (!layout.runs.empty() && layout.runs.back().reduced == isReduced[d])
      layout.runs.back().size *= size;
    else
      layout.runs.push_back({size, isReduced[d]});
  }
  if (layout.runs.empty())
    layout.runs.push_back({1, false});
  layout.outStrides.assign(layout.runs.size(), 0);
  for (int64_t d = static_cast<int64_t>(layout.runs.size()) - 1, stride = 1;
       d >= 0; --d)
    if (!layout.runs[d].reduced) {
      layout.outStrides[d] = stride;
      stride *= layout.runs[d].size;
    }
  return layout;
}

template <typename T>
void dpc::cpu::reduce(const T *input, Dims inputShape, Dims dims,
                      ReduceKind kind, T *out) {
  auto read = [input](int64_t i) { return input[i]; };
  switch (kind) {
  case ReduceKind::Sum:
    return reduceElements<ReduceKind::Sum>(inputShape, dims, out, read);
  case ReduceKind::Mean:
    return reduceElements<ReduceKind::Mean>(inputShape, dims, out, read);
  case ReduceKind::Max:
    return reduceElements<ReduceKind::Max>(inputShape, dims, out, read);
  case ReduceKind::Min:
    return reduceElements<ReduceKind::Min>(inputShape, dims, out, read);
  }
}

template <typename T>
void dpc::cpu::softmax(const T *input, Dims shape, int64_t axis, bool logarithm,
                       T *out) {
  int64_t outer = product(shape, 0, axis), size = at(shape, axis);
  int64_t inner = product(shape, axis + 1);
  ShiftedExponentials<T> row(size, inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *in = input + o * size * inner + i;
      T *to = out + o * size * inner + i;
      // One exponential per element: the sum's terms are the numerators.
      double sum = row.compute(in);
      const T *values = row.values;
      const std::vector<T> &exponentials = row.exponentials;
      T maximum = row.maximum;
      if (logarithm) {
        double logSum = std::log(sum);
        for (int64_t j = 0; j < size; ++j)
          to[j * inner] =
              static_cast<T>(static_cast<double>(values[j]) - maximum - logSum);
      } else if (inner == 1) {
        // Contiguous: the division vectorizes.
        for (int64_t j = 0; j < size; ++j)
          to[j] = static_cast<T>(exponentials[j] / sum);
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
