//===- DataMovement.cpp - Reshaping, copying and gathering kernels --------===//
//
// broadcast_to, transpose, slice and pad are one strided copy each: the
// copy merges the dimensions it can and walks the rest like an odometer,
// the innermost two as a tiled 2-D loop when the read goes down columns
// (a transpose), so that both sides stay in cache. concat and split copy
// contiguous chunks. The gathers check every index before writing; the
// scatters add into zeros, float sums in double as in the interpreter.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

namespace {

/// out[i * outRow + j * outColumn] = in[i * inRow + j * inColumn] for
/// i < rows, j < columns.
template <typename T>
void copy2d(const T *in, int64_t inRow, int64_t inColumn, T *out,
            int64_t outRow, int64_t outColumn, int64_t rows, int64_t columns) {
  if (inColumn == 1 || inRow != 1) {
    for (int64_t i = 0; i < rows; ++i) {
      const T *from = in + i * inRow;
      T *to = out + i * outRow;
      if (inColumn == 1 && outColumn == 1)
        std::copy(from, from + columns, to);
      else
        for (int64_t j = 0; j < columns; ++j)
          to[j * outColumn] = from[j * inColumn];
    }
    return;
  }
  // Reading down columns: in tiles, so that the lines read stay cached
  // until every element of them is written.
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < columns; j0 += kTile) {
      int64_t iEnd = std::min(rows, i0 + kTile);
      int64_t jEnd = std::min(columns, j0 + kTile);
      for (int64_t i = i0; i < iEnd; ++i)
        for (int64_t j = j0; j < jEnd; ++j)
          out[i * outRow + j * outColumn] = in[i + j * inColumn];
    }
}

/// out[sum(i[d] * outStrides[d])] = in[sum(i[d] * inStrides[d])] for
/// every index i of `shape`.
template <typename T>
void stridedCopy(const T *in, const std::vector<int64_t> &inStrides, T *out,
                 const std::vector<int64_t> &outStrides,
                 const std::vector<int64_t> &shape) {
  // Drop unit dimensions and merge those that are contiguous with the
  // next on both sides.
  std::vector<int64_t> sizes, from, to;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      return;
    if (shape[d] == 1)
      continue;
    if (!sizes.empty() && from.back() == inStrides[d] * shape[d] &&
        to.back() == outStrides[d] * shape[d]) {
      sizes.back() *= shape[d];
      from.back() = inStrides[d];
      to.back() = outStrides[d];
      continue;
    }
    sizes.push_back(shape[d]);
    from.push_back(inStrides[d]);
    to.push_back(outStrides[d]);
  }
  // At least two dimensions, for copy2d.
  while (sizes.size() < 2) {
    sizes.insert(sizes.begin(), 1);
    from.insert(from.begin(), 0);
    to.insert(to.begin(), 0);
  }
  int64_t rank = static_cast<int64_t>(sizes.size());
  int64_t outerCount = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    outerCount *= sizes[d];
  std::vector<int64_t> index(rank, 0);
  int64_t inOffset = 0, outOffset = 0;
  for (int64_t o = 0; o < outerCount; ++o) {
    copy2d(in + inOffset, from[rank - 2], from[rank - 1], out + outOffset,
           to[rank - 2], to[rank - 1], sizes[rank - 2], sizes[rank - 1]);
    for (int64_t d = rank - 3; d >= 0; --d) {
      inOffset += from[d];
      outOffset += to[d];
      if (++index[d] < sizes[d])
        break;
      inOffset -= from[d] * sizes[d];
      outOffset -= to[d] * sizes[d];
      index[d] = 0;
    }
  }
}

/// Checks that every one of the `count` indices is inside [-size, size)
/// of `axis`.
bool checkIndices(const int64_t *indices, int64_t count, int64_t axis,
                  int64_t size) {
  for (int64_t i = 0; i < count; ++i) {
    int64_t id = indices[i];
    if (id < -size || id >= size)
      return fail("index " + std::to_string(id) + " (element " +
                  std::to_string(i) + " of the indices) is out of range for " +
                  "axis " + std::to_string(axis) + " of size " +
                  std::to_string(size));
  }
  return true;
}

/// The position an index checked by checkIndices names.
inline int64_t resolve(int64_t id, int64_t size) {
  return id < 0 ? id + size : id;
}

