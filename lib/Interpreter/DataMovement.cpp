//===- DataMovement.cpp - Reshaping, copying and gathering kernels --------===//
//
// broadcast_to, transpose and slice are one strided read each (the strides
// of the input seen through the result's indices); concat and split copy
// contiguous chunks; gather copies one inner slice per index, after
// checking every index.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"
#include "Kernels.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

/// The result of reading `input` at `base + sum(index[d] * strides[d])`
/// for every index of `resultShape`.
static Tensor stridedRead(const Tensor &input, int64_t base,
                          SmallVector<int64_t> strides,
                          ArrayRef<int64_t> resultShape) {
  Tensor result(input.getKind(), resultShape);
  std::array<SmallVector<int64_t>, 1> allStrides = {std::move(strides)};
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    MutableArrayRef<T> out = result.getData<T>();
    forEachBroadcast<1>(resultShape, allStrides, [&](int64_t i, auto offsets) {
      out[i] = in[base + offsets[0]];
    });
  });
  return result;
}

Tensor interpreter::broadcastTo(const Tensor &input,
                                ArrayRef<int64_t> resultShape) {
  return stridedRead(input, 0,
                     getBroadcastStrides(input.getShape(), resultShape),
                     resultShape);
}

Tensor interpreter::transpose(const Tensor &input,
                              ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> own = getStrides(input.getShape());
  SmallVector<int64_t> strides, shape;
  for (int64_t dim : permutation) {
    strides.push_back(own[dim]);
    shape.push_back(input.getShape()[dim]);
  }
  return stridedRead(input, 0, strides, shape);
}

Tensor interpreter::slice(const Tensor &input, ArrayRef<int64_t> start,
                          ArrayRef<int64_t> stride,
                          ArrayRef<int64_t> resultShape) {
  SmallVector<int64_t> strides = getStrides(input.getShape());
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    base += start[d] * strides[d];
    strides[d] *= stride[d];
  }
  return stridedRead(input, base, strides, resultShape);
}

/// The number of elements before `axis` and from `axis` on (exclusive).
static std::pair<int64_t, int64_t> splitAt(ArrayRef<int64_t> shape,
                                           int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < axis ? outer : inner) *= d == axis ? 1 : shape[d];
  return {outer, inner};
}

Tensor interpreter::concat(ArrayRef<const Tensor *> inputs, int64_t axis,
                           ArrayRef<int64_t> resultShape) {
  Tensor result(inputs.front()->getKind(), resultShape);
  auto [outer, inner] = splitAt(resultShape, axis);
  dispatchKind(result.getKind(), [&](auto zero) {
    using T = decltype(zero);
    T *out = result.getData<T>().data();
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor *input : inputs) {
        int64_t chunk = input->getShape()[axis] * inner;
        const T *in = input->getData<T>().data() + o * chunk;
        out = std::copy(in, in + chunk, out);
      }
  });
  return result;
}

SmallVector<Tensor> interpreter::split(const Tensor &input, int64_t axis,
                                       ArrayRef<int64_t> sizes) {
  auto [outer, inner] = splitAt(input.getShape(), axis);
  SmallVector<Tensor> results;
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(input.getShape().begin(),
                               input.getShape().end());
    shape[axis] = size;
    results.emplace_back(input.getKind(), shape);
  }
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *in = input.getData<T>().data();
    for (int64_t o = 0; o < outer; ++o)
      for (size_t r = 0; r < sizes.size(); ++r) {
        int64_t chunk = sizes[r] * inner;
        std::copy(in, in + chunk, results[r].getData<T>().data() + o * chunk);
        in += chunk;
      }
  });
  return results;
}

/// The positions along `axis` (of size `size`) that `indices` name, with
/// negative indices counted from the end; fails on one out of range.
static FailureOr<SmallVector<int64_t>> resolveIndices(Operation *op,
                                                      const Tensor &indices,
                                                      int64_t axis,
                                                      int64_t size) {
  SmallVector<int64_t> positions;
  for (auto [i, id] : llvm::enumerate(indices.getData<int64_t>())) {
    int64_t position = id < 0 ? id + size : id;
    if (position < 0 || position >= size)
      return op->emitError("index ")
             << id << " (element " << i << " of the indices) is out of range "
             << "for axis " << axis << " of size " << size;
    positions.push_back(position);
  }
  return positions;
}

/// Zeros of `resultShape` with element i of `updates` (row-major) added at
/// offset `offsets[i]`; float sums accumulate in double, integers wrap.
static Tensor addAtOffsets(const Tensor &updates, ArrayRef<int64_t> offsets,
                           ArrayRef<int64_t> resultShape) {
  Tensor result(updates.getKind(), resultShape);
  dispatchKind(updates.getKind(), [&](auto zero) {
    using T = decltype(zero);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    std::vector<Acc> sums(result.getNumElements());
    ArrayRef<T> in = updates.getData<T>();
    for (auto [i, offset] : llvm::enumerate(offsets))
      sums[offset] = Add()(sums[offset], static_cast<Acc>(in[i]));
    std::copy(sums.begin(), sums.end(), result.getData<T>().begin());
  });
  return result;
}

