//===- NeuralNetConverters.cpp - ONNX layers and losses -------------------===//
//
// Contractions (MatMul, Gemm, Conv), pooling, normalizations, reductions,
// softmax, dropout and the loss ops. 1-D convolution and pooling become
// their 2-D forms over a unit height.
//
//===----------------------------------------------------------------------===//

#include "OnnxModelLoader.h"
#include "OpConverters.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;

namespace {

LogicalResult convertMatMul(NodeContext &node) {
  Value lhs = node.getInput(0), rhs = lhs ? node.getInput(1) : Value();
  if (!rhs)
    return failure();
  // ONNX MatMul follows numpy.matmul: 1-D operands gain a unit dimension
  // that the result then drops.
  bool vectorLhs = getShapeOf(lhs).size() == 1;
  bool vectorRhs = getShapeOf(rhs).size() == 1;
  if (vectorLhs)
    lhs = node.createReshape(lhs, {1, getShapeOf(lhs)[0]});
  if (vectorRhs)
    rhs = node.createReshape(rhs, {getShapeOf(rhs)[0], 1});
  ArrayRef<int64_t> a = getShapeOf(lhs), b = getShapeOf(rhs);
  if (a.back() != b[b.size() - 2])
    return node.emitError() << "contracted dimensions differ: " << lhs.getType()
                            << " and " << rhs.getType();
  FailureOr<SmallVector<int64_t>> batch =
      getBroadcastShape({a.drop_back(2), b.drop_back(2)});
  if (failed(batch))
    return node.emitError() << "batch dimensions of " << lhs.getType()
                            << " and " << rhs.getType() << " do not broadcast";
  SmallVector<int64_t> shape = *batch;
  shape.append({a[a.size() - 2], b.back()});
  auto type = RankedTensorType::get(shape, getElementTypeOf(lhs));
  Value result =
      MatmulOp::create(node.getBuilder(), node.getLoc(), type, lhs, rhs);
  SmallVector<int64_t> finalShape(shape.begin(), shape.end() - 2);
  if (!vectorLhs)
    finalShape.push_back(shape[shape.size() - 2]);
  if (!vectorRhs)
    finalShape.push_back(shape.back());
  node.setOutput(0, node.createReshape(result, finalShape));
  return success();
}

LogicalResult convertGemm(NodeContext &node) {
  Value a = node.getInput(0), b = a ? node.getInput(1) : Value();
  if (!b)
    return failure();
  if (getShapeOf(a).size() != 2 || getShapeOf(b).size() != 2)
    return node.emitError() << "A and B must be matrices";
  if (node.getInt("transA", 0))
    a = node.createTranspose(a, {1, 0});
  if (node.getInt("transB", 0))
    b = node.createTranspose(b, {1, 0});
  if (getShapeOf(a)[1] != getShapeOf(b)[0])
    return node.emitError() << "contracted dimensions differ: " << a.getType()
                            << " and " << b.getType();
  Type elementType = getElementTypeOf(a);
  auto type =
      RankedTensorType::get({getShapeOf(a)[0], getShapeOf(b)[1]}, elementType);
  Value result = MatmulOp::create(node.getBuilder(), node.getLoc(), type, a, b);
  if (float alpha = node.getFloat("alpha", 1.0f); alpha != 1.0f)
    result =
        node.createBinary<MulOp>(result, node.createScalar(alpha, elementType));
  if (node.hasInput(2)) {
    Value c = node.getInput(2);
    if (!c)
      return failure();
    if (float beta = node.getFloat("beta", 1.0f); beta != 1.0f)
      c = node.createBinary<MulOp>(c, node.createScalar(beta, elementType));
    result = node.createBinary<AddOp>(result, c);
    if (!result)
      return failure();
  }
  node.setOutput(0, result);
  return success();
}

/// Spatial window attributes shared by Conv and the pools, in dpc's 2-D
/// form: padding is [top, left, bottom, right].
struct Window {
  SmallVector<int64_t> kernel, strides, padding, dilations;
};

/// Reads the window attributes of a node over `spatialRank` (1 or 2)
/// dimensions of `inputShape`, resolving auto_pad.
std::optional<Window> readWindow(NodeContext &node,
                                 ArrayRef<int64_t> inputShape,
                                 ArrayRef<int64_t> kernel, bool ceilMode) {
  size_t rank = kernel.size();
  std::vector<int64_t> strides =
      node.getInts("strides", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> dilations =
      node.getInts("dilations", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads =
      node.getInts("pads", std::vector<int64_t>(2 * rank, 0));
  if (strides.size() != rank || dilations.size() != rank ||
      pads.size() != 2 * rank) {
    node.emitError() << "strides, dilations and pads do not match the " << rank
                     << " spatial dimensions";
    return std::nullopt;
  }
  std::string autoPad = node.getString("auto_pad", "NOTSET");
  for (size_t d = 0; d < rank; ++d) {
    int64_t in = inputShape[2 + d];
    if (autoPad == "VALID") {
      pads[d] = pads[rank + d] = 0;
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (in + strides[d] - 1) / strides[d];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in);
      int64_t small = total / 2, large = total - small;
      pads[d] = autoPad == "SAME_UPPER" ? small : large;
      pads[rank + d] = autoPad == "SAME_UPPER" ? large : small;
    } else if (autoPad != "NOTSET") {
      node.emitError() << "unknown auto_pad '" << autoPad << "'";
      return std::nullopt;
    }
  }
  (void)ceilMode;
  Window window;
  if (rank == 1) {
    window.kernel = {1, kernel[0]};
    window.strides = {1, strides[0]};
    window.dilations = {1, dilations[0]};
    window.padding = {0, pads[0], 0, pads[1]};
  } else {
    window.kernel.assign(kernel.begin(), kernel.end());
    window.strides.assign(strides.begin(), strides.end());
    window.dilations.assign(dilations.begin(), dilations.end());
    window.padding.assign(pads.begin(), pads.end());
  }
  return window;
}

/// The 2-D form of an NCL / NCHW tensor.
Value to2D(NodeContext &node, Value value) {
  ArrayRef<int64_t> shape = getShapeOf(value);
  if (shape.size() == 4)
    return value;
  return node.createReshape(value, {shape[0], shape[1], 1, shape[2]});
}

SmallVector<int64_t> getOutputShape(ArrayRef<int64_t> input2D, int64_t channels,
                                    const Window &window, bool ceilMode) {
  SmallVector<int64_t> shape = {input2D[0], channels};
  for (int d = 0; d < 2; ++d)
    shape.push_back(getWindowOutputSize(
        input2D[2 + d], window.kernel[d], window.strides[d], window.padding[d],
        window.padding[2 + d], window.dilations[d], ceilMode));
  return shape;
}

/// Restores the original spatial rank of a 2-D result.
Value from2D(NodeContext &node, Value value, size_t rank) {
  ArrayRef<int64_t> shape = getShapeOf(value);
  if (rank == 4)
    return value;
  return node.createReshape(value, {shape[0], shape[1], shape[3]});
}

LogicalResult checkSpatialRank(NodeContext &node, Value input) {
  size_t rank = getShapeOf(input).size();
  if (rank == 3 || rank == 4)
    return success();
  return node.emitError() << "only 1-D and 2-D windows are supported, got "
                          << "an input of rank " << rank;
}

LogicalResult convertConv(NodeContext &node) {
  Value input = node.getInput(0);
  Value filter = input ? node.getInput(1) : Value();
  if (!filter || failed(checkSpatialRank(node, input)))
    return failure();
  size_t rank = getShapeOf(input).size();
  if (getShapeOf(filter).size() != rank)
    return node.emitError() << "filter rank differs from input rank";
  std::optional<Window> window = readWindow(
      node, getShapeOf(input), getShapeOf(filter).drop_front(2), false);
  if (!window)
    return failure();
  Value bias;
  if (node.hasInput(2) && !(bias = node.getInput(2)))
    return failure();
  Value input2D = to2D(node, input), filter2D = to2D(node, filter);
  int64_t groups = node.getInt("group", 1);
  ArrayRef<int64_t> in = getShapeOf(input2D), f = getShapeOf(filter2D);
  if (in[1] != f[1] * groups || f[0] % groups != 0)
    return node.emitError()
           << "input has " << in[1] << " channels, the filter expects " << f[1]
           << " per group in " << groups << " groups";
  SmallVector<int64_t> shape = getOutputShape(in, f[0], *window, false);
  if (shape[2] <= 0 || shape[3] <= 0)
    return node.emitError() << "the window does not fit the input";
  OpBuilder &b = node.getBuilder();
  auto type = RankedTensorType::get(shape, getElementTypeOf(input));
  Value result = Conv2DOp::create(b, node.getLoc(), type, input2D, filter2D,
                                  bias, b.getDenseI64ArrayAttr(window->strides),
                                  b.getDenseI64ArrayAttr(window->padding),
                                  b.getDenseI64ArrayAttr(window->dilations),
                                  b.getI64IntegerAttr(groups));
  node.setOutput(0, from2D(node, result, rank));
  return success();
}

LogicalResult convertConvTranspose(NodeContext &node) {
  Value input = node.getInput(0);
  Value filter = input ? node.getInput(1) : Value();
  if (!filter || failed(checkSpatialRank(node, input)))
    return failure();
  size_t rank = getShapeOf(input).size();
  if (getShapeOf(filter).size() != rank)
    return node.emitError() << "filter rank differs from input rank";
  ArrayRef<int64_t> kernel = getShapeOf(filter).drop_front(2);
  size_t spatial = kernel.size();
  std::vector<int64_t> strides =
      node.getInts("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations =
      node.getInts("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads =
      node.getInts("pads", std::vector<int64_t>(2 * spatial, 0));
  std::vector<int64_t> outputPadding =
      node.getInts("output_padding", std::vector<int64_t>(spatial, 0));
  std::vector<int64_t> outputShape = node.getInts("output_shape");
  std::string autoPad = node.getString("auto_pad", "NOTSET");
  if (strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial || outputPadding.size() != spatial)
    return node.emitError() << "strides, dilations, pads and output_padding "
                               "do not match the spatial dimensions";
  // An explicit output shape, or SAME padding, determines the pads.
  if (!outputShape.empty() || autoPad == "SAME_UPPER" ||
      autoPad == "SAME_LOWER") {
    if (!outputShape.empty() && outputShape.size() < spatial)
      return node.emitError()
             << "output_shape has " << outputShape.size()
             << " sizes for " << spatial << " spatial dimensions";
    // Also given as the whole shape: its spatial sizes are the last.
    if (outputShape.size() > spatial)
      outputShape.erase(outputShape.begin(), outputShape.end() - spatial);
    for (size_t d = 0; d < spatial; ++d) {
      int64_t in = getShapeOf(input)[2 + d];
      int64_t out = outputShape.empty() ? in * strides[d] : outputShape[d];
      int64_t total = strides[d] * (in - 1) + outputPadding[d] +
                      (kernel[d] - 1) * dilations[d] + 1 - out;
      if (total < 0) {
        // A larger output than the input reaches: the rows no input lands
        // on come at the end, as output padding (ONNX's reference output).
        outputPadding[d] -= total;
        pads[d] = pads[spatial + d] = 0;
        continue;
      }
      int64_t half = total / 2;
      pads[d] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[spatial + d] = autoPad == "SAME_UPPER" ? total - half : half;
    }
  } else if (autoPad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  }
  if (spatial == 1) {
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    outputPadding.insert(outputPadding.begin(), 0);
    pads = {0, pads[0], 0, pads[1]};
  }
  Value bias;
  if (node.hasInput(2) && !(bias = node.getInput(2)))
    return failure();
  Value input2D = to2D(node, input), filter2D = to2D(node, filter);
  int64_t groups = node.getInt("group", 1);
  ArrayRef<int64_t> in = getShapeOf(input2D), f = getShapeOf(filter2D);
  if (f[0] != in[1] || in[1] % groups != 0)
    return node.emitError()
           << "input has " << in[1] << " channels, the filter " << f[0];
  SmallVector<int64_t> shape = {in[0], f[1] * groups};
  for (int d = 0; d < 2; ++d)
    shape.push_back((in[2 + d] - 1) * strides[d] - pads[d] - pads[2 + d] +
                    dilations[d] * (f[2 + d] - 1) + outputPadding[d] + 1);
  if (shape[2] <= 0 || shape[3] <= 0)
    return node.emitError() << "the output would be empty";
  OpBuilder &b = node.getBuilder();
  auto type = RankedTensorType::get(shape, getElementTypeOf(input));
  Value result = ConvTranspose2DOp::create(
      b, node.getLoc(), type, input2D, filter2D, bias,
      b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pads),
      b.getDenseI64ArrayAttr(dilations), b.getDenseI64ArrayAttr(outputPadding),
      b.getI64IntegerAttr(groups));
  node.setOutput(0, from2D(node, result, rank));
  return success();
}

/// ONNX Resize (opset 10+) and Upsample (before): scales or sizes decide
/// the output shape.
LogicalResult convertResize(NodeContext &node) {
  std::optional<RankedTensorType> type = node.getInputType(0);
  if (!type)
    return failure();
  ArrayRef<int64_t> in = type->getShape();
  bool isUpsample = node.getNode().op_type() == "Upsample";
  // Resize-10 and Upsample take scales as input 1; Resize-11+ as input 2,
  // with sizes as input 3.
  unsigned scalesInput = (isUpsample || node.getOpset() < 11) ? 1 : 2;
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (isUpsample && node.getOpset() < 9) {
    auto values = node.getAttr("scales");
    if (values)
      scales.assign(values->floats().begin(), values->floats().end());
  } else if (node.hasInput(scalesInput) &&
             node.getInputType(scalesInput)->getNumElements() > 0) {
    const Literal *literal = node.requireLiteral(scalesInput, "scales");
    if (!literal)
      return failure();
    for (int64_t i = 0; i < literal->getNumElements(); ++i)
      scales.push_back(literal->getFloat(i));
  }
  if (scales.empty() && !isUpsample && node.getOpset() >= 11 &&
      node.hasInput(3)) {
    const Literal *literal = node.requireLiteral(3, "sizes");
    if (!literal)
      return failure();
    sizes = literal->getInts();
  }
  if (scales.empty() && sizes.empty())
    return node.emitError() << "needs scales or sizes";
  if (!scales.empty() && scales.size() != in.size())
    return node.emitError() << "needs one scale per dimension";
  if (!sizes.empty() && sizes.size() != in.size())
    return node.emitError() << "needs one size per dimension";
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < in.size(); ++d) {
    if (sizes.empty()) {
      shape.push_back(static_cast<int64_t>(std::floor(in[d] * scales[d])));
    } else {
      shape.push_back(sizes[d]);
      scales.push_back(static_cast<double>(sizes[d]) / in[d]);
    }
  }
  std::string mode = node.getString("mode", "nearest");
  if (mode != "nearest" && mode != "linear")
    return node.emitError() << "mode '" << mode << "' is not supported";
  // Resize-10 and Upsample place samples like `asymmetric` does.
  std::string coordinateMode =
      (isUpsample || node.getOpset() < 11)
          ? "asymmetric"
          : node.getString("coordinate_transformation_mode", "half_pixel");
  std::string nearestMode =
      (isUpsample || node.getOpset() < 11)
          ? "floor"
          : node.getString("nearest_mode", "round_prefer_floor");
  if (coordinateMode == "tf_crop_and_resize" ||
      coordinateMode == "tf_half_pixel_for_nn")
    return node.emitError() << "coordinate_transformation_mode '"
                            << coordinateMode << "' is not supported";
  Value input = node.getInput(0);
  if (!input)
    return failure();
  OpBuilder &b = node.getBuilder();
  auto resultType = RankedTensorType::get(shape, getElementTypeOf(input));
  node.setOutput(0, ResizeOp::create(b, node.getLoc(), resultType, input,
                                     b.getDenseF64ArrayAttr(scales), mode,
                                     coordinateMode, nearestMode)
                        .getResult());
  return success();
}

template <typename PoolOp> LogicalResult convertPool(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input || failed(checkSpatialRank(node, input)))
    return failure();
  Type element = cast<RankedTensorType>(input.getType()).getElementType();
  if (!isa<FloatType>(element))
    return node.emitError() << "pooling of " << element
                            << " tensors is not supported (only floats)";
  if (node.isOutputUsed(1))
    return node.emitError() << "the Indices output is not supported";
  size_t rank = getShapeOf(input).size();
  std::vector<int64_t> kernel = node.getInts("kernel_shape");
  if (kernel.size() != rank - 2)
    return node.emitError() << "kernel_shape needs " << rank - 2 << " entries";
  bool ceilMode = node.getInt("ceil_mode", 0);
  std::optional<Window> window =
      readWindow(node, getShapeOf(input), kernel, ceilMode);
  if (!window)
    return failure();
  Value input2D = to2D(node, input);
  SmallVector<int64_t> shape = getOutputShape(
      getShapeOf(input2D), getShapeOf(input2D)[1], *window, ceilMode);
  if (shape[2] <= 0 || shape[3] <= 0)
    return node.emitError() << "the window does not fit the input";
  OpBuilder &b = node.getBuilder();
  auto type = RankedTensorType::get(shape, getElementTypeOf(input));
  bool countIncludePad = node.getInt("count_include_pad", 0);
  Value result = PoolOp::create(b, node.getLoc(), type, input2D,
                                b.getDenseI64ArrayAttr(window->kernel),
                                b.getDenseI64ArrayAttr(window->strides),
                                b.getDenseI64ArrayAttr(window->padding),
                                b.getDenseI64ArrayAttr(window->dilations),
                                ceilMode ? b.getUnitAttr() : UnitAttr(),
                                countIncludePad ? b.getUnitAttr() : UnitAttr());
  node.setOutput(0, from2D(node, result, rank));
  return success();
}

/// ArgMax / ArgMin: the index along `axis` (default 0), kept as a
/// dimension of 1 unless keepdims is 0.
template <typename ArgOp> LogicalResult convertArgReduce(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  ArrayRef<int64_t> shape = getShapeOf(input);
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", 0), shape.size());
  if (!axis)
    return failure();
  bool keepDims = node.getInt("keepdims", 1) != 0;
  SmallVector<int64_t> resultShape(shape);
  if (keepDims)
    resultShape[*axis] = 1;
  else
    resultShape.erase(resultShape.begin() + *axis);
  OpBuilder &builder = node.getBuilder();
  auto type = RankedTensorType::get(resultShape, builder.getI64Type());
  node.setOutput(0, ArgOp::create(builder, node.getLoc(), type, input,
                                  builder.getI64IntegerAttr(*axis),
                                  keepDims ? builder.getUnitAttr() : UnitAttr(),
                                  node.getInt("select_last_index", 0)
                                      ? builder.getUnitAttr()
                                      : UnitAttr()));
  return success();
}

template <typename ReduceOp>
LogicalResult convertGlobalPool(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  SmallVector<int64_t> dims;
  for (size_t d = 2; d < getShapeOf(input).size(); ++d)
    dims.push_back(d);
  node.setOutput(0, node.createReduce<ReduceOp>(input, dims, true));
  return success();
}

/// How a Reduce* op post-processes: ReduceL2 takes a square root, ...
enum class ReduceKind { Plain, SumSquare, L1, L2, LogSum, LogSumExp };

template <typename ReduceOp, ReduceKind kind = ReduceKind::Plain>
LogicalResult convertReduce(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  int64_t rank = getShapeOf(input).size();
  std::optional<std::vector<int64_t>> axes;
  bool axesAsInput = node.getOpset() >= 13 &&
                     std::is_same_v<ReduceOp, ReduceSumOp> &&
                     kind == ReduceKind::Plain;
  if (axesAsInput) {
    if (node.hasInput(1)) {
      const Literal *literal = node.requireLiteral(1, "axes");
      if (!literal)
        return failure();
      axes = literal->getInts();
    }
  } else if (node.hasAttr("axes")) {
    axes = node.getInts("axes");
  }
  if ((!axes || axes->empty()) && node.getInt("noop_with_empty_axes", 0)) {
    node.setOutput(0, input);
    return success();
  }
  SmallVector<int64_t> dims;
  if (!axes || axes->empty()) {
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  } else {
    std::optional<SmallVector<int64_t>> normalized =
        node.normalizeAxes(*axes, rank);
    if (!normalized)
      return failure();
    dims = *normalized;
  }
  bool keepDims = node.getInt("keepdims", 1) != 0;
  OpBuilder &b = node.getBuilder();
  // log(sum(exp(x))) as m + log(sum(exp(x - m))), m the maximum: no
  // overflow.
  Value maximum;
  if (kind == ReduceKind::LogSumExp) {
    maximum = node.createReduce<ReduceMaxOp>(input, dims, /*keepDims=*/true);
    input = ExpOp::create(b, node.getLoc(),
                          node.createBinary<SubOp>(input, maximum));
  }
  if (kind == ReduceKind::SumSquare || kind == ReduceKind::L2)
    input = node.createBinary<MulOp>(input, input);
  else if (kind == ReduceKind::L1)
    input = AbsOp::create(b, node.getLoc(), input);
  Value result = node.createReduce<ReduceOp>(input, dims, keepDims);
  if (kind == ReduceKind::L2)
    result = SqrtOp::create(b, node.getLoc(), result);
  if (kind == ReduceKind::LogSum || kind == ReduceKind::LogSumExp)
    result = LogOp::create(b, node.getLoc(), result);
  if (maximum)
    result = node.createBinary<AddOp>(
        result, node.createReshape(maximum, getShapeOf(result)));
  node.setOutput(0, result);
  return success();
}

template <typename SoftmaxOp> LogicalResult convertSoftmax(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  ArrayRef<int64_t> shape = getShapeOf(input);
  int64_t rank = shape.size();
  int64_t defaultAxis = node.getOpset() >= 13 ? -1 : 1;
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", defaultAxis), rank);
  if (!axis)
    return failure();
  OpBuilder &b = node.getBuilder();
  if (node.getOpset() >= 13 || *axis == rank - 1) {
    node.setOutput(
        0, SoftmaxOp::create(b, node.getLoc(), input.getType(), input, *axis)
               .getResult());
    return success();
  }
  // Before opset 13 the input is coerced to 2-D at `axis`.
  int64_t outer = std::accumulate(shape.begin(), shape.begin() + *axis,
                                  int64_t(1), std::multiplies<int64_t>());
  int64_t inner = std::accumulate(shape.begin() + *axis, shape.end(),
                                  int64_t(1), std::multiplies<int64_t>());
  Value flat = node.createReshape(input, {outer, inner});
  Value result = SoftmaxOp::create(b, node.getLoc(), flat.getType(), flat, 1);
  node.setOutput(0, node.createReshape(result, shape));
  return success();
}

/// LayerNormalization's optional outputs: the mean and 1 / sqrt(variance +
/// epsilon) of `input` over dimensions `axis` and after, those dimensions
/// kept as ones, computed in the stash type (float32 unless the node says
/// otherwise) as the ONNX function body does. They are outputs a model
/// reads, not what the layer_norm op keeps for its backward pass.
static LogicalResult setNormalizationStatistics(NodeContext &node, Value input,
                                                int64_t axis, float epsilon) {
  OpBuilder &b = node.getBuilder();
  int64_t stashType = node.getInt("stash_type", 1);
  std::optional<::dpc::DType> dtype = getDType(stashType);
  Type stash = dtype ? node.getImporter().getElementType(*dtype) : Type();
  if (!stash || !isa<FloatType>(stash))
    return node.emitError()
           << "stash_type " << stashType << " is not a floating-point type";
  Value x = input;
  if (getElementTypeOf(input) != stash)
    x = CastOp::create(b, node.getLoc(),
                       RankedTensorType::get(getShapeOf(input), stash), input);
  SmallVector<int64_t> dims;
  for (int64_t d = axis, rank = getShapeOf(input).size(); d < rank; ++d)
    dims.push_back(d);
  Value mean = node.createReduce<ReduceMeanOp>(x, dims, true);
  Value centered = node.createBinary<SubOp>(x, mean);
  Value variance = node.createReduce<ReduceMeanOp>(
      node.createBinary<MulOp>(centered, centered), dims, true);
  node.setOutput(1, mean);
  node.setOutput(
      2, RsqrtOp::create(b, node.getLoc(),
                         node.createBinary<AddOp>(
                             variance, node.createScalar(epsilon, stash))));
  return success();
}

LogicalResult convertLayerNormalization(NodeContext &node) {
  Value input = node.getInput(0);
  Value scale = input ? node.getInput(1) : Value();
  if (!scale)
    return failure();
  Value bias;
  if (node.hasInput(2) && !(bias = node.getInput(2)))
    return failure();
  int64_t rank = getShapeOf(input).size();
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", -1), rank);
  if (!axis)
    return failure();
  float epsilon = node.getFloat("epsilon", 1e-5f);
  OpBuilder &b = node.getBuilder();
  node.setOutput(0, LayerNormOp::create(
                        b, node.getLoc(), input.getType(), input, scale, bias,
                        b.getI64IntegerAttr(*axis), b.getF32FloatAttr(epsilon))
                        .getResult());
  if (node.isOutputUsed(1) || node.isOutputUsed(2))
    return setNormalizationStatistics(node, input, *axis, epsilon);
  return success();
}

/// Normalizes each (sample, channel) over the spatial dimensions: a
/// layer_norm over them, then the per-channel scale and bias.
LogicalResult convertInstanceNormalization(NodeContext &node) {
  Value input = node.getInput(0);
  Value scale = input ? node.getInput(1) : Value();
  Value bias = scale ? node.getInput(2) : Value();
  if (!bias)
    return failure();
  ArrayRef<int64_t> shape = getShapeOf(input);
  if (shape.size() < 3)
    return node.emitError()
           << "input must have rank 3 or more, got " << input.getType();
  SmallVector<int64_t> channelShape = {shape[1]};
  if (getShapeOf(scale) != ArrayRef(channelShape) ||
      getShapeOf(bias) != ArrayRef(channelShape))
    return node.emitError()
           << "scale and B must have shape [" << shape[1] << "], got "
           << scale.getType() << " and " << bias.getType();
  OpBuilder &b = node.getBuilder();
  Type elementType = getElementTypeOf(input);
  ArrayRef<int64_t> spatial = shape.drop_front(2);
  Value ones = node.createBroadcast(node.createScalar(1.0, elementType),
                                    SmallVector<int64_t>(spatial));
  Value normalized =
      LayerNormOp::create(b, node.getLoc(), input.getType(), input, ones,
                          Value(), b.getI64IntegerAttr(2),
                          b.getF32FloatAttr(node.getFloat("epsilon", 1e-5f)));
  SmallVector<int64_t> perChannel(shape.size(), 1);
  perChannel[1] = shape[1];
  Value scaled = node.createBinary<MulOp>(
      normalized, node.createReshape(scale, perChannel));
  node.setOutput(0, node.createBinary<AddOp>(
                        scaled, node.createReshape(bias, perChannel)));
  return success();
}

/// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`, as ONNX's
/// function body computes it.
LogicalResult convertMeanVarianceNormalization(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  int64_t rank = getShapeOf(input).size();
  std::optional<SmallVector<int64_t>> dims =
      node.normalizeAxes(node.getInts("axes", {0, 2, 3}), rank);
  if (!dims)
    return failure();
  Type elementType = getElementTypeOf(input);
  Value mean = node.createReduce<ReduceMeanOp>(input, *dims, true);
  Value meanOfSquares = node.createReduce<ReduceMeanOp>(
      node.createBinary<MulOp>(input, input), *dims, true);
  Value variance = node.createBinary<SubOp>(
      meanOfSquares, node.createBinary<MulOp>(mean, mean));
  Value deviation = node.createBinary<AddOp>(
      SqrtOp::create(node.getBuilder(), node.getLoc(), variance),
      node.createScalar(1e-9, elementType));
  node.setOutput(0, node.createBinary<DivOp>(
                        node.createBinary<SubOp>(input, mean), deviation));
  return success();
}

/// 1 at the first maximum along the axis, 0 elsewhere. Before opset 13
/// the input is read as a matrix split at the axis.
LogicalResult convertHardmax(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  ArrayRef<int64_t> shape = getShapeOf(input);
  bool coerced = node.getOpset() < 13;
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", coerced ? 1 : -1), shape.size());
  if (!axis)
    return failure();
  Value rows = input;
  int64_t along = *axis;
  if (coerced) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      (d < along ? outer : inner) *= shape[d];
    rows = node.createReshape(input, {outer, inner});
    along = 1;
  }
  ArrayRef<int64_t> rowsShape = getShapeOf(rows);
  OpBuilder &b = node.getBuilder();
  SmallVector<int64_t> keptShape(rowsShape);
  keptShape[along] = 1;
  Value first = ArgMaxOp::create(
      b, node.getLoc(), RankedTensorType::get(keptShape, b.getI64Type()), rows,
      b.getI64IntegerAttr(along), b.getUnitAttr(), UnitAttr());
  SmallVector<int64_t> iotaShape(rowsShape.size(), 1);
  iotaShape[along] = rowsShape[along];
  std::vector<int64_t> positions(rowsShape[along]);
  for (int64_t i = 0; i < rowsShape[along]; ++i)
    positions[i] = i;
  Value iota = node.getImporter().materialize(
      Literal::ofInts(positions,
                      std::vector<int64_t>(iotaShape.begin(), iotaShape.end()),
                      ::dpc::DType::I64),
      node.getLoc());
  Type elementType = getElementTypeOf(input);
  Value hit = node.createCompare(ComparePredicate::eq, first, iota);
  Value result = node.createSelect(hit, node.createScalar(1.0, elementType),
                                   node.createScalar(0.0, elementType));
  node.setOutput(0, node.createReshape(result, shape));
  return success();
}

