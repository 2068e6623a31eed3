//===- DataMovement.h - Copies, gathers and scatters on the GPU -*- C++ -*-===//
//
// A thread per output element, which computes where its value comes from.
// Gathers record an index out of range as a fault (Context.h) and write 0
// there; scatters add in a fixed order (a thread per output row walks the
// indices in order, float sums in double), so that the sums are the same
// on every run and equal the interpreter's.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_DATAMOVEMENT_H
#define DPC_RUNTIME_CUDA_DATAMOVEMENT_H

#include "dpc/Runtime/Cuda/Reduction.h"

namespace dpc::cuda {

namespace detail {
/// `index` resolved against `size` (negative counts from the end), or -1
/// when outside [-size, size).
DPC_HOST_DEVICE inline int64_t resolveIndex(int64_t index, int64_t size) {
  if (index < -size || index >= size)
    return -1;
  return index < 0 ? index + size : index;
}
} // namespace detail

template <typename T>
void broadcastTo(Context *context, const T *input, Shape inShape, T *out,
                 Shape outShape) {
  int32_t offset = outShape.rank - inShape.rank;
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t o) {
        int64_t from = 0, rest = o, stride = 1;
        for (int32_t d = outShape.rank - 1; d >= offset; --d) {
          int64_t size = inShape[d - offset];
          if (size != 1)
            from += (rest % outShape[d]) * stride;
          stride *= size;
          rest /= outShape[d];
        }
        out[o] = input[from];
      });
}

template <typename T>
void transpose(Context *context, const T *input, Shape inShape,
               Shape permutation, T *out) {
  Shape strides; // the input stride of each output dimension
  Shape outShape;
  for (int32_t d = 0; d < permutation.rank; ++d) {
    int32_t source = int32_t(permutation[d]);
    strides.d[strides.rank++] = inShape.stride(source);
    outShape.d[outShape.rank++] = inShape[source];
  }
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t o) {
        int64_t from = 0, rest = o;
        for (int32_t d = outShape.rank - 1; d >= 0; --d) {
          from += (rest % outShape[d]) * strides[d];
          rest /= outShape[d];
        }
        out[o] = input[from];
      });
}

/// Element o of `outShape` read at start + o * stride of `input`.
template <typename T>
void slice(Context *context, const T *input, Shape inShape, Shape start,
           Shape stride, T *out, Shape outShape) {
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t o) {
        int64_t from = 0, rest = o;
        for (int32_t d = outShape.rank - 1; d >= 0; --d) {
          from +=
              (start[d] + (rest % outShape[d]) * stride[d]) * inShape.stride(d);
          rest /= outShape[d];
        }
        out[o] = input[from];
      });
}

/// One input of a concatenation, written into its place along `axis`.
template <typename T>
void concatPart(Context *context, const T *input, Shape inShape, int64_t axis,
                int64_t position, T *out, int64_t outAxisSize) {
  int64_t inner = inShape.product(int32_t(axis) + 1);
  int64_t size = inShape[int32_t(axis)];
  forEach(
      context, inShape.product(), DPC_KERNEL(int64_t i) {
        int64_t o = i / (size * inner), rest = i % (size * inner);
        out[(o * outAxisSize + position) * inner + rest] = input[i];
      });
}

/// Consecutive pieces of `split` along `axis`: the one at `position`.
template <typename T>
void splitPart(Context *context, const T *input, Shape inShape, int64_t axis,
               int64_t position, T *out, int64_t size) {
  int64_t inner = inShape.product(int32_t(axis) + 1);
  int64_t inAxisSize = inShape[int32_t(axis)];
  int64_t count = inShape.product(0, int32_t(axis)) * size * inner;
  forEach(
      context, count, DPC_KERNEL(int64_t i) {
        int64_t o = i / (size * inner), rest = i % (size * inner);
        out[i] = input[(o * inAxisSize + position) * inner + rest];
      });
}

/// `input` surrounded by `low` and interleaved with `interior` elements
/// of `value` (low may be negative: a crop).
template <typename T>
void pad(Context *context, const T *input, Shape inShape, Shape low,
         Shape interior, double value, T *out, Shape outShape) {
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t o) {
        int64_t from = 0, rest = o;
        bool inside = true;
        for (int32_t d = outShape.rank - 1; d >= 0; --d) {
          int64_t position = rest % outShape[d] - low[d];
          rest /= outShape[d];
          int64_t step = interior[d] + 1;
          if (position < 0 || position % step != 0 ||
              position / step >= inShape[d])
            inside = false;
          else
            from += (position / step) * inShape.stride(d);
        }
        out[o] = inside ? input[from] : T(value);
      });
}

