//===- Reduction.cpp - Reductions and softmax -----------------------------===//
//
// Reductions walk the input once, each element combining into the output
// element it reduces to; float sums accumulate in double. Softmax and
// log-softmax subtract the maximum of each slice before exponentiating and
// compute in double, rounding once at the end.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"
#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

Tensor interpreter::reduce(const Tensor &input, ArrayRef<int64_t> dims,
                           ReduceKind kind, ArrayRef<int64_t> resultShape) {
  ArrayRef<int64_t> shape = input.getShape();
  // The result with the reduced dimensions kept as 1: reading it with the
  // strides of that shape (0 on reduced dimensions) maps each input
  // element to the output element it reduces into.
  SmallVector<int64_t> kept(shape.begin(), shape.end());
  int64_t reducedCount = 1;
  for (int64_t dim : dims) {
    reducedCount *= kept[dim];
    kept[dim] = 1;
  }
  std::array<SmallVector<int64_t>, 1> strides = {
      getBroadcastStrides(kept, shape)};
  Tensor result(input.getKind(), resultShape);

  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    // Floats accumulate in double, integers in (wrapping) int64.
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    // The identity of max is the lowest value (-inf for floats).
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
    std::vector<Acc> acc(result.getNumElements(), initial);
    ArrayRef<T> in = input.getData<T>();
    forEachBroadcast<1>(shape, strides, [&](int64_t i, auto offsets) {
      Acc &target = acc[offsets[0]];
      Acc value = in[i];
      switch (kind) {
      case ReduceKind::Sum:
      case ReduceKind::Mean:
        target = Add()(target, value);
        break;
      case ReduceKind::Max:
        target = Max()(target, value);
        break;
      case ReduceKind::Min:
        target = Min()(target, value);
        break;
      }
    });
    MutableArrayRef<T> out = result.getData<T>();
    for (size_t i = 0; i < acc.size(); ++i) {
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
  });
  return result;
}

Tensor interpreter::softmax(const Tensor &input, int64_t axis, bool logarithm) {
  ArrayRef<int64_t> shape = input.getShape();
  int64_t outer = 1, size = shape[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  Tensor result(input.getKind(), shape);

  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *in = input.getData<T>().data();
    T *out = result.getData<T>().data();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t base = o * size * inner + i;
        double maximum = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < size; ++j)
          maximum = Max()(maximum, static_cast<double>(in[base + j * inner]));
        double sum = 0;
        for (int64_t j = 0; j < size; ++j)
          sum += std::exp(in[base + j * inner] - maximum);
        double logSum = std::log(sum);
        for (int64_t j = 0; j < size; ++j) {
          double shifted = in[base + j * inner] - maximum;
          out[base + j * inner] = static_cast<T>(
              logarithm ? shifted - logSum : std::exp(shifted) / sum);
        }
      }
    }
  });
  return result;
}

Tensor interpreter::argReduce(const Tensor &input, int64_t axis, bool largest,
                              bool last, ArrayRef<int64_t> resultShape) {
  ArrayRef<int64_t> shape = input.getShape();
  int64_t outer = 1, inner = 1, size = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  Tensor result(ElementKind::I64, resultShape);
  MutableArrayRef<int64_t> out = result.getData<int64_t>();
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        T held = in[o * size * inner + i];
        for (int64_t k = 1; k < size; ++k) {
          T value = in[(o * size + k) * inner + i];
          bool better = largest ? value > held : value < held;
          if (better || (last && value == held)) {
            best = k;
            held = value;
          }
        }
        out[o * inner + i] = best;
      }
  });
  return result;
}

std::pair<Tensor, Tensor> interpreter::topK(const Tensor &input, int64_t k) {
  Tensor values(input.getKind(), {k});
  Tensor indices(ElementKind::I64, {k});
  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    std::vector<int64_t> order(in.size());
    std::iota(order.begin(), order.end(), 0);
    auto magnitude = [&](int64_t i) {
      T x = std::abs(in[i]);
      return std::isnan(x) ? std::numeric_limits<T>::infinity() : x;
    };
    auto before = [&](int64_t a, int64_t b) {
      T x = magnitude(a), y = magnitude(b);
      bool nanA = std::isnan(in[a]), nanB = std::isnan(in[b]);
      if (nanA != nanB)
        return nanA;
      return x != y ? x > y : a < b;
    };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t i = 0; i < k; ++i) {
      values.getData<T>()[i] = in[order[i]];
      indices.getData<int64_t>()[i] = order[i];
    }
  });
  return {std::move(values), std::move(indices)};
}