LogicalResult convertBatchNormalization(NodeContext &node) {
  Value input = node.getInput(0);
  Value scale = input ? node.getInput(1) : Value();
  Value bias = scale ? node.getInput(2) : Value();
  Value mean = bias ? node.getInput(3, TensorUse::State) : Value();
  Value variance = mean ? node.getInput(4, TensorUse::State) : Value();
  if (!variance)
    return failure();
  // Opset 14 says so with training_mode; before, training-mode nodes have
  // the running statistics as extra outputs.
  bool training = node.getOpset() >= 14 ? node.getInt("training_mode", 0)
                                        : node.getNumOutputs() > 1;
  if (node.isOutputUsed(3) || node.isOutputUsed(4))
    return node.emitError() << "the saved mean and variance outputs are not "
                               "supported";
  OpBuilder &b = node.getBuilder();
  auto op = BatchNormOp::create(
      b, node.getLoc(), input.getType(), scale.getType(), scale.getType(),
      scale.getType(), scale.getType(), input, scale, bias, mean, variance,
      b.getF32FloatAttr(node.getFloat("epsilon", 1e-5f)),
      b.getF32FloatAttr(node.getFloat("momentum", 0.9f)),
      training ? b.getUnitAttr() : UnitAttr());
  node.setOutput(0, op.getResult());
  node.setOutput(1, op.getNewRunningMean());
  node.setOutput(2, op.getNewRunningVar());
  if (training) {
    if (isa<BlockArgument>(mean))
      node.getImporter().setStateUpdate(mean, op.getNewRunningMean());
    if (isa<BlockArgument>(variance))
      node.getImporter().setStateUpdate(variance, op.getNewRunningVar());
  }
  return success();
}

