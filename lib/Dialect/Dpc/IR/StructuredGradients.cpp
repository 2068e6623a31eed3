//===- StructuredGradients.cpp - Gradient rules of structured ops ---------===//
//
// DifferentiableOpInterface for contractions, convolutions, pooling,
// reductions, normalizations, data movement and losses. Convolution and
// pooling gradients use their dedicated gradient ops (which backends map
// to library kernels); data movement gradients are data movement.
//
//===----------------------------------------------------------------------===//

#include "GradientBuilder.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dpc;

using Gradients = SmallVectorImpl<Value>;

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return typeOf(value).getShape();
}

/// `[first, rank)` minus nothing; or every dimension but `except`.
static SmallVector<int64_t> getDims(int64_t first, int64_t rank,
                                    int64_t except = -1) {
  SmallVector<int64_t> dims;
  for (int64_t d = first; d < rank; ++d)
    if (d != except)
      dims.push_back(d);
  return dims;
}

static Value reduceMean(GradientBuilder &gb, Value value,
                        ArrayRef<int64_t> dims) {
  double count = 1;
  for (int64_t d : dims)
    count *= shapeOf(value)[d];
  Value sum = gb.reduceSum(value, dims, /*keepDims=*/true);
  return gb.div(sum, gb.scalar(count, value));
}

//===----------------------------------------------------------------------===//
// Contractions and convolutions
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                       Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value g = grads[0], lhs = getLhs(), rhs = getRhs();
  auto swapLast = [](int64_t rank) {
    SmallVector<int64_t> permutation = getDims(0, rank);
    std::swap(permutation[rank - 1], permutation[rank - 2]);
    return permutation;
  };
  Value rhsT = gb.transpose(rhs, swapLast(typeOf(rhs).getRank()));
  Value lhsT = gb.transpose(lhs, swapLast(typeOf(lhs).getRank()));
  out[0] = gb.unbroadcast(gb.matmul(g, rhsT), shapeOf(lhs));
  out[1] = gb.unbroadcast(gb.matmul(lhsT, g), shapeOf(rhs));
  return success();
}

LogicalResult Conv2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                       Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value g = grads[0];
  ArrayRef<int64_t> in = shapeOf(getInput()), filter = shapeOf(getFilter());
  ArrayRef<int64_t> strides = getStrides(), padding = getPadding(),
                    dilations = getDilations();
  // The transposed convolution of the gradient recovers the input size up
  // to the rows the strided window never reached: output_padding.
  SmallVector<int64_t> outputPadding;
  for (int d = 0; d < 2; ++d) {
    int64_t reached = (shapeOf(g)[2 + d] - 1) * strides[d] - padding[d] -
                      padding[2 + d] + dilations[d] * (filter[2 + d] - 1) + 1;
    outputPadding.push_back(in[2 + d] - reached);
  }
  out[0] = ConvTranspose2DOp::create(
      b, getLoc(), getInput().getType(), g, getFilter(), Value(),
      getStridesAttr(), getPaddingAttr(), getDilationsAttr(),
      b.getDenseI64ArrayAttr(outputPadding), getGroupsAttr());
  out[1] = Conv2DFilterGradOp::create(
      b, getLoc(), getFilter().getType(), getInput(), g, getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  if (getBias())
    out[2] = gb.reduceSum(g, {0, 2, 3}, /*keepDims=*/false);
  return success();
}

static Value sliceAlong(OpBuilder &b, Location loc, Value value, int64_t axis,
                        int64_t offset, int64_t size);