/// Zeros of `count` elements into which `add(sums)` adds (sums are double
/// for floats, wrapping int64 for integers), written to `out`.
template <typename T, typename Add>
void addIntoZeros(T *out, int64_t count, Add add) {
  if constexpr (std::is_same_v<T, float>) {
    std::vector<double> sums(count, 0.0);
    add(sums.data());
    std::copy(sums.begin(), sums.end(), out);
  } else {
    std::fill(out, out + count, T(0));
    add(out);
  }
}

/// `sum += value` with wrap-around for integers.
template <typename Acc, typename T> inline void addTo(Acc &sum, T value) {
  if constexpr (std::is_integral_v<Acc>)
    sum = static_cast<Acc>(static_cast<uint64_t>(sum) +
                           static_cast<uint64_t>(value));
  else
    sum += value;
}

/// Calls `body(i, offset)` for each element i (row-major) of `indices`,
/// of `indicesShape`, with the row-major offset, in a tensor of shape
/// `target`, of the element it names along `axis`. The indices must have
/// been checked.
template <typename Body>
void forEachElementOffset(const int64_t *indices, Dims indicesShape,
                          int64_t axis, Dims target, Body body) {
  int64_t rank = getRank(indicesShape);
  std::vector<int64_t> strides = getStrides(toVector(target));
  int64_t size = at(target, axis);
  int64_t count = product(indicesShape);
  std::vector<int64_t> index(rank, 0);
  // The offset of the coordinates other than `axis`.
  int64_t base = 0;
  for (int64_t i = 0; i < count; ++i) {
    body(i, base + resolve(indices[i], size) * strides[axis]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t stride = d == axis ? 0 : strides[d];
      base += stride;
      if (++index[d] < at(indicesShape, d))
        break;
      base -= stride * at(indicesShape, d);
      index[d] = 0;
    }
  }
}

} // namespace

template <typename T>
void dpc::cpu::broadcastTo(const T *input, Dims inputShape, T *out,
                           Dims outShape) {
  std::vector<int64_t> shape = toVector(outShape);
  stridedCopy(input, getBroadcastStrides(toVector(inputShape), shape), out,
              getStrides(shape), shape);
}

template <typename T>
void dpc::cpu::transpose(const T *input, Dims inputShape, Dims permutation,
                         T *out) {
  std::vector<int64_t> own = getStrides(toVector(inputShape));
  std::vector<int64_t> strides, shape;
  for (int64_t dim : permutation) {
    strides.push_back(own[dim]);
    shape.push_back(at(inputShape, dim));
  }
  stridedCopy(input, strides, out, getStrides(shape), shape);
}

template <typename T>
void dpc::cpu::concat(const T *const *inputs, const Dims *inputShapes,
                      int64_t numInputs, int64_t axis, T *out) {
  if (numInputs == 0)
    return;
  int64_t outer = product(inputShapes[0], 0, axis);
  int64_t inner = product(inputShapes[0], axis + 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < numInputs; ++i) {
      int64_t chunk = at(inputShapes[i], axis) * inner;
      const T *in = inputs[i] + o * chunk;
      out = std::copy(in, in + chunk, out);
    }
}

template <typename T>
void dpc::cpu::slice(const T *input, Dims inputShape, Dims start, Dims stride,
                     T *out, Dims outShape) {
  std::vector<int64_t> strides = getStrides(toVector(inputShape));
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    base += at(start, d) * strides[d];
    strides[d] *= at(stride, d);
  }
  std::vector<int64_t> shape = toVector(outShape);
  stridedCopy(input + base, strides, out, getStrides(shape), shape);
}

template <typename T>
void dpc::cpu::split(const T *input, Dims inputShape, int64_t axis, Dims sizes,
                     T *const *outs) {
  int64_t outer = product(inputShape, 0, axis);
  int64_t inner = product(inputShape, axis + 1);
  int64_t pieces = getRank(sizes);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < pieces; ++r) {
      int64_t chunk = at(sizes, r) * inner;
      std::copy(input, input + chunk, outs[r] + o * chunk);
      input += chunk;
    }
}

