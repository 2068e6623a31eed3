//===- Elementwise.h - Elementwise kernels with broadcasting ----*- C++ -*-===//
//
// The elementwise ops share three kernels: map one tensor, zip two under
// NumPy broadcasting, and select among three. They are templates over the
// per-element function, which the dispatch table supplies; the functions
// below are the ones whose integer and float forms differ (wrap-around
// integer arithmetic, NaN-propagating max and min).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_INTERPRETER_ELEMENTWISE_H
#define DPC_LIB_INTERPRETER_ELEMENTWISE_H

#include "Tensor.h"

#include <array>
#include <cmath>
#include <limits>

namespace mlir::dpc::interpreter {

/// Strides for reading a tensor of `shape` with the indices of its NumPy
/// broadcast `resultShape`: aligned from the right, 0 along the dimensions
/// that are broadcast.
SmallVector<int64_t> getBroadcastStrides(ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> resultShape);

/// Calls `body(i, offsets)` for every element `i` of `resultShape`, in
/// row-major order, with `offsets[k]` the position of that element in
/// operand `k`, whose strides (from getBroadcastStrides) are `strides[k]`.
template <size_t N, typename Body>
void forEachBroadcast(ArrayRef<int64_t> resultShape,
                      const std::array<SmallVector<int64_t>, N> &strides,
                      Body body) {
  int64_t rank = resultShape.size();
  int64_t count = 1;
  for (int64_t size : resultShape)
    count *= size;
  if (count == 0)
    return;
  std::array<int64_t, N> offsets{};
  if (rank == 0) {
    body(0, offsets);
    return;
  }
  SmallVector<int64_t> index(rank, 0);
  int64_t inner = resultShape.back();
  for (int64_t i = 0; i < count; i += inner) {
    // The innermost dimension is the hot loop.
    std::array<int64_t, N> current = offsets;
    for (int64_t j = 0; j < inner; ++j) {
      body(i + j, current);
      for (size_t k = 0; k < N; ++k)
        current[k] += strides[k][rank - 1];
    }
    // Advance the outer index like an odometer.
    for (int64_t d = rank - 2; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][d];
      if (++index[d] < resultShape[d])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= strides[k][d] * resultShape[d];
      index[d] = 0;
    }
  }
}

/// `fn` applied to every element of `input`; the result has its kind.
template <typename Fn> Tensor mapElements(const Tensor &input, Fn fn) {
  Tensor result(input.getKind(), input.getShape());
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    MutableArrayRef<T> out = result.getData<T>();
    for (size_t i = 0, e = in.size(); i < e; ++i)
      out[i] = fn(in[i]);
  });
  return result;
}

/// Like mapElements, for functions only defined on floats.
template <typename Fn> Tensor mapFloatElements(const Tensor &input, Fn fn) {
  Tensor result(input.getKind(), input.getShape());
  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    MutableArrayRef<T> out = result.getData<T>();
    for (size_t i = 0, e = in.size(); i < e; ++i)
      out[i] = fn(in[i]);
  });
  return result;
}

/// `fn(x, y)` over the broadcast of `lhs` and `rhs` to `resultShape`. The
/// result has kind `resultKind`; `fn` returns a value convertible to it.
template <typename Fn>
Tensor zipBroadcast(const Tensor &lhs, const Tensor &rhs,
                    ArrayRef<int64_t> resultShape, ElementKind resultKind,
                    Fn fn) {
  Tensor result(resultKind, resultShape);
  std::array<SmallVector<int64_t>, 2> strides = {
      getBroadcastStrides(lhs.getShape(), resultShape),
      getBroadcastStrides(rhs.getShape(), resultShape)};
  dispatchKind(lhs.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> x = lhs.getData<T>(), y = rhs.getData<T>();
    dispatchKind(resultKind, [&](auto resultZero) {
      using R = decltype(resultZero);
      MutableArrayRef<R> out = result.getData<R>();
      forEachBroadcast<2>(resultShape, strides, [&](int64_t i, auto offsets) {
        out[i] = static_cast<R>(fn(x[offsets[0]], y[offsets[1]]));
      });
    });
  });
  return result;
}

/// `condition ? onTrue : onFalse` over the broadcast of the three.
Tensor selectBroadcast(const Tensor &condition, const Tensor &onTrue,
                       const Tensor &onFalse, ArrayRef<int64_t> resultShape);

//===----------------------------------------------------------------------===//
// Per-element functions whose integer and float forms differ
//===----------------------------------------------------------------------===//

/// Integer arithmetic wraps around (as two's complement), never overflows
/// in C++; the result is wrapped to the declared width afterwards.
template <typename T> T wrapping(uint64_t value) {
  return static_cast<T>(value);
}

struct Add {
  template <typename T> T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>)
      return wrapping<T>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
    else
      return x + y;
  }
};

struct Sub {
  template <typename T> T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>)
      return wrapping<T>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
    else
      return x - y;
  }
};

struct Mul {
  template <typename T> T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>)
      return wrapping<T>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
    else
      return x * y;
  }
};

/// Integer division truncates toward zero (as C and ONNX); the divisor
/// has been checked to be non-zero.
struct Div {
  template <typename T> T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      if (y == -1)
        return wrapping<T>(0 - static_cast<uint64_t>(x));
      return x / y;
    } else {
      return x / y;
    }
  }
};

/// The remainder of x / y with the quotient rounded toward zero (the sign
/// of x) or, with `floorMod`, down (the sign of y). Integer divisors are
/// checked for zero before.
struct Mod {
  bool floorMod;
  template <typename T> T operator()(T x, T y) const {
    T r;
    if constexpr (std::is_integral_v<T>)
      r = y == -1 ? T(0) : T(x % y);
    else
      r = std::fmod(x, y);
    return floorMod && r != 0 && ((r < 0) != (y < 0)) ? T(r + y) : r;
  }
};

/// max and min propagate NaN, as torch.maximum and torch.minimum do.
struct Max {
  template <typename T> T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x) || std::isnan(y))
        return std::numeric_limits<T>::quiet_NaN();
    return x < y ? y : x;
  }
};

struct Min {
  template <typename T> T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x) || std::isnan(y))
        return std::numeric_limits<T>::quiet_NaN();
    return y < x ? y : x;
  }
};

struct Neg {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return wrapping<T>(0 - static_cast<uint64_t>(x));
    else
      return -x;
  }
};

struct Abs {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x < 0 ? Neg()(x) : x;
    else
      return std::fabs(x);
  }
};

/// Boolean ops on i1 values held as 0 or 1; the functions are total on
/// every element type only so that the kernels instantiate.
struct And {
  template <typename T> T operator()(T x, T y) const {
    return static_cast<T>(x != 0 && y != 0);
  }
};

struct Or {
  template <typename T> T operator()(T x, T y) const {
    return static_cast<T>(x != 0 || y != 0);
  }
};

struct Not {
  template <typename T> T operator()(T x) const {
    return static_cast<T>(x == 0);
  }
};

} // namespace mlir::dpc::interpreter

#endif // DPC_LIB_INTERPRETER_ELEMENTWISE_H