LogicalResult ConvTranspose2DOp::buildGradients(OpBuilder &b,
                                                ArrayRef<Value> grads,
                                                Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value g = grads[0];
  if (getBias())
    out[2] = gb.reduceSum(g, {0, 2, 3}, /*keepDims=*/false);
  // A transposed convolution's adjoint is the convolution with the same
  // filter and window, over the output rows some input reaches: output
  // padding past them (a stride or more of it, as ONNX's output_shape
  // asks) is cut off, and short of them the end padding makes up the rest.
  ArrayRef<int64_t> in = shapeOf(getInput()), kernel = shapeOf(getFilter());
  SmallVector<int64_t> padding(getPadding());
  for (int d = 0; d < 2; ++d) {
    int64_t reached = (in[2 + d] - 1) * getStrides()[d] +
                      getDilations()[d] * (kernel[2 + d] - 1) - padding[d] + 1;
    int64_t rows = shapeOf(g)[2 + d];
    if (rows > reached)
      g = sliceAlong(b, getLoc(), g, 2 + d, 0, reached);
    padding[2 + d] = std::max<int64_t>(0, reached - rows);
  }
  DenseI64ArrayAttr paddingAttr = b.getDenseI64ArrayAttr(padding);
  out[0] = Conv2DOp::create(b, getLoc(), getInput().getType(), g, getFilter(),
                            Value(), getStridesAttr(), paddingAttr,
                            getDilationsAttr(), getGroupsAttr());
  out[1] = Conv2DFilterGradOp::create(b, getLoc(), getFilter().getType(), g,
                                      getInput(), getStridesAttr(), paddingAttr,
                                      getDilationsAttr(), getGroupsAttr());
  return success();
}

LogicalResult MaxPool2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  out[0] = MaxPool2DGradOp::create(b, getLoc(), getInput().getType(),
                                   getInput(), grads[0], getKernelShapeAttr(),
                                   getStridesAttr(), getPaddingAttr(),
                                   getDilationsAttr(), getCeilModeAttr());
  return success();
}

LogicalResult AvgPool2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  out[0] = AvgPool2DGradOp::create(b, getLoc(), getInput().getType(), grads[0],
                                   getKernelShapeAttr(), getStridesAttr(),
                                   getPaddingAttr(), getDilationsAttr(),
                                   getCeilModeAttr(), getCountIncludePadAttr());
  return success();
}

LogicalResult ResizeOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                       Gradients &out) {
  out[0] = ResizeGradOp::create(b, getLoc(), getInput().getType(), grads[0],
                                getScalesAttr(), getModeAttr(),
                                getCoordinateModeAttr(), getNearestModeAttr());
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] =
      gb.expandReduced(grads[0], getDims(), shapeOf(getInput()), getKeepDims());
  return success();
}

LogicalResult ReduceMeanOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                           Gradients &out) {
  GradientBuilder gb(b, getLoc());
  double count = 1;
  for (int64_t d : getDims())
    count *= shapeOf(getInput())[d];
  Value expanded =
      gb.expandReduced(grads[0], getDims(), shapeOf(getInput()), getKeepDims());
  out[0] = gb.div(expanded, gb.scalar(count, expanded));
  return success();
}

/// amax / amin: the gradient is shared evenly among the elements equal to
/// the extremum (PyTorch).
static Value buildExtremumGradient(GradientBuilder &gb, Value input,
                                   Value result, Value g,
                                   ArrayRef<int64_t> dims, bool keepDims) {
  ArrayRef<int64_t> shape = shapeOf(input);
  Value extremum = gb.expandReduced(result, dims, shape, keepDims);
  Value hits = gb.cast(gb.compare(ComparePredicate::eq, input, extremum),
                       typeOf(input).getElementType());
  Value count =
      gb.broadcastTo(gb.reduceSum(hits, dims, /*keepDims=*/true), shape);
  Value spread = gb.div(gb.expandReduced(g, dims, shape, keepDims), count);
  return gb.mul(spread, hits);
}

LogicalResult ReduceMaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = buildExtremumGradient(gb, getInput(), getResult(), grads[0],
                                 getDims(), getKeepDims());
  return success();
}

LogicalResult ReduceMinOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = buildExtremumGradient(gb, getInput(), getResult(), grads[0],
                                 getDims(), getKeepDims());
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and normalizations
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                        Gradients &out) {
  // dx = y * (g - sum(g * y)).
  GradientBuilder gb(b, getLoc());
  Value y = getResult(), g = grads[0];
  Value dot = gb.reduceSum(gb.mul(g, y), {static_cast<int64_t>(getAxis())},
                           /*keepDims=*/true);
  out[0] = gb.mul(y, gb.sub(g, dot));
  return success();
}

LogicalResult LogSoftmaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                           Gradients &out) {
  // dx = g - softmax(x) * sum(g).
  GradientBuilder gb(b, getLoc());
  Value g = grads[0];
  Value total =
      gb.reduceSum(g, {static_cast<int64_t>(getAxis())}, /*keepDims=*/true);
  out[0] = gb.sub(g, gb.mul(gb.exp(getResult()), total));
  return success();
}