LogicalResult convertDropout(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  bool training = false;
  if (node.getOpset() >= 12 && node.hasInput(2)) {
    const Literal *literal = node.requireLiteral(2, "training_mode");
    if (!literal)
      return failure();
    training = literal->getInt(0);
  }
  // Outside training the output is the input and the mask keeps every
  // element, whatever the ratio (which may then be the graph's input).
  if (!training) {
    node.setOutput(0, input);
    if (node.isOutputUsed(1))
      node.setOutput(1, node.createBroadcast(
                            node.createScalar(1, node.getBuilder().getI1Type()),
                            getShapeOf(input)));
    return success();
  }
  if (node.isOutputUsed(1))
    return node.emitError() << "the mask output is not supported in training "
                               "mode";
  double ratio = node.getFloat("ratio", 0.5f);
  if (node.getOpset() >= 12 && node.hasInput(1)) {
    const Literal *literal = node.requireLiteral(1, "ratio");
    if (!literal)
      return failure();
    ratio = literal->getFloat(0);
  }
  // The mask is keyed by the step's seed and each element's index in the
  // whole step: micro-batch k of a step starts at element k * numel.
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  GraphImporter &importer = node.getImporter();
  Value seed = importer.getHyperparameter("seed");
  Value microBatch = importer.getHyperparameter("micro_batch");
  auto scalar = RankedTensorType::get({}, b.getI64Type());
  Value numel = ConstantOp::create(
      b, loc, scalar,
      DenseElementsAttr::get(
          scalar,
          b.getI64IntegerAttr(
              cast<RankedTensorType>(input.getType()).getNumElements())));
  Value offset = MulOp::create(b, loc, scalar, microBatch, numel);
  node.setOutput(
      0, DropoutOp::create(b, loc, input.getType(), input, seed, offset,
                           b.getF32FloatAttr(ratio),
                           b.getI64IntegerAttr(importer.takeDropoutStream()))
             .getResult());
  return success();
}

