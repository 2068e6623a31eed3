//===- CpuKernels.h - The kernels compiled CPU programs call ----*- C++ -*-===//
//
// The ops a compiled CPU program does not generate as loops (elementwise
// chains are generated and fused by the emitter, lib/Target/CPU): GEMM
// through OpenBLAS, convolutions, pooling, reductions, normalizations, data
// movement, dropout and losses. Every kernel computes what the reference
// interpreter's kernel of the same name computes (lib/Interpreter); the
// compiled programs are tested against it.
//
// Tensors are dense and row-major; shapes are passed as `Dims`, which the
// generated code writes as braced lists. Element types: `float` and
// `double` for floats, `int64_t` for every integer type (i1 included).
// Kernels write every element of their outputs, which never alias inputs.
// A kernel that can fail on its data returns false and leaves the reason
// in getKernelError().
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CPUKERNELS_H
#define DPC_RUNTIME_CPUKERNELS_H

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace dpc::cpu {

using Dims = std::initializer_list<int64_t>;

/// Why the last kernel that returned false on this thread failed.
const std::string &getKernelError();

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Batched matrix product [..., m, k] x [..., k, n] -> [..., m, n]; the
/// batch dimensions broadcast (NumPy rules) to those of `outShape`.
template <typename T>
void matmul(const T *lhs, Dims lhsShape, const T *rhs, Dims rhsShape, T *out,
            Dims outShape);
/// The same with either operand stored transposed in its last two
/// dimensions (`lhsShape` and `rhsShape` are the stored shapes): a
/// transpose feeding a product costs nothing.
template <typename T>
void matmul(const T *lhs, Dims lhsShape, bool transLhs, const T *rhs,
            Dims rhsShape, bool transRhs, T *out, Dims outShape);

struct Conv2DParams {
  std::array<int64_t, 2> strides;
  /// [top, left, bottom, right].
  std::array<int64_t, 4> padding;
  std::array<int64_t, 2> dilations;
  int64_t groups;
};

/// NCHW input, OIHW filter, optional bias (F, or null).
template <typename T>
void conv2d(const T *input, Dims inputShape, const T *filter, Dims filterShape,
            const T *bias, const Conv2DParams &params, T *out, Dims outShape);

/// NCHW input, (C, F / groups, KH, KW) filter, optional bias: the adjoint
/// of conv2d (output_padding is in `outShape`).
template <typename T>
void convTranspose2d(const T *input, Dims inputShape, const T *filter,
                     Dims filterShape, const T *bias,
                     const Conv2DParams &params, T *out, Dims outShape);

/// The gradient of conv2d with respect to its filter (of `outShape`).
template <typename T>
void conv2dFilterGrad(const T *input, Dims inputShape, const T *outGrad,
                      Dims outGradShape, const Conv2DParams &params, T *out,
                      Dims outShape);

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct Pool2DParams {
  std::array<int64_t, 2> kernel;
  std::array<int64_t, 2> strides;
  /// [top, left, bottom, right].
  std::array<int64_t, 4> padding;
  std::array<int64_t, 2> dilations;
  bool countIncludePad;
};

template <typename T>
void maxPool2d(const T *input, Dims inputShape, const Pool2DParams &params,
               T *out, Dims outShape);
template <typename T>
void avgPool2d(const T *input, Dims inputShape, const Pool2DParams &params,
               T *out, Dims outShape);
/// Each element of `outGrad` goes to the first maximum of its window.
template <typename T>
void maxPool2dGrad(const T *input, Dims inputShape, const T *outGrad,
                   Dims outGradShape, const Pool2DParams &params, T *out);
template <typename T>
void avgPool2dGrad(const T *outGrad, Dims outGradShape,
                   const Pool2DParams &params, T *out, Dims outShape);

//===----------------------------------------------------------------------===//
// Reductions, softmax, normalizations
//===----------------------------------------------------------------------===//

enum class ReduceKind { Sum, Mean, Max, Min };

/// Reduces `dims` of `input`; the output has the remaining elements in
/// order (whether reduced dimensions are kept does not change the layout).
template <typename T>
void reduce(const T *input, Dims inputShape, Dims dims, ReduceKind kind,
            T *out);

/// Softmax, or log-softmax, along `axis`, the maximum subtracted first.
template <typename T>
void softmax(const T *input, Dims shape, int64_t axis, bool logarithm, T *out);

/// Normalizes over [axis, rank) with the biased variance, then scale and
/// (optional) bias.
template <typename T>
void layerNorm(const T *input, Dims shape, const T *scale, const T *bias,
               int64_t axis, double epsilon, T *out);

/// batch_norm over NC... input: the output, the new running mean and
/// variance, and the mean and variance it normalized with. Fails in
/// training on a channel with a single value.
template <typename T>
bool batchNorm(const T *input, Dims shape, const T *scale, const T *bias,
               const T *runningMean, const T *runningVar, double epsilon,
               double momentum, bool training, T *out, T *newMean, T *newVar,
               T *batchMean, T *batchVar);

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

/// The sizes of one direction of a recurrent layer: `x` is [steps, batch,
/// inputSize], the states [batch, hidden].
struct RecurrentSizes {
  int64_t steps, batch, inputSize, hidden;
};

/// dpc.lstm: `w` [4H, I], `r` [4H, H], `bias` [8H] (gates i, o, f, c);
/// `lengths` (null: every entry runs all steps) each batch entry's steps.
/// Fails on a length outside [0, steps].
template <typename T, typename L>
bool lstm(const RecurrentSizes &sizes, const T *x, const T *w, const T *r,
          const T *bias, const T *h0, const T *c0, const L *lengths,
          bool reverse, T *output, T *finalH, T *finalC);
/// dpc.lstm_grad: the gradients of x, w, r, bias, h0 and c0.
template <typename T, typename L>
bool lstmGrad(const RecurrentSizes &sizes, const T *x, const T *w, const T *r,
              const T *bias, const T *h0, const T *c0, const T *gradOutput,
              const T *gradH, const T *gradC, const L *lengths, bool reverse,
              T *gradX, T *gradW, T *gradR, T *gradBias, T *gradH0, T *gradC0);
/// dpc.gru: `w` [3H, I], `r` [3H, H], `bias` [6H] (gates z, r, h).
template <typename T, typename L>
bool gru(const RecurrentSizes &sizes, const T *x, const T *w, const T *r,
         const T *bias, const T *h0, const L *lengths, bool reverse,
         bool linearBeforeReset, T *output, T *finalH);
/// dpc.gru_grad: the gradients of x, w, r, bias and h0.
template <typename T, typename L>
bool gruGrad(const RecurrentSizes &sizes, const T *x, const T *w, const T *r,
             const T *bias, const T *h0, const T *gradOutput, const T *gradH,
             const L *lengths, bool reverse, bool linearBeforeReset, T *gradX,
             T *gradW, T *gradR, T *gradBias, T *gradH0);

/// The `k` elements of largest magnitude of the vector `input` and their
/// positions, by decreasing magnitude, ties by position (NaN largest).
template <typename T>
void topK(const T *input, int64_t size, int64_t k, T *values, int64_t *indices);

//===----------------------------------------------------------------------===//
// Data movement (T is float, double or int64_t)
//===----------------------------------------------------------------------===//

template <typename T>
void broadcastTo(const T *input, Dims inputShape, T *out, Dims outShape);
template <typename T>
void transpose(const T *input, Dims inputShape, Dims permutation, T *out);
/// `inputs[i]` has shape `inputShapes[i]`.
template <typename T>
void concat(const T *const *inputs, const Dims *inputShapes, int64_t numInputs,
            int64_t axis, T *out);
template <typename T>
void slice(const T *input, Dims inputShape, Dims start, Dims stride, T *out,
           Dims outShape);
/// Consecutive pieces of `sizes[i]` along `axis` into `outs[i]`.
template <typename T>
void split(const T *input, Dims inputShape, int64_t axis, Dims sizes,
           T *const *outs);
/// Fails on an index outside [-size, size) of `axis`.
template <typename T>
bool gather(const T *input, Dims inputShape, const int64_t *indices,
            Dims indicesShape, int64_t axis, T *out);
/// The inverse of gather: slices of `updates` added into zeros.
template <typename T>
bool scatterAdd(const T *updates, Dims updatesShape, const int64_t *indices,
                Dims indicesShape, int64_t axis, T *out, Dims outShape);
template <typename T>
bool gatherElements(const T *input, Dims inputShape, const int64_t *indices,
                    Dims indicesShape, int64_t axis, T *out);
template <typename T>
bool scatterAddElements(const T *updates, const int64_t *indices,
                        Dims indicesShape, int64_t axis, T *out, Dims outShape);
/// `input` surrounded by `low`/`high` and interleaved with `interior`
/// elements of `value`.
template <typename T>
void pad(const T *input, Dims inputShape, Dims low, Dims interior, double value,
         T *out, Dims outShape);

/// Whether every element of `data` is finite (not NaN or Inf).
template <typename T> bool allFinite(const T *data, int64_t size);

//===----------------------------------------------------------------------===//
// Dropout and losses
//===----------------------------------------------------------------------===//

/// Elements dpc::dropoutKeeps drops are zeroed, the others scaled by
/// 1 / (1 - ratio); element i has global index offset + i.
template <typename T>
void dropout(const T *input, int64_t size, int64_t seed, int64_t offset,
             double ratio, int64_t stream, T *out);

enum class LossReduction { None, Sum, Mean };

/// Softmax cross-entropy (`fromLogits`) or negative log-likelihood of
/// `input` [N, C, d...] against `labels` [N, d...]; fails on a label that
/// is neither `ignoreIndex` nor a class.
template <typename T>
bool classificationLoss(const T *input, Dims inputShape, const int64_t *labels,
                        LossReduction reduction, int64_t ignoreIndex,
                        bool fromLogits, T *out);

} // namespace dpc::cpu

#endif // DPC_RUNTIME_CPUKERNELS_H