/// The input gradient of a normalization over `dims`, given the normalized
/// input `xhat` and the inverse standard deviation `rstd`: rstd * (dxhat -
/// mean(dxhat) - xhat * mean(dxhat * xhat)).
static Value buildNormalizedGradient(GradientBuilder &gb, Value xhat,
                                     Value rstd, Value dxhat,
                                     ArrayRef<int64_t> dims) {
  Value meanGrad = reduceMean(gb, dxhat, dims);
  Value meanProjection = reduceMean(gb, gb.mul(dxhat, xhat), dims);
  return gb.mul(rstd,
                gb.sub(gb.sub(dxhat, meanGrad), gb.mul(xhat, meanProjection)));
}

/// 1 / sqrt(variance + epsilon).
static Value buildInverseDeviation(GradientBuilder &gb, Value variance,
                                   double epsilon) {
  return RsqrtOp::create(gb.getBuilder(), gb.getLoc(),
                         gb.add(variance, gb.scalar(epsilon, variance)));
}

LogicalResult LayerNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value g = grads[0], x = getInput();
  int64_t rank = typeOf(x).getRank(), axis = getAxis();
  SmallVector<int64_t> normalized = getDims(axis, rank);
  SmallVector<int64_t> leading = getDims(0, axis);
  // The statistics are computed again from x, which the backward reads
  // anyway: a row stays whole on one rank (the normalized axes cannot be
  // split), so this costs compute and no communication.
  Value centered = gb.sub(x, reduceMean(gb, x, normalized));
  Value rstd = buildInverseDeviation(
      gb, reduceMean(gb, gb.mul(centered, centered), normalized),
      getEpsilon().convertToDouble());
  Value xhat = gb.mul(centered, rstd);
  out[0] = buildNormalizedGradient(gb, xhat, rstd, gb.mul(g, getScale()),
                                   normalized);
  out[1] = gb.reduceSum(gb.mul(g, xhat), leading, /*keepDims=*/false);
  if (getBias())
    out[2] = gb.reduceSum(g, leading, /*keepDims=*/false);
  return success();
}

LogicalResult BatchNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  Value g = grads[0];
  // The running statistics are state; in inference the batch statistics
  // are the running ones.
  Value meanGrad = getTraining() ? grads[3] : Value();
  Value varianceGrad = getTraining() ? grads[4] : Value();
  if (!g && !meanGrad && !varianceGrad)
    return success();
  GradientBuilder gb(b, getLoc());
  Value x = getInput();
  int64_t rank = typeOf(x).getRank();
  SmallVector<int64_t> reduced = getDims(0, rank, /*except=*/1);
  // Per-channel vectors broadcast as [1, C, 1, ...].
  SmallVector<int64_t> channelShape(rank, 1);
  channelShape[1] = shapeOf(x)[1];
  auto perChannel = [&](Value v) { return gb.reshape(v, channelShape); };
  // The statistics the forward normalized with, read rather than computed
  // again: partitioned over the batch, each would cost an all-reduce.
  Value centered = gb.sub(x, perChannel(getBatchMean()));
  Value rstd = buildInverseDeviation(gb, perChannel(getBatchVar()),
                                     getEpsilon().convertToDouble());
  Value xhat = gb.mul(centered, rstd);
  Value dx;
  if (g) {
    Value dxhat = gb.mul(g, perChannel(getScale()));
    dx = getTraining() ? buildNormalizedGradient(gb, xhat, rstd, dxhat, reduced)
                       : gb.mul(dxhat, rstd);
    out[1] = gb.reduceSum(gb.mul(g, xhat), reduced, /*keepDims=*/false);
    out[2] = gb.reduceSum(g, reduced, /*keepDims=*/false);
  }
  // Through the statistics themselves: d mean / dx = 1 / n and d var / dx
  // = 2 (x - mean) / n.
  double count = double(typeOf(x).getNumElements()) / double(channelShape[1]);
  auto accumulate = [&](Value term) { dx = dx ? gb.add(dx, term) : term; };
  if (meanGrad)
    accumulate(gb.broadcastTo(gb.div(perChannel(meanGrad), gb.scalar(count, x)),
                              shapeOf(x)));
  if (varianceGrad)
    accumulate(gb.mul(
        centered, gb.mul(perChannel(varianceGrad), gb.scalar(2.0 / count, x))));
  out[0] = dx;
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                        Gradients &out) {
  out[0] = GradientBuilder(b, getLoc()).reshape(grads[0], shapeOf(getInput()));
  return success();
}