/// A loss with class weights `weights` ([C]), from dpc's ops: each
/// sample's (and position's) negative log-probability of its label, scaled
/// by its label's weight; ignored labels weigh nothing; the mean divides by
/// the weights of the labels counted (ONNX's and PyTorch's definition).
/// `logProbabilities` is [N, C, d...], `labels` [N, d...].
static Value createWeightedLoss(NodeContext &node, Value logProbabilities,
                                Value labels, Value weights,
                                LossReduction reduction,
                                std::optional<int64_t> ignoreIndex) {
  OpBuilder &b = node.getBuilder();
  Location loc = node.getLoc();
  ArrayRef<int64_t> labelShape = getShapeOf(labels);
  Type labelType = getElementTypeOf(labels);
  Type floatType = getElementTypeOf(logProbabilities);
  // An ignored label reads class 0, then weighs nothing.
  Value counted;
  if (ignoreIndex) {
    counted = node.createCompare(ComparePredicate::ne, labels,
                                 node.createScalar(*ignoreIndex, labelType));
    labels =
        node.createSelect(counted, labels, node.createScalar(0, labelType));
  }
  SmallVector<int64_t> columnShape(labelShape);
  columnShape.insert(columnShape.begin() + 1, 1);
  Value picked = GatherElementsOp::create(
      b, loc, RankedTensorType::get(columnShape, floatType), logProbabilities,
      node.createReshape(labels, columnShape), 1);
  picked = node.createReshape(picked, labelShape);
  Value weight = GatherOp::create(
      b, loc, RankedTensorType::get(labelShape, floatType), weights, labels, 0);
  if (counted)
    weight =
        node.createSelect(counted, weight, node.createScalar(0, floatType));
  Value losses =
      node.createBinary<MulOp>(node.createBinary<MulOp>(weight, picked),
                               node.createScalar(-1, floatType));
  if (reduction == LossReduction::none)
    return losses;
  SmallVector<int64_t> all(labelShape.size());
  std::iota(all.begin(), all.end(), 0);
  Value total = node.createReduce<ReduceSumOp>(losses, all, false);
  if (reduction == LossReduction::sum)
    return total;
  return node.createBinary<DivOp>(
      total, node.createReduce<ReduceSumOp>(weight, all, false));
}

