//===- Kernels.h - The interpreter's kernels --------------------*- C++ -*-===//
//
// One function per op family, on compute tensors. Kernels take plain
// parameters rather than ops, so the dispatch table (Executor.cpp) is the
// only code that knows op classes; the few kernels that can fail on their
// data take the op to report the error on. Result shapes come from the
// op's (verified) result type.
//
// Float kernels accumulate sums (matmul and conv2d included) in double
// whatever the compute type, and round once: the interpreter is the oracle,
// so its results are within about an ulp of exact.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_INTERPRETER_KERNELS_H
#define DPC_LIB_INTERPRETER_KERNELS_H

#include "Tensor.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include <array>

namespace mlir::dpc::interpreter {

//===----------------------------------------------------------------------===//
// Constants and casts (Cast.cpp, Constant.cpp)
//===----------------------------------------------------------------------===//

/// The elements of `value`, in the compute type of its element type.
FailureOr<Tensor> materializeConstant(Operation *op, ElementsAttr value,
                                      Precision precision);

/// `input` converted to `resultType` (an element type): floats round to
/// nearest even, floats to integers truncate toward zero (a value out of
/// the integer's range is an error), anything to i1 tests for non-zero.
/// Under Precision::F64, casts between float types are exact.
FailureOr<Tensor> castElements(Operation *op, const Tensor &input,
                               Type resultType, Precision precision);

//===----------------------------------------------------------------------===//
// Contractions (Contraction.cpp)
//===----------------------------------------------------------------------===//

/// Batched matrix product, batch dimensions broadcast.
Tensor matmul(const Tensor &lhs, const Tensor &rhs,
              ArrayRef<int64_t> resultShape);

/// The attributes of a 2-D convolution.
struct Conv2DParams {
  std::array<int64_t, 2> strides;
  /// [top, left, bottom, right].
  std::array<int64_t, 4> padding;
  std::array<int64_t, 2> dilations;
  int64_t groups;
};

/// NCHW input, OIHW filter, optional bias (F).
Tensor conv2d(const Tensor &input, const Tensor &filter, const Tensor *bias,
              const Conv2DParams &params, ArrayRef<int64_t> resultShape);

/// NCHW input, (C, F / groups, KH, KW) filter, optional bias (F): every
/// input element scatters into the output. output_padding is in the result
/// shape.
Tensor convTranspose2d(const Tensor &input, const Tensor &filter,
                       const Tensor *bias, const Conv2DParams &params,
                       ArrayRef<int64_t> resultShape);

/// The gradient of conv2d with respect to its filter, whose shape is
/// `resultShape`, from the input and the gradient of the output.
Tensor conv2dFilterGrad(const Tensor &input, const Tensor &outGrad,
                        const Conv2DParams &params,
                        ArrayRef<int64_t> resultShape);

//===----------------------------------------------------------------------===//
// Pooling (Pooling.cpp)
//===----------------------------------------------------------------------===//

/// The attributes of a 2-D pooling; ceil_mode is in the result shape.
struct Pool2DParams {
  std::array<int64_t, 2> kernel;
  std::array<int64_t, 2> strides;
  /// [top, left, bottom, right].
  std::array<int64_t, 4> padding;
  std::array<int64_t, 2> dilations;
  bool countIncludePad;
};

Tensor maxPool2d(const Tensor &input, const Pool2DParams &params,
                 ArrayRef<int64_t> resultShape);
Tensor avgPool2d(const Tensor &input, const Pool2DParams &params,
                 ArrayRef<int64_t> resultShape);

/// The gradient of max_pool2d: each element of `outGrad` goes to the first
/// maximum of its window in `input`.
Tensor maxPool2dGrad(const Tensor &input, const Tensor &outGrad,
                     const Pool2DParams &params);

/// The gradient of avg_pool2d: each element of `outGrad`, divided by its
/// window's count, goes to every input position of the window.
Tensor avgPool2dGrad(const Tensor &outGrad, const Pool2DParams &params,
                     ArrayRef<int64_t> resultShape);

//===----------------------------------------------------------------------===//
// Resampling (Resize.cpp)
//===----------------------------------------------------------------------===//

/// The attributes of a resize, as the op spells them.
struct ResizeParams {
  ArrayRef<double> scales;
  StringRef mode;
  StringRef coordinateMode;
  StringRef nearestMode;
};

Tensor resize(const Tensor &input, const ResizeParams &params,
              ArrayRef<int64_t> resultShape);
/// The gradient of resize: each element of `outGrad` goes back to the
/// input elements its output element read, by the same weights.
Tensor resizeGrad(const Tensor &outGrad, const ResizeParams &params,
                  ArrayRef<int64_t> resultShape);

//===----------------------------------------------------------------------===//
// Reductions and softmax (Reduction.cpp)
//===----------------------------------------------------------------------===//

enum class ReduceKind { Sum, Mean, Max, Min };

/// Reduces `dims` of `input` (the result shape says whether they are kept).
Tensor reduce(const Tensor &input, ArrayRef<int64_t> dims, ReduceKind kind,
              ArrayRef<int64_t> resultShape);

/// Softmax (or log-softmax) along `axis`, the maximum subtracted first.
Tensor softmax(const Tensor &input, int64_t axis, bool logarithm);
/// The index of the largest (`largest`) or smallest element of each slice
/// along `axis`: the first, or the last under `last`; an i64 tensor.
/// The `k` elements of largest magnitude of the vector `input` and their
/// positions, by decreasing magnitude, ties by position (NaN largest).
std::pair<Tensor, Tensor> topK(const Tensor &input, int64_t k);

Tensor argReduce(const Tensor &input, int64_t axis, bool largest, bool last,
                 ArrayRef<int64_t> resultShape);

//===----------------------------------------------------------------------===//
// Normalizations (Normalization.cpp)
//===----------------------------------------------------------------------===//

/// Normalizes over `[axis, rank)` with the biased variance, then applies
/// `scale` and `bias` (optional).
Tensor layerNorm(const Tensor &input, const Tensor &scale, const Tensor *bias,
                 int64_t axis, double epsilon);

/// The five results of batch_norm: the output, the new running mean and
/// variance, and the mean and variance it normalized with. Fails in training on
/// channels with a single value (the unbiased variance is undefined), as
/// PyTorch does.
FailureOr<SmallVector<Tensor>>
batchNorm(Operation *op, const Tensor &input, const Tensor &scale,
          const Tensor &bias, const Tensor &runningMean,
          const Tensor &runningVar, double epsilon, double momentum,
          bool training);

//===----------------------------------------------------------------------===//
// Data movement (DataMovement.cpp)
//===----------------------------------------------------------------------===//

Tensor broadcastTo(const Tensor &input, ArrayRef<int64_t> resultShape);
Tensor transpose(const Tensor &input, ArrayRef<int64_t> permutation);
Tensor concat(ArrayRef<const Tensor *> inputs, int64_t axis,
              ArrayRef<int64_t> resultShape);
Tensor slice(const Tensor &input, ArrayRef<int64_t> start,
             ArrayRef<int64_t> stride, ArrayRef<int64_t> resultShape);
/// Consecutive pieces of sizes `sizes` along `axis`.
SmallVector<Tensor> split(const Tensor &input, int64_t axis,
                          ArrayRef<int64_t> sizes);
/// Element-wise gather along `axis` (ONNX GatherElements) and its
/// gradient; fail on an index outside `[-size, size)` of `axis`.
FailureOr<Tensor> gatherElements(Operation *op, const Tensor &input,
                                 const Tensor &indices, int64_t axis);
FailureOr<Tensor> scatterAddElements(Operation *op, const Tensor &updates,
                                     const Tensor &indices, int64_t axis,
                                     ArrayRef<int64_t> resultShape);
/// Fails on an index outside `[-size, size)` of `axis`.
FailureOr<Tensor> gather(Operation *op, const Tensor &input,
                         const Tensor &indices, int64_t axis,
                         ArrayRef<int64_t> resultShape);
/// The inverse of gather: adds the slices of `updates` into zeros of
/// `resultShape`. Fails on an index outside `[-size, size)` of `axis`.
FailureOr<Tensor> scatterAdd(Operation *op, const Tensor &updates,
                             const Tensor &indices, int64_t axis,
                             ArrayRef<int64_t> resultShape);
/// `input` surrounded by `low` and `high` and interleaved with `interior`
/// elements of `value`.
Tensor pad(const Tensor &input, ArrayRef<int64_t> low,
           ArrayRef<int64_t> interior, double value,
           ArrayRef<int64_t> resultShape);

//===----------------------------------------------------------------------===//
// Dropout (Dropout.cpp)
//===----------------------------------------------------------------------===//

/// `input` with the elements dpc::dropoutKeeps drops zeroed and the others
/// scaled by 1 / (1 - ratio); element i has global index offset + i.
Tensor dropout(const Tensor &input, int64_t seed, int64_t offset, double ratio,
               int64_t stream);

//===----------------------------------------------------------------------===//
// Losses (Loss.cpp)
//===----------------------------------------------------------------------===//

/// Softmax cross-entropy (`fromLogits`) or negative log-likelihood of
/// `input` [N, C, d...] against `labels` [N, d...]. Fails on a label that
/// is neither `ignoreIndex` nor a class.
FailureOr<Tensor> classificationLoss(Operation *op, const Tensor &input,
                                     const Tensor &labels,
                                     LossReduction reduction,
                                     int64_t ignoreIndex, bool fromLogits);

//===----------------------------------------------------------------------===//
// Recurrent layers (Recurrent.cpp)
//===----------------------------------------------------------------------===//

/// One direction of an LSTM: output, final h, final c. Fails on a sequence
/// length outside [0, T].
FailureOr<SmallVector<Tensor>> lstm(Operation *op, const Tensor &x,
                                    const Tensor &w, const Tensor &r,
                                    const Tensor &bias, const Tensor &h0,
                                    const Tensor &c0, const Tensor *lengths,
                                    bool reverse);
/// The gradients of an LSTM's x, w, r, bias, h0 and c0.
FailureOr<SmallVector<Tensor>>
lstmGrad(Operation *op, const Tensor &x, const Tensor &w, const Tensor &r,
         const Tensor &bias, const Tensor &h0, const Tensor &c0,
         const Tensor &gradOutput, const Tensor &gradH, const Tensor &gradC,
         const Tensor *lengths, bool reverse);
/// One direction of a GRU: output, final h.
FailureOr<SmallVector<Tensor>> gru(Operation *op, const Tensor &x,
                                   const Tensor &w, const Tensor &r,
                                   const Tensor &bias, const Tensor &h0,
                                   const Tensor *lengths, bool reverse,
                                   bool linearBeforeReset);
/// The gradients of a GRU's x, w, r, bias and h0.
FailureOr<SmallVector<Tensor>>
gruGrad(Operation *op, const Tensor &x, const Tensor &w, const Tensor &r,
        const Tensor &bias, const Tensor &h0, const Tensor &gradOutput,
        const Tensor &gradH, const Tensor *lengths, bool reverse,
        bool linearBeforeReset);

} // namespace mlir::dpc::interpreter

#endif // DPC_LIB_INTERPRETER_KERNELS_H