LogicalResult BroadcastToOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                            Gradients &out) {
  out[0] =
      GradientBuilder(b, getLoc()).unbroadcast(grads[0], shapeOf(getInput()));
  return success();
}

LogicalResult TransposeOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                          Gradients &out) {
  ArrayRef<int64_t> permutation = getPermutation();
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [i, dim] : llvm::enumerate(permutation))
    inverse[dim] = i;
  out[0] = GradientBuilder(b, getLoc()).transpose(grads[0], inverse);
  return success();
}

/// The slice of `value` along `axis` from `offset` with `size` elements.
static Value sliceAlong(OpBuilder &b, Location loc, Value value, int64_t axis,
                        int64_t offset, int64_t size) {
  ArrayRef<int64_t> shape = shapeOf(value);
  SmallVector<int64_t> start(shape.size(), 0), limit(shape),
      stride(shape.size(), 1);
  start[axis] = offset;
  limit[axis] = offset + size;
  SmallVector<int64_t> resultShape(shape);
  resultShape[axis] = size;
  return SliceOp::create(b, loc, typeOf(value).clone(resultShape), value,
                         b.getDenseI64ArrayAttr(start),
                         b.getDenseI64ArrayAttr(limit),
                         b.getDenseI64ArrayAttr(stride));
}

LogicalResult ConcatOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                       Gradients &out) {
  int64_t axis = getAxis(), offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    int64_t size = shapeOf(input)[axis];
    out[i] = sliceAlong(b, getLoc(), grads[0], axis, offset, size);
    offset += size;
  }
  return success();
}

LogicalResult SliceOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  // Scatter the gradient back into zeros: pad before the start, between
  // strided elements and after the last one.
  ArrayRef<int64_t> in = shapeOf(getInput()), sliced = shapeOf(getResult());
  ArrayRef<int64_t> start = getStart(), stride = getStride();
  SmallVector<int64_t> high, interior;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t last =
        sliced[d] == 0 ? start[d] - 1 : start[d] + (sliced[d] - 1) * stride[d];
    high.push_back(in[d] - last - 1);
    interior.push_back(stride[d] - 1);
  }
  out[0] =
      PadOp::create(b, getLoc(), getInput().getType(), grads[0], getStartAttr(),
                    b.getDenseI64ArrayAttr(high),
                    b.getDenseI64ArrayAttr(interior), b.getF64FloatAttr(0.0));
  return success();
}

LogicalResult SplitOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  GradientBuilder gb(b, getLoc());
  SmallVector<Value> pieces;
  for (auto [result, grad] : llvm::zip(getResults(), grads))
    pieces.push_back(grad ? grad : gb.filled(0.0, result));
  out[0] =
      ConcatOp::create(b, getLoc(), getInput().getType(), pieces, getAxis());
  return success();
}

LogicalResult GatherOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                       Gradients &out) {
  out[0] = ScatterAddOp::create(b, getLoc(), getInput().getType(), grads[0],
                                getIndices(), getAxis());
  return success();
}

LogicalResult ScatterAddOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                           Gradients &out) {
  out[0] = GatherOp::create(b, getLoc(), getUpdates().getType(), grads[0],
                            getIndices(), getAxis());
  return success();
}

LogicalResult GatherElementsOp::buildGradients(OpBuilder &b,
                                               ArrayRef<Value> grads,
                                               Gradients &out) {
  out[0] = ScatterAddElementsOp::create(b, getLoc(), getInput().getType(),
                                        grads[0], getIndices(), getAxis());
  return success();
}

LogicalResult ScatterAddElementsOp::buildGradients(OpBuilder &b,
                                                   ArrayRef<Value> grads,
                                                   Gradients &out) {
  out[0] = GatherElementsOp::create(b, getLoc(), getUpdates().getType(),
                                    grads[0], getIndices(), getAxis());
  return success();
}