template <typename LossOp> LogicalResult convertLoss(NodeContext &node) {
  Value input = node.getInput(0);
  Value labels = input ? node.getInput(1) : Value();
  if (!labels)
    return failure();
  std::string reductionName = node.getString("reduction", "mean");
  std::optional<LossReduction> reduction =
      symbolizeLossReduction(reductionName);
  if (!reduction)
    return node.emitError() << "unknown reduction '" << reductionName << "'";
  OpBuilder &b = node.getBuilder();
  constexpr bool fromLogits = std::is_same_v<LossOp, SoftmaxCrossEntropyOp>;
  if (node.hasInput(2)) {
    // Class weights: a constant where the model holds them (a buffer, not
    // a parameter to train), else the graph's input.
    Value weights;
    if (const Literal *literal = node.getLiteral(2, /*forceStored=*/true))
      weights = node.getImporter().materialize(*literal, node.getLoc());
    else
      weights = node.getInput(2);
    if (!weights)
      return failure();
    int64_t classes = getShapeOf(input).size() > 1 ? getShapeOf(input)[1] : 0;
    if (getShapeOf(weights) != ArrayRef<int64_t>{classes} ||
        getElementTypeOf(weights) != getElementTypeOf(input))
      return node.emitError()
             << "class weights must be " << classes << " values of the "
             << "input's type " << getElementTypeOf(input) << ", got "
             << weights.getType();
    Value logProbabilities =
        fromLogits
            ? LogSoftmaxOp::create(b, node.getLoc(), input.getType(), input, 1)
                  .getResult()
            : input;
    std::optional<int64_t> ignoreIndex;
    if (node.hasAttr("ignore_index"))
      ignoreIndex = node.getInt("ignore_index", 0);
    node.setOutput(0, createWeightedLoss(node, logProbabilities, labels,
                                         weights, *reduction, ignoreIndex));
    if (fromLogits && node.isOutputUsed(1))
      node.setOutput(1, logProbabilities);
    return success();
  }
  // Without ignore_index no label is ignored; no class index is this low.
  int64_t ignoreIndex =
      node.getInt("ignore_index", std::numeric_limits<int64_t>::min());
  ArrayRef<int64_t> labelShape = getShapeOf(labels);
  auto type = RankedTensorType::get(
      *reduction == LossReduction::none ? labelShape : ArrayRef<int64_t>{},
      getElementTypeOf(input));
  node.setOutput(0, LossOp::create(b, node.getLoc(), type, input, labels,
                                   *reduction, ignoreIndex)
                        .getResult());
  if (node.isOutputUsed(1))
    node.setOutput(
        1, LogSoftmaxOp::create(b, node.getLoc(), input.getType(), input, 1)
               .getResult());
  return success();
}

} // namespace