template <typename T>
bool dpc::cpu::gather(const T *input, Dims inputShape, const int64_t *indices,
                      Dims indicesShape, int64_t axis, T *out) {
  int64_t outer = product(inputShape, 0, axis);
  int64_t inner = product(inputShape, axis + 1);
  int64_t size = at(inputShape, axis), count = product(indicesShape);
  if (!checkIndices(indices, count, axis, size))
    return false;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < count; ++i) {
      const T *from = input + (o * size + resolve(indices[i], size)) * inner;
      out = std::copy(from, from + inner, out);
    }
  return true;
}

template <typename T>
bool dpc::cpu::scatterAdd(const T *updates, Dims updatesShape,
                          const int64_t *indices, Dims indicesShape,
                          int64_t axis, T *out, Dims outShape) {
  int64_t outer = product(outShape, 0, axis);
  int64_t inner = product(outShape, axis + 1);
  int64_t size = at(outShape, axis), count = product(indicesShape);
  if (!checkIndices(indices, count, axis, size))
    return false;
  // Updates run over (outer, index, inner), row-major.
  addIntoZeros(out, product(outShape), [&](auto *sums) {
    const T *from = updates;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < count; ++i, from += inner) {
        auto *to = sums + (o * size + resolve(indices[i], size)) * inner;
        for (int64_t j = 0; j < inner; ++j)
          addTo(to[j], from[j]);
      }
  });
  return true;
}

template <typename T>
bool dpc::cpu::gatherElements(const T *input, Dims inputShape,
                              const int64_t *indices, Dims indicesShape,
                              int64_t axis, T *out) {
  if (!checkIndices(indices, product(indicesShape), axis, at(inputShape, axis)))
    return false;
  forEachElementOffset(
      indices, indicesShape, axis, inputShape,
      [&](int64_t i, int64_t offset) { out[i] = input[offset]; });
  return true;
}

template <typename T>
bool dpc::cpu::scatterAddElements(const T *updates, const int64_t *indices,
                                  Dims indicesShape, int64_t axis, T *out,
                                  Dims outShape) {
  if (!checkIndices(indices, product(indicesShape), axis, at(outShape, axis)))
    return false;
  addIntoZeros(out, product(outShape), [&](auto *sums) {
    forEachElementOffset(
        indices, indicesShape, axis, outShape,
        [&](int64_t i, int64_t offset) { addTo(sums[offset], updates[i]); });
  });
  return true;
}

template <typename T>
void dpc::cpu::pad(const T *input, Dims inputShape, Dims low, Dims interior,
                   double value, T *out, Dims outShape) {
  std::fill(out, out + product(outShape), static_cast<T>(value));
  // Element i of the input goes to low + i * (interior + 1) along each
  // dimension: a strided write.
  std::vector<int64_t> strides = getStrides(toVector(outShape));
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    base += at(low, d) * strides[d];
    strides[d] *= at(interior, d) + 1;
  }
  std::vector<int64_t> shape = toVector(inputShape);
  stridedCopy(input, getStrides(shape), out + base, strides, shape);
}

#define DPC_INSTANTIATE(T)                                                     \
  template void dpc::cpu::broadcastTo<T>(const T *, Dims, T *, Dims);          \
  template void dpc::cpu::transpose<T>(const T *, Dims, Dims, T *);            \
  template void dpc::cpu::concat<T>(const T *const *, const Dims *, int64_t,   \
                                    int64_t, T *);                             \
  template void dpc::cpu::slice<T>(const T *, Dims, Dims, Dims, T *, Dims);    \
  template void dpc::cpu::split<T>(const T *, Dims, int64_t, Dims,             \
                                   T *const *);                                \
  template bool dpc::cpu::gather<T>(const T *, Dims, const int64_t *, Dims,    \
                                    int64_t, T *);                             \
  template bool dpc::cpu::scatterAdd<T>(const T *, Dims, const int64_t *,      \
                                        Dims, int64_t, T *, Dims);             \
  template bool dpc::cpu::gatherElements<T>(const T *, Dims, const int64_t *,  \
                                            Dims, int64_t, T *);               \
  template bool dpc::cpu::scatterAddElements<T>(const T *, const int64_t *,    \
                                                Dims, int64_t, T *, Dims);     \
  template void dpc::cpu::pad<T>(const T *, Dims, Dims, Dims, double, T *,     \
                                 Dims);
DPC_INSTANTIATE(float)
DPC_INSTANTIATE(double)
DPC_INSTANTIATE(int64_t)
#undef DPC_INSTANTIATE