LogicalResult PadOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> low = getLow(), interior = getInterior();
  SmallVector<int64_t> limit, stride;
  for (size_t d = 0; d < in.size(); ++d) {
    stride.push_back(interior[d] + 1);
    limit.push_back(in[d] == 0 ? low[d]
                               : low[d] + (in[d] - 1) * stride.back() + 1);
  }
  out[0] = SliceOp::create(b, getLoc(), getInput().getType(), grads[0],
                           getLowAttr(), b.getDenseI64ArrayAttr(limit),
                           b.getDenseI64ArrayAttr(stride));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// The most classes a loss's gradient is built for: it compares the labels
/// with a constant holding every class id.
static constexpr int64_t kMaxLossClasses = int64_t(1) << 24;

/// Fails, naming `op`, when its gradient's class-id constant would be
/// larger than dpc holds.
template <typename LossOp> static LogicalResult checkClassCount(LossOp op) {
  int64_t classes = shapeOf(op.getInput())[1];
  if (classes <= kMaxLossClasses)
    return success();
  return op.emitOpError() << "has " << classes
                          << " classes; its gradient is built for at most "
                          << kMaxLossClasses << " (a constant of class ids)";
}

/// The gradient of a classification loss with respect to its input:
/// `(probabilities - onehot(labels)) * weight`, zero for ignored samples;
/// `probabilities` is null for nll_loss.
template <typename LossOp>
static Value buildLossGradient(OpBuilder &b, LossOp op, Value g,
                               Value probabilities) {
  GradientBuilder gb(b, op.getLoc());
  Value input = op.getInput(), labels = op.getLabels();
  ArrayRef<int64_t> in = shapeOf(input);
  int64_t rank = in.size(), classes = in[1];
  Type elementType = typeOf(input).getElementType();
  Type labelType = typeOf(labels).getElementType();

  // Class ids [1, C, 1, ...] against labels [N, 1, d...].
  auto idsType = RankedTensorType::get({classes}, labelType);
  SmallVector<APInt> ids;
  for (int64_t c = 0; c < classes; ++c)
    ids.push_back(APInt(labelType.getIntOrFloatBitWidth(), c));
  Value classIds = ConstantOp::create(b, op.getLoc(), idsType,
                                      DenseElementsAttr::get(idsType, ids));
  SmallVector<int64_t> idsShape(rank, 1), labelShape(in);
  idsShape[1] = classes;
  labelShape[1] = 1;
  Value expandedLabels = gb.reshape(labels, labelShape);
  Value onehot =
      gb.cast(gb.compare(ComparePredicate::eq, gb.reshape(classIds, idsShape),
                         expandedLabels),
              elementType);

  // Built exactly: a 64-bit index does not survive a trip through double.
  auto scalarLabel = RankedTensorType::get({}, labelType);
  Value ignoreIndex = ConstantOp::create(
      b, op.getLoc(), scalarLabel,
      DenseElementsAttr::get(
          scalarLabel, IntegerAttr::get(labelType, static_cast<int64_t>(
                                                       op.getIgnoreIndex()))));
  Value kept = gb.cast(gb.compare(ComparePredicate::ne, labels, ignoreIndex),
                       elementType);
  // Per-sample weight: the incoming gradient, over the kept count for mean.
  Value weight =
      op.getReduction() == LossReduction::none ? gb.reshape(g, labelShape) : g;
  if (op.getReduction() == LossReduction::mean)
    weight = gb.div(weight, gb.reduceSum(kept, getDims(0, rank - 1), false));
  Value keptWeight = gb.mul(gb.reshape(kept, labelShape), weight);
  Value direction =
      probabilities ? gb.sub(probabilities, onehot) : gb.neg(onehot);
  return gb.mul(direction, keptWeight);
}

LogicalResult SoftmaxCrossEntropyOp::buildGradients(OpBuilder &b,
                                                    ArrayRef<Value> grads,
                                                    Gradients &out) {
  if (failed(checkClassCount(*this)))
    return failure();
  Value probabilities = SoftmaxOp::create(b, getLoc(), getInput().getType(),
                                          getInput(), b.getI64IntegerAttr(1));
  out[0] = buildLossGradient(b, *this, grads[0], probabilities);
  return success();
}

LogicalResult NllLossOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                        Gradients &out) {
  if (failed(checkClassCount(*this)))
    return failure();
  out[0] = buildLossGradient(b, *this, grads[0], Value());
  return success();
}