void mlir::dpc::onnx_import::addNeuralNetConverters(
    OpConverterMap &converters) {
  converters["MatMul"] = convertMatMul;
  converters["Gemm"] = convertGemm;
  converters["Conv"] = convertConv;
  converters["ConvTranspose"] = convertConvTranspose;
  converters["Resize"] = convertResize;
  converters["Upsample"] = convertResize;
  converters["MaxPool"] = convertPool<MaxPool2DOp>;
  converters["AveragePool"] = convertPool<AvgPool2DOp>;
  converters["GlobalAveragePool"] = convertGlobalPool<ReduceMeanOp>;
  converters["GlobalMaxPool"] = convertGlobalPool<ReduceMaxOp>;
  converters["ArgMax"] = convertArgReduce<ArgMaxOp>;
  converters["ArgMin"] = convertArgReduce<ArgMinOp>;
  converters["ReduceSum"] = convertReduce<ReduceSumOp>;
  converters["ReduceMean"] = convertReduce<ReduceMeanOp>;
  converters["ReduceMax"] = convertReduce<ReduceMaxOp>;
  converters["ReduceMin"] = convertReduce<ReduceMinOp>;
  converters["ReduceSumSquare"] =
      convertReduce<ReduceSumOp, ReduceKind::SumSquare>;
  converters["ReduceL1"] = convertReduce<ReduceSumOp, ReduceKind::L1>;
  converters["ReduceL2"] = convertReduce<ReduceSumOp, ReduceKind::L2>;
  converters["ReduceLogSum"] = convertReduce<ReduceSumOp, ReduceKind::LogSum>;
  converters["ReduceLogSumExp"] =
      convertReduce<ReduceSumOp, ReduceKind::LogSumExp>;
  converters["Softmax"] = convertSoftmax<SoftmaxOp>;
  converters["LogSoftmax"] = convertSoftmax<LogSoftmaxOp>;
  converters["LayerNormalization"] = convertLayerNormalization;
  converters["BatchNormalization"] = convertBatchNormalization;
  converters["InstanceNormalization"] = convertInstanceNormalization;
  converters["MeanVarianceNormalization"] = convertMeanVarianceNormalization;
  converters["Hardmax"] = convertHardmax;
  converters["Dropout"] = convertDropout;
  converters["SoftmaxCrossEntropyLoss"] = convertLoss<SoftmaxCrossEntropyOp>;
  converters["NegativeLogLikelihoodLoss"] = convertLoss<NllLossOp>;
}

const OpConverterMap &mlir::dpc::onnx_import::getOpConverters() {
  static const OpConverterMap converters = [] {
    OpConverterMap map;
    addElementwiseConverters(map);
    addShapeConverters(map);
    addNdIndexConverters(map);
    addEinsumConverter(map);
    addRecurrentConverters(map);
    addControlFlowConverters(map);
    addNeuralNetConverters(map);
    return map;
  }();
  return converters;
}