/// For each position of `indices` (row-major), the row-major offset in a
/// tensor of shape `target` of the element it names along `axis`.
static FailureOr<SmallVector<int64_t>>
getElementOffsets(Operation *op, const Tensor &indices, int64_t axis,
                  ArrayRef<int64_t> target) {
  FailureOr<SmallVector<int64_t>> positions =
      resolveIndices(op, indices, axis, target[axis]);
  if (failed(positions))
    return failure();
  ArrayRef<int64_t> shape = indices.getShape();
  SmallVector<int64_t> strides = getStrides(target);
  SmallVector<int64_t> offsets;
  SmallVector<int64_t> coordinates(shape.size(), 0);
  for (int64_t position : *positions) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      offset += (int64_t(d) == axis ? position : coordinates[d]) * strides[d];
    offsets.push_back(offset);
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++coordinates[d] < shape[d])
        break;
      coordinates[d] = 0;
    }
  }
  return offsets;
}

FailureOr<Tensor> interpreter::gatherElements(Operation *op,
                                              const Tensor &input,
                                              const Tensor &indices,
                                              int64_t axis) {
  FailureOr<SmallVector<int64_t>> offsets =
      getElementOffsets(op, indices, axis, input.getShape());
  if (failed(offsets))
    return failure();
  Tensor result(input.getKind(), indices.getShape());
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    MutableArrayRef<T> out = result.getData<T>();
    for (auto [i, offset] : llvm::enumerate(*offsets))
      out[i] = in[offset];
  });
  return result;
}

FailureOr<Tensor>
interpreter::scatterAddElements(Operation *op, const Tensor &updates,
                                const Tensor &indices, int64_t axis,
                                ArrayRef<int64_t> resultShape) {
  FailureOr<SmallVector<int64_t>> offsets =
      getElementOffsets(op, indices, axis, resultShape);
  if (failed(offsets))
    return failure();
  return addAtOffsets(updates, *offsets, resultShape);
}

FailureOr<Tensor> interpreter::gather(Operation *op, const Tensor &input,
                                      const Tensor &indices, int64_t axis,
                                      ArrayRef<int64_t> resultShape) {
  auto [outer, inner] = splitAt(input.getShape(), axis);
  int64_t size = input.getShape()[axis];
  FailureOr<SmallVector<int64_t>> positions =
      resolveIndices(op, indices, axis, size);
  if (failed(positions))
    return failure();
  Tensor result(input.getKind(), resultShape);
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    const T *in = input.getData<T>().data();
    T *out = result.getData<T>().data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t position : *positions) {
        const T *from = in + (o * size + position) * inner;
        out = std::copy(from, from + inner, out);
      }
  });
  return result;
}

FailureOr<Tensor> interpreter::scatterAdd(Operation *op, const Tensor &updates,
                                          const Tensor &indices, int64_t axis,
                                          ArrayRef<int64_t> resultShape) {
  auto [outer, inner] = splitAt(resultShape, axis);
  int64_t size = resultShape[axis];
  FailureOr<SmallVector<int64_t>> positions =
      resolveIndices(op, indices, axis, size);
  if (failed(positions))
    return failure();
  // Updates run over (outer, index, inner), row-major.
  SmallVector<int64_t> offsets;
  offsets.reserve(updates.getNumElements());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t position : *positions)
      for (int64_t i = 0; i < inner; ++i)
        offsets.push_back((o * size + position) * inner + i);
  return addAtOffsets(updates, offsets, resultShape);
}

Tensor interpreter::pad(const Tensor &input, ArrayRef<int64_t> low,
                        ArrayRef<int64_t> interior, double value,
                        ArrayRef<int64_t> resultShape) {
  Tensor result(input.getKind(), resultShape);
  // Element i of input goes to low + i * (interior + 1) along each
  // dimension: a strided write.
  SmallVector<int64_t> strides = getStrides(resultShape);
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    base += low[d] * strides[d];
    strides[d] *= interior[d] + 1;
  }
  std::array<SmallVector<int64_t>, 1> allStrides = {std::move(strides)};
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    MutableArrayRef<T> out = result.getData<T>();
    std::fill(out.begin(), out.end(), static_cast<T>(value));
    ArrayRef<T> in = input.getData<T>();
    forEachBroadcast<1>(
        input.getShape(), allStrides,
        [&](int64_t i, auto offsets) { out[base + offsets[0]] = in[i]; });
  });
  return result;
}