/// out[o, i, n] = input[o, indices[i], n] along `axis`.
template <typename T>
void gather(Context *context, int32_t op, const T *input, Shape inShape,
            const int64_t *indices, Shape indicesShape, int64_t axis, T *out) {
  int64_t count = indicesShape.product();
  int64_t inner = inShape.product(int32_t(axis) + 1);
  int64_t size = inShape[int32_t(axis)];
  int64_t total = inShape.product(0, int32_t(axis)) * count * inner;
  FaultRecord *faults = context->faults;
  forEach(
      context, total, DPC_KERNEL(int64_t e) {
        int64_t n = e % inner, i = (e / inner) % count, o = e / (inner * count);
        int64_t index = detail::resolveIndex(indices[i], size);
        if (index < 0) {
          raise(faults, op, Fault::IndexOutOfRange, indices[i], size);
          out[e] = T(0);
          return;
        }
        out[e] = input[(o * size + index) * inner + n];
      });
}

/// The inverse of gather: slices of `updates` added into zeros. A thread
/// per (outer, inner) column walks the indices in order, summing in the
/// accumulator type, so the sums are the same on every run.
template <typename T>
void scatterAdd(Context *context, int32_t op, const T *updates,
                Shape updatesShape, const int64_t *indices, Shape indicesShape,
                int64_t axis, T *out, Shape outShape) {
  (void)updatesShape; // [outer, indices..., inner], as outShape implies
  int64_t count = indicesShape.product();
  using A = detail::Accumulator<T>;
  int64_t inner = outShape.product(int32_t(axis) + 1);
  int64_t size = outShape[int32_t(axis)], total = outShape.product();
  FaultRecord *faults = context->faults;
  // The sums, in scratch when they are wider than the output.
  A *sums = reinterpret_cast<A *>(out);
  if constexpr (!std::is_same_v<A, T>)
    sums = reinterpret_cast<A *>(getScratch(context, total));
  forEach(
      context, total, DPC_KERNEL(int64_t e) { sums[e] = A(0); });
  forEach(
      context, outShape.product(0, int32_t(axis)) * inner,
      DPC_KERNEL(int64_t column) {
        int64_t o = column / inner, n = column % inner;
        for (int64_t i = 0; i < count; ++i) {
          int64_t index = detail::resolveIndex(indices[i], size);
          if (index < 0) {
            raise(faults, op, Fault::IndexOutOfRange, indices[i], size);
            continue;
          }
          A &sum = sums[(o * size + index) * inner + n];
          sum = detail::combine(ReduceKind::Sum, sum,
                                A(updates[(o * count + i) * inner + n]));
        }
      });
  if constexpr (!std::is_same_v<A, T>)
    forEach(
        context, total, DPC_KERNEL(int64_t e) { out[e] = T(sums[e]); });
}

/// out[e] = input at e with its `axis` coordinate replaced by indices[e].
template <typename T>
void gatherElements(Context *context, int32_t op, const T *input, Shape inShape,
                    const int64_t *indices, Shape indicesShape, int64_t axis,
                    T *out) {
  FaultRecord *faults = context->faults;
  forEach(
      context, indicesShape.product(), DPC_KERNEL(int64_t e) {
        int64_t from = 0, rest = e;
        for (int32_t d = indicesShape.rank - 1; d >= 0; --d) {
          int64_t coordinate = rest % indicesShape[d];
          rest /= indicesShape[d];
          if (d == int32_t(axis)) {
            coordinate = detail::resolveIndex(indices[e], inShape[d]);
            if (coordinate < 0) {
              raise(faults, op, Fault::IndexOutOfRange, indices[e], inShape[d]);
              coordinate = 0;
            }
          }
          from += coordinate * inShape.stride(d);
        }
        out[e] = input[from];
      });
}

/// The inverse of gatherElements, into zeros: a thread per output element
/// walks the indices along `axis` at its other coordinates, in order.
template <typename T>
void scatterAddElements(Context *context, int32_t op, const T *updates,
                        const int64_t *indices, Shape indicesShape,
                        int64_t axis, T *out, Shape outShape) {
  FaultRecord *faults = context->faults;
  int32_t a = int32_t(axis);
  forEach(
      context, outShape.product(), DPC_KERNEL(int64_t e) {
        // Out of range for the indices' own shape: nothing lands here.
        int64_t rest = e, base = 0, row = 0;
        bool covered = true;
        for (int32_t d = outShape.rank - 1; d >= 0; --d) {
          int64_t coordinate = rest % outShape[d];
          rest /= outShape[d];
          if (d == a) {
            row = coordinate;
            continue;
          }
          if (coordinate >= indicesShape[d])
            covered = false;
          base += coordinate * indicesShape.stride(d);
        }
        detail::Accumulator<T> sum = 0;
        for (int64_t j = 0; covered && j < indicesShape[a]; ++j) {
          int64_t at = base + j * indicesShape.stride(a);
          int64_t index = detail::resolveIndex(indices[at], outShape[a]);
          if (index < 0)
            raise(faults, op, Fault::IndexOutOfRange, indices[at], outShape[a]);
          else if (index == row)
            sum = detail::combine(ReduceKind::Sum, sum,
                                  detail::Accumulator<T>(updates[at]));
        }
        out[e] = T(sum);
      });
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_DATAMOVEMENT_H
