//===- DpcOps.cpp - Verifiers, folders and syntax of dpc ops --------------===//
//
// Each verifier checks the numbered constraints of its op's specification
// (DpcOps.td) and names the constraint in its message, so that a failing
// lit test points at the rule it breaks.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dpc;

static RankedTensorType getTensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Prints a shape as `[2, 3]` for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
mlir::dpc::getBroadcastShape(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [i, size] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + i];
      if (size == out || size == 1)
        continue;
      if (out != 1)
        return failure();
      out = size;
    }
  }
  return result;
}

LogicalResult mlir::dpc::verifyBroadcastingOp(Operation *op,
                                              ArrayRef<Value> data,
                                              Type resultElementType) {
  Type elementType = getTensorType(data.front()).getElementType();
  for (Value value : data)
    if (getTensorType(value).getElementType() != elementType)
      return op->emitOpError("operands have different element types (C1)");
  auto resultType = getTensorType(op->getResult(0));
  if (resultType.getElementType() != resultElementType)
    return op->emitOpError("result element type ")
           << resultType.getElementType() << " should be " << resultElementType
           << " (C1)";

  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value operand : op->getOperands())
    shapes.push_back(getTensorType(operand).getShape());
  FailureOr<SmallVector<int64_t>> shape = getBroadcastShape(shapes);
  if (failed(shape)) {
    InFlightDiagnostic diag = op->emitOpError("operand shapes");
    for (ArrayRef<int64_t> operandShape : shapes)
      diag << " " << formatShape(operandShape);
    return diag << " are not broadcast-compatible (C2)";
  }
  if (resultType.getShape() != ArrayRef<int64_t>(*shape))
    return op->emitOpError("result shape ")
           << formatShape(resultType.getShape())
           << " is not the broadcast shape " << formatShape(*shape) << " (C3)";
  return success();
}

LogicalResult CompareOp::verify() {
  return verifyBroadcastingOp(*this, {getLhs(), getRhs()},
                              IntegerType::get(getContext(), 1));
}

LogicalResult SelectOp::verify() {
  return verifyBroadcastingOp(*this, {getOnTrue(), getOnFalse()},
                              getOnTrue().getType().getElementType());
}

LogicalResult BroadcastToOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("element types differ (C1)");
  ArrayRef<int64_t> in = inputType.getShape(), out = resultType.getShape();
  bool compatible = in.size() <= out.size();
  for (size_t i = 0; compatible && i < in.size(); ++i) {
    int64_t outSize = out[out.size() - in.size() + i];
    compatible = in[i] == 1 || in[i] == outSize;
  }
  if (!compatible)
    return emitOpError("cannot broadcast ")
           << formatShape(in) << " to " << formatShape(out) << " (C2)";
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

void ConstantOp::print(OpAsmPrinter &printer) {
  printer.printOptionalAttrDict((*this)->getAttrs(), {"value"});
  printer << " ";
  printer.printAttribute(getValue());
}

ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  ElementsAttr value;
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseAttribute(value, "value", result.attributes))
    return failure();
  result.addTypes(value.getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getResult().getType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from result type "
           << getResult().getType() << " (C1)";
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  RankedTensorType lhsType = getLhs().getType(), rhsType = getRhs().getType();
  RankedTensorType resultType = getResult().getType();
  if (lhsType.getRank() < 2 || rhsType.getRank() < 2)
    return emitOpError("operands must have rank 2 or more (C1)");
  if (lhsType.getElementType() != rhsType.getElementType() ||
      lhsType.getElementType() != resultType.getElementType())
    return emitOpError("element types differ (C2)");
  ArrayRef<int64_t> lhs = lhsType.getShape(), rhs = rhsType.getShape();
  if (lhs.back() != rhs[rhs.size() - 2])
    return emitOpError("contracted dimensions differ: lhs has ")
           << lhs.back() << ", rhs has " << rhs[rhs.size() - 2] << " (C3)";
  FailureOr<SmallVector<int64_t>> batch =
      getBroadcastShape({lhs.drop_back(2), rhs.drop_back(2)});
  if (failed(batch))
    return emitOpError("batch dimensions ")
           << formatShape(lhs.drop_back(2)) << " and "
           << formatShape(rhs.drop_back(2))
           << " are not broadcast-compatible (C4)";
  SmallVector<int64_t> expected = *batch;
  expected.push_back(lhs[lhs.size() - 2]);
  expected.push_back(rhs.back());
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(resultType.getShape()) << " should be "
           << formatShape(expected) << " (C5)";
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

int64_t mlir::dpc::getWindowOutputSize(int64_t in, int64_t kernel,
                                       int64_t stride, int64_t padBegin,
                                       int64_t padEnd, int64_t dilation,
                                       bool ceilMode) {
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A window may not start inside the end padding.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

static bool allPositive(ArrayRef<int64_t> values) {
  return llvm::all_of(values, [](int64_t v) { return v > 0; });
}

static bool allNonNegative(ArrayRef<int64_t> values) {
  return llvm::all_of(values, [](int64_t v) { return v >= 0; });
}

LogicalResult Conv2DOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType filterType = getFilter().getType();
  if (inputType.getRank() != 4 || filterType.getRank() != 4)
    return emitOpError("input and filter must have rank 4 (C1)");
  ArrayRef<int64_t> strides = getStrides(), padding = getPadding(),
                    dilations = getDilations();
  int64_t groups = getGroups();
  if (strides.size() != 2 || dilations.size() != 2 || padding.size() != 4 ||
      !allPositive(strides) || !allPositive(dilations) ||
      !allNonNegative(padding) || groups <= 0)
    return emitOpError("needs 2 positive strides and dilations, 4 "
                       "non-negative paddings and positive groups (C2)");
  ArrayRef<int64_t> in = inputType.getShape(), filter = filterType.getShape();
  if (in[1] != filter[1] * groups || filter[0] % groups != 0)
    return emitOpError("input has ")
           << in[1] << " channels, but filter expects " << filter[1]
           << " per group in " << groups << " groups of " << filter[0]
           << " filters (C3)";
  Type elementType = inputType.getElementType();
  if (Value bias = getBias()) {
    auto biasType = getTensorType(bias);
    if (biasType.getShape() != ArrayRef<int64_t>{filter[0]})
      return emitOpError("bias shape ")
             << formatShape(biasType.getShape()) << " should be [" << filter[0]
             << "] (C4)";
    if (biasType.getElementType() != elementType)
      return emitOpError("element types differ (C5)");
  }
  if (filterType.getElementType() != elementType ||
      getResult().getType().getElementType() != elementType)
    return emitOpError("element types differ (C5)");
  SmallVector<int64_t> expected = {in[0], filter[0]};
  for (int d = 0; d < 2; ++d)
    expected.push_back(getWindowOutputSize(in[2 + d], filter[2 + d], strides[d],
                                           padding[d], padding[2 + d],
                                           dilations[d],
                                           /*ceilMode=*/false));
  if (expected[2] <= 0 || expected[3] <= 0 ||
      getResult().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(getResult().getType().getShape()) << " should be "
           << formatShape(expected) << " (C6)";
  return success();
}

LogicalResult Conv2DFilterGradOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType gradType = getOutGrad().getType();
  RankedTensorType resultType = getResult().getType();
  if (inputType.getRank() != 4 || gradType.getRank() != 4 ||
      resultType.getRank() != 4)
    return emitOpError("input, out_grad and result must have rank 4 (C1)");
  ArrayRef<int64_t> strides = getStrides(), padding = getPadding(),
                    dilations = getDilations();
  int64_t groups = getGroups();
  if (strides.size() != 2 || dilations.size() != 2 || padding.size() != 4 ||
      !allPositive(strides) || !allPositive(dilations) ||
      !allNonNegative(padding) || groups <= 0)
    return emitOpError("needs 2 positive strides and dilations, 4 "
                       "non-negative paddings and positive groups (C2)");
  ArrayRef<int64_t> in = inputType.getShape(), out = gradType.getShape(),
                    filter = resultType.getShape();
  if (in[1] % groups != 0 || out[1] % groups != 0 || filter[0] != out[1] ||
      filter[1] != in[1] / groups)
    return emitOpError("result shape ")
           << formatShape(filter) << " does not fit " << in[1] << " input and "
           << out[1] << " output channels in " << groups << " groups (C3)";
  SmallVector<int64_t> expected = {in[0], out[1]};
  for (int d = 0; d < 2; ++d)
    expected.push_back(getWindowOutputSize(in[2 + d], filter[2 + d], strides[d],
                                           padding[d], padding[2 + d],
                                           dilations[d],
                                           /*ceilMode=*/false));
  if (out != ArrayRef<int64_t>(expected))
    return emitOpError("out_grad shape ") << formatShape(out) << " should be "
                                          << formatShape(expected) << " (C4)";
  Type elementType = inputType.getElementType();
  if (gradType.getElementType() != elementType ||
      resultType.getElementType() != elementType)
    return emitOpError("element types differ (C5)");
  return success();
}

/// Output size of a transposed convolution along one dimension.
static int64_t getTransposedOutputSize(int64_t in, int64_t kernel,
                                       int64_t stride, int64_t padBegin,
                                       int64_t padEnd, int64_t dilation,
                                       int64_t outputPadding) {
  return (in - 1) * stride - padBegin - padEnd + dilation * (kernel - 1) +
         outputPadding + 1;
}

LogicalResult ConvTranspose2DOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType filterType = getFilter().getType();
  if (inputType.getRank() != 4 || filterType.getRank() != 4)
    return emitOpError("input and filter must have rank 4 (C1)");
  ArrayRef<int64_t> strides = getStrides(), padding = getPadding(),
                    dilations = getDilations(),
                    outputPadding = getOutputPadding();
  int64_t groups = getGroups();
  if (strides.size() != 2 || dilations.size() != 2 || padding.size() != 4 ||
      outputPadding.size() != 2 || !allPositive(strides) ||
      !allPositive(dilations) || !allNonNegative(padding) ||
      !allNonNegative(outputPadding) || groups <= 0)
    return emitOpError("needs 2 positive strides and dilations, 4 paddings "
                       "and 2 output paddings that are non-negative, and "
                       "positive groups (C2)");
  ArrayRef<int64_t> in = inputType.getShape(), filter = filterType.getShape();
  if (filter[0] != in[1] || in[1] % groups != 0)
    return emitOpError("input has ")
           << in[1] << " channels, filter has " << filter[0] << " in " << groups
           << " groups (C3)";
  int64_t outChannels = filter[1] * groups;
  Type elementType = inputType.getElementType();
  if (Value bias = getBias()) {
    auto biasType = getTensorType(bias);
    if (biasType.getShape() != ArrayRef<int64_t>{outChannels})
      return emitOpError("bias shape ")
             << formatShape(biasType.getShape()) << " should be ["
             << outChannels << "] (C4)";
    if (biasType.getElementType() != elementType)
      return emitOpError("element types differ (C5)");
  }
  if (filterType.getElementType() != elementType ||
      getResult().getType().getElementType() != elementType)
    return emitOpError("element types differ (C5)");
  SmallVector<int64_t> expected = {in[0], outChannels};
  for (int d = 0; d < 2; ++d)
    expected.push_back(getTransposedOutputSize(
        in[2 + d], filter[2 + d], strides[d], padding[d], padding[2 + d],
        dilations[d], outputPadding[d]));
  if (expected[2] <= 0 || expected[3] <= 0 ||
      getResult().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << formatShape(getResult().getType().getShape()) << " should be "
           << formatShape(expected) << " (C6)";
  return success();
}

/// The constraints resize and resize_grad share: `source` is the tensor
/// resampled, `resized` the resampled one.
template <typename OpTy>
static LogicalResult verifyResize(OpTy op, RankedTensorType source,
                                  RankedTensorType resized) {
  ArrayRef<double> scales = op.getScales();
  if (static_cast<int64_t>(scales.size()) != source.getRank() ||
      !llvm::all_of(scales, [](double s) { return s > 0.0; }))
    return op.emitOpError("needs one positive scale per dimension (C1)");
  if (resized.getRank() != source.getRank() ||
      resized.getElementType() != source.getElementType())
    return op.emitOpError("type ")
           << resized << " should have the rank and element type of " << source
           << " (C2)";
  bool validModes = llvm::is_contained({"nearest", "linear"}, op.getMode()) &&
                    llvm::is_contained({"half_pixel", "pytorch_half_pixel",
                                        "asymmetric", "align_corners"},
                                       op.getCoordinateMode()) &&
                    llvm::is_contained({"round_prefer_floor",
                                        "round_prefer_ceil", "floor", "ceil"},
                                       op.getNearestMode());
  if (!validModes)
    return op.emitOpError("unknown mode, coordinate_mode or nearest_mode (C3)");
  return success();
}

LogicalResult ResizeOp::verify() {
  return verifyResize(*this, getInput().getType(), getResult().getType());
}

LogicalResult ResizeGradOp::verify() {
  return verifyResize(*this, getResult().getType(), getOutGrad().getType());
}

/// Checks pooling window attributes (C2 of the pooling ops).
static LogicalResult verifyPoolWindow(Operation *op, ArrayRef<int64_t> kernel,
                                      ArrayRef<int64_t> strides,
                                      ArrayRef<int64_t> padding,
                                      ArrayRef<int64_t> dilations) {
  bool valid = kernel.size() == 2 && strides.size() == 2 &&
               dilations.size() == 2 && padding.size() == 4 &&
               allPositive(kernel) && allPositive(strides) &&
               allPositive(dilations) && allNonNegative(padding);
  for (int d = 0; valid && d < 2; ++d)
    valid = padding[d] < kernel[d] && padding[2 + d] < kernel[d];
  if (!valid)
    return op->emitOpError(
        "needs 2 positive kernel sizes, strides and dilations and 4 "
        "non-negative paddings smaller than the kernel (C2)");
  return success();
}

/// The pooled shape of an NCHW `input`.
static SmallVector<int64_t>
getPooledShape(ArrayRef<int64_t> in, ArrayRef<int64_t> kernel,
               ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
               ArrayRef<int64_t> dilations, bool ceilMode) {
  SmallVector<int64_t> shape = {in[0], in[1]};
  for (int d = 0; d < 2; ++d)
    shape.push_back(getWindowOutputSize(in[2 + d], kernel[d], strides[d],
                                        padding[d], padding[2 + d],
                                        dilations[d], ceilMode));
  return shape;
}

/// Shared verifier of max_pool2d and avg_pool2d.
template <typename PoolOp> static LogicalResult verifyPool2D(PoolOp op) {
  RankedTensorType inputType = op.getInput().getType();
  if (inputType.getRank() != 4)
    return op.emitOpError("input must have rank 4 (C1)");
  if (failed(verifyPoolWindow(op, op.getKernelShape(), op.getStrides(),
                              op.getPadding(), op.getDilations())))
    return failure();
  SmallVector<int64_t> expected =
      getPooledShape(inputType.getShape(), op.getKernelShape(), op.getStrides(),
                     op.getPadding(), op.getDilations(), op.getCeilMode());
  RankedTensorType resultType = op.getResult().getType();
  if (expected[2] <= 0 || expected[3] <= 0 ||
      resultType.getShape() != ArrayRef<int64_t>(expected) ||
      resultType.getElementType() != inputType.getElementType())
    return op.emitOpError("result type ")
           << resultType << " should have shape " << formatShape(expected)
           << " and element type " << inputType.getElementType() << " (C3)";
  return success();
}

LogicalResult MaxPool2DOp::verify() { return verifyPool2D(*this); }
LogicalResult AvgPool2DOp::verify() { return verifyPool2D(*this); }

LogicalResult MaxPool2DGradOp::verify() {
  RankedTensorType inputType = getInput().getType();
  if (inputType.getRank() != 4)
    return emitOpError("input must have rank 4 (C1)");
  if (failed(verifyPoolWindow(*this, getKernelShape(), getStrides(),
                              getPadding(), getDilations())))
    return failure();
  SmallVector<int64_t> expected =
      getPooledShape(inputType.getShape(), getKernelShape(), getStrides(),
                     getPadding(), getDilations(), getCeilMode());
  if (getOutGrad().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("out_grad shape ")
           << formatShape(getOutGrad().getType().getShape()) << " should be "
           << formatShape(expected) << " (C3)";
  return success();
}

LogicalResult AvgPool2DGradOp::verify() {
  RankedTensorType resultType = getResult().getType();
  if (resultType.getRank() != 4 ||
      resultType.getElementType() != getOutGrad().getType().getElementType())
    return emitOpError("result must have rank 4 and the element type of "
                       "out_grad (C1)");
  if (failed(verifyPoolWindow(*this, getKernelShape(), getStrides(),
                              getPadding(), getDilations())))
    return failure();
  SmallVector<int64_t> expected =
      getPooledShape(resultType.getShape(), getKernelShape(), getStrides(),
                     getPadding(), getDilations(), getCeilMode());
  if (getOutGrad().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("out_grad shape ")
           << formatShape(getOutGrad().getType().getShape()) << " should be "
           << formatShape(expected) << " (C3)";
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

/// Shared verifier of the reduce_* ops.
static LogicalResult verifyReduction(Operation *op, ArrayRef<int64_t> dims,
                                     bool keepDims) {
  auto inputType = getTensorType(op->getOperand(0));
  auto resultType = getTensorType(op->getResult(0));
  for (auto [i, dim] : llvm::enumerate(dims))
    if (dim < 0 || dim >= inputType.getRank() || (i > 0 && dim <= dims[i - 1]))
      return op->emitOpError("dims ")
             << formatShape(dims) << " must be strictly increasing within [0, "
             << inputType.getRank() << ") (C1)";
  if (inputType.getElementType() != resultType.getElementType())
    return op->emitOpError("element types differ (C2)");
  SmallVector<int64_t> expected;
  for (auto [dim, size] : llvm::enumerate(inputType.getShape())) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(dim)))
      expected.push_back(size);
    else if (keepDims)
      expected.push_back(1);
  }
  if (resultType.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result shape ")
           << formatShape(resultType.getShape()) << " should be "
           << formatShape(expected) << " (C3)";
  return success();
}

LogicalResult ReduceSumOp::verify() {
  return verifyReduction(*this, getDims(), getKeepDims());
}
LogicalResult ReduceMeanOp::verify() {
  return verifyReduction(*this, getDims(), getKeepDims());
}
LogicalResult ReduceMaxOp::verify() {
  return verifyReduction(*this, getDims(), getKeepDims());
}
LogicalResult ReduceMinOp::verify() {
  return verifyReduction(*this, getDims(), getKeepDims());
}

static LogicalResult verifyArgReduction(Operation *op, int64_t axis,
                                        bool keepDims) {
  auto inputType = getTensorType(op->getOperand(0));
  auto resultType = getTensorType(op->getResult(0));
  if (axis < 0 || axis >= inputType.getRank())
    return op->emitOpError("axis ") << axis << " is out of range [0, "
                                    << inputType.getRank() << ") (C1)";
  SmallVector<int64_t> expected(inputType.getShape());
  if (keepDims)
    expected[axis] = 1;
  else
    expected.erase(expected.begin() + axis);
  if (!resultType.getElementType().isSignlessInteger(64) ||
      resultType.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result type ")
           << resultType << " should be an i64 tensor of shape "
           << formatShape(expected) << " (C2)";
  return success();
}

LogicalResult ArgMaxOp::verify() {
  return verifyArgReduction(*this, getAxis(), getKeepDims());
}
LogicalResult ArgMinOp::verify() {
  return verifyArgReduction(*this, getAxis(), getKeepDims());
}

LogicalResult TopKOp::verify() {
  auto inputType = getTensorType(getInput());
  int64_t k = getKAttr().getInt();
  if (inputType.getRank() != 1 || k < 1 || k > inputType.getDimSize(0))
    return emitOpError("takes k = ")
           << k << " of " << inputType
           << ": it needs a vector and 1 <= k <= its size (C1)";
  auto values = getTensorType(getValues());
  auto indices = getTensorType(getIndices());
  SmallVector<int64_t> shape = {k};
  if (values.getShape() != ArrayRef<int64_t>(shape) ||
      values.getElementType() != inputType.getElementType() ||
      indices.getShape() != ArrayRef<int64_t>(shape) ||
      !indices.getElementType().isSignlessInteger(64))
    return emitOpError("results ")
           << values << " and " << indices << " should be "
           << inputType.clone(shape) << " and tensor<" << k << "xi64> (C2)";
  return success();
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank,
                                StringRef constraint) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ") << axis << " is out of range [0, " << rank
                                    << ") (" << constraint << ")";
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType().getRank(), "C1");
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType().getRank(), "C1");
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType inputType = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), inputType.getRank(), "C1")))
    return failure();
  RankedTensorType scaleType = getScale().getType();
  ArrayRef<int64_t> normalized = inputType.getShape().drop_front(getAxis());
  if (scaleType.getShape() != normalized)
    return emitOpError("scale shape ")
           << formatShape(scaleType.getShape()) << " should be "
           << formatShape(normalized) << " (C2)";
  if (Value bias = getBias(); bias && bias.getType() != scaleType)
    return emitOpError("bias type ")
           << bias.getType() << " differs from scale type " << scaleType
           << " (C3)";
  if (scaleType.getElementType() != inputType.getElementType())
    return emitOpError("element types differ (C4)");
  return success();
}

LogicalResult BatchNormOp::verify() {
  RankedTensorType inputType = getInput().getType();
  if (inputType.getRank() < 2)
    return emitOpError("input must have rank 2 or more (C1)");
  RankedTensorType scaleType = getScale().getType();
  if (scaleType.getShape() != ArrayRef<int64_t>{inputType.getDimSize(1)})
    return emitOpError("scale shape ")
           << formatShape(scaleType.getShape()) << " should be ["
           << inputType.getDimSize(1) << "] (C2)";
  if (scaleType.getElementType() != inputType.getElementType())
    return emitOpError("element types differ (C3)");
  float momentum = getMomentum().convertToFloat();
  if (!(momentum >= 0.0f && momentum <= 1.0f) ||
      !(getEpsilon().convertToFloat() > 0.0f))
    return emitOpError("momentum must be within [0, 1] and epsilon "
                       "positive (C4)");
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getResult().getType();
  if (inputType.getNumElements() != resultType.getNumElements())
    return emitOpError("cannot reshape ")
           << inputType.getNumElements() << " elements into "
           << resultType.getNumElements() << " (C1)";
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("element types differ (C2)");
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  // reshape(reshape(x)) is one reshape.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getResult().getType());
  return {};
}

LogicalResult TransposeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  ArrayRef<int64_t> permutation = getPermutation();
  SmallVector<bool> seen(inputType.getRank(), false);
  bool valid = static_cast<int64_t>(permutation.size()) == inputType.getRank();
  for (int64_t dim : permutation) {
    valid = valid && dim >= 0 && dim < inputType.getRank() && !seen[dim];
    if (valid)
      seen[dim] = true;
  }
  if (!valid)
    return emitOpError("permutation ")
           << formatShape(permutation) << " is not a permutation of [0, "
           << inputType.getRank() << ") (C1)";
  SmallVector<int64_t> expected;
  for (int64_t dim : permutation)
    expected.push_back(inputType.getDimSize(dim));
  RankedTensorType resultType = getResult().getType();
  if (resultType.getShape() != ArrayRef<int64_t>(expected) ||
      resultType.getElementType() != inputType.getElementType())
    return emitOpError("result type ") << resultType << " should have shape "
                                       << formatShape(expected) << " (C2)";
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input (C1)");
  RankedTensorType resultType = getResult().getType();
  int64_t rank = resultType.getRank();
  for (Value input : getInputs()) {
    auto type = getTensorType(input);
    if (type.getRank() != rank ||
        type.getElementType() != resultType.getElementType())
      return emitOpError("inputs and result differ in rank or element "
                         "type (C2)");
  }
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, rank, "C3")))
    return failure();
  int64_t total = 0;
  for (Value input : getInputs()) {
    ArrayRef<int64_t> shape = getTensorType(input).getShape();
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && shape[d] != resultType.getDimSize(d))
        return emitOpError("dimension ")
               << d << " differs among inputs and result (C4)";
    total += shape[axis];
  }
  if (total != resultType.getDimSize(axis))
    return emitOpError("result has ")
           << resultType.getDimSize(axis) << " on axis " << axis
           << ", but the inputs add up to " << total << " (C5)";
  return success();
}

LogicalResult SliceOp::verify() {
  RankedTensorType inputType = getInput().getType();
  ArrayRef<int64_t> start = getStart(), limit = getLimit(),
                    stride = getStride();
  size_t rank = inputType.getRank();
  if (start.size() != rank || limit.size() != rank || stride.size() != rank)
    return emitOpError("start, limit and stride need one entry per "
                       "dimension (C1)");
  SmallVector<int64_t> expected;
  for (size_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] > limit[d] ||
        limit[d] > inputType.getDimSize(d) || stride[d] < 1)
      return emitOpError("dimension ")
             << d << ": needs 0 <= start (" << start[d] << ") <= limit ("
             << limit[d] << ") <= size (" << inputType.getDimSize(d)
             << ") and stride (" << stride[d] << ") >= 1 (C2)";
    expected.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
  }
  RankedTensorType resultType = getResult().getType();
  if (resultType.getShape() != ArrayRef<int64_t>(expected) ||
      resultType.getElementType() != inputType.getElementType())
    return emitOpError("result type ") << resultType << " should have shape "
                                       << formatShape(expected) << " (C3)";
  return success();
}

LogicalResult SplitOp::verify() {
  RankedTensorType inputType = getInput().getType();
  int64_t axis = getAxis();
  if (getResults().empty())
    return emitOpError("needs at least one result (C1)");
  if (failed(verifyAxis(*this, axis, inputType.getRank(), "C1")))
    return failure();
  int64_t total = 0;
  for (Value result : getResults()) {
    auto type = getTensorType(result);
    bool agrees = type.getRank() == inputType.getRank() &&
                  type.getElementType() == inputType.getElementType();
    for (int64_t d = 0; agrees && d < type.getRank(); ++d)
      agrees = d == axis || type.getDimSize(d) == inputType.getDimSize(d);
    if (!agrees)
      return emitOpError("result ")
             << type << " does not agree with input " << inputType
             << " outside axis " << axis << " (C2)";
    total += type.getDimSize(axis);
  }
  if (total != inputType.getDimSize(axis))
    return emitOpError("results add up to ")
           << total << " on axis " << axis << ", input has "
           << inputType.getDimSize(axis) << " (C3)";
  return success();
}

/// The shape of gathering `indices` along `axis` of `shape`: the indices'
/// shape replaces that dimension (scatter_add's updates have it too).
static SmallVector<int64_t> getGatheredShape(ArrayRef<int64_t> shape,
                                             int64_t axis,
                                             ArrayRef<int64_t> indices) {
  SmallVector<int64_t> gathered(shape.take_front(axis));
  llvm::append_range(gathered, indices);
  llvm::append_range(gathered, shape.drop_front(axis + 1));
  return gathered;
}

LogicalResult GatherOp::verify() {
  RankedTensorType inputType = getInput().getType();
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, inputType.getRank(), "C1")))
    return failure();
  SmallVector<int64_t> expected = getGatheredShape(
      inputType.getShape(), axis, getIndices().getType().getShape());
  RankedTensorType resultType = getResult().getType();
  if (resultType.getShape() != ArrayRef<int64_t>(expected) ||
      resultType.getElementType() != inputType.getElementType())
    return emitOpError("result type ")
           << resultType << " should have shape " << formatShape(expected)
           << " and element type " << inputType.getElementType() << " (C2)";
  return success();
}

/// Whether `small` is no larger than `large` on every dimension but `axis`.
static bool fitsBesideAxis(ArrayRef<int64_t> small, ArrayRef<int64_t> large,
                           int64_t axis) {
  for (auto [d, sizes] : llvm::enumerate(llvm::zip_equal(small, large)))
    if (int64_t(d) != axis && std::get<0>(sizes) > std::get<1>(sizes))
      return false;
  return true;
}

LogicalResult GatherElementsOp::verify() {
  RankedTensorType inputType = getInput().getType();
  ArrayRef<int64_t> indices = getIndices().getType().getShape();
  int64_t axis = getAxis();
  if (int64_t(indices.size()) != inputType.getRank())
    return emitOpError("indices have rank ") << indices.size() << ", the input "
                                             << inputType.getRank() << " (C1)";
  if (failed(verifyAxis(*this, axis, inputType.getRank(), "C1")))
    return failure();
  if (!fitsBesideAxis(indices, inputType.getShape(), axis))
    return emitOpError("indices ")
           << formatShape(indices) << " are larger than the input "
           << formatShape(inputType.getShape()) << " beside axis " << axis
           << " (C2)";
  RankedTensorType resultType = getResult().getType();
  if (resultType.getShape() != indices ||
      resultType.getElementType() != inputType.getElementType())
    return emitOpError("result type ")
           << resultType << " should have shape " << formatShape(indices)
           << " and element type " << inputType.getElementType() << " (C3)";
  return success();
}

LogicalResult ScatterAddElementsOp::verify() {
  RankedTensorType resultType = getResult().getType();
  ArrayRef<int64_t> indices = getIndices().getType().getShape();
  int64_t axis = getAxis();
  if (int64_t(indices.size()) != resultType.getRank() ||
      getUpdates().getType().getRank() != resultType.getRank())
    return emitOpError("updates, indices and result differ in rank (C1)");
  if (failed(verifyAxis(*this, axis, resultType.getRank(), "C1")))
    return failure();
  RankedTensorType updatesType = getUpdates().getType();
  if (updatesType.getShape() != indices ||
      updatesType.getElementType() != resultType.getElementType() ||
      !fitsBesideAxis(indices, resultType.getShape(), axis))
    return emitOpError("updates type ")
           << updatesType << " should have the shape of the indices "
           << formatShape(indices) << ", no larger than the result beside "
           << "axis " << axis << ", and element type "
           << resultType.getElementType() << " (C2)";
  return success();
}

LogicalResult PadOp::verify() {
  RankedTensorType inputType = getInput().getType();
  ArrayRef<int64_t> low = getLow(), high = getHigh(), interior = getInterior();
  size_t rank = inputType.getRank();
  if (low.size() != rank || high.size() != rank || interior.size() != rank ||
      !allNonNegative(low) || !allNonNegative(high) ||
      !allNonNegative(interior))
    return emitOpError("low, high and interior need one non-negative entry "
                       "per dimension (C1)");
  SmallVector<int64_t> expected;
  for (size_t d = 0; d < rank; ++d) {
    int64_t size = inputType.getDimSize(d);
    expected.push_back(low[d] + high[d] + size +
                       std::max<int64_t>(size - 1, 0) * interior[d]);
  }
  RankedTensorType resultType = getResult().getType();
  if (resultType.getShape() != ArrayRef<int64_t>(expected) ||
      resultType.getElementType() != inputType.getElementType())
    return emitOpError("result type ") << resultType << " should have shape "
                                       << formatShape(expected) << " (C2)";
  return success();
}

LogicalResult ScatterAddOp::verify() {
  RankedTensorType resultType = getResult().getType();
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, resultType.getRank(), "C1")))
    return failure();
  SmallVector<int64_t> expected = getGatheredShape(
      resultType.getShape(), axis, getIndices().getType().getShape());
  RankedTensorType updatesType = getUpdates().getType();
  if (updatesType.getShape() != ArrayRef<int64_t>(expected) ||
      updatesType.getElementType() != resultType.getElementType())
    return emitOpError("updates type ")
           << updatesType << " should have shape " << formatShape(expected)
           << " and element type " << resultType.getElementType() << " (C2)";
  return success();
}

//===----------------------------------------------------------------------===//
// Regularization and losses
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("ratio ") << ratio << " is not within [0, 1) (C1)";
  return success();
}

/// Shared verifier of the loss ops.
template <typename LossOp> static LogicalResult verifyLoss(LossOp op) {
  RankedTensorType inputType = op.getInput().getType();
  ArrayRef<int64_t> in = inputType.getShape();
  SmallVector<int64_t> labelShape;
  if (in.size() >= 2) {
    labelShape.push_back(in[0]);
    llvm::append_range(labelShape, in.drop_front(2));
  }
  ArrayRef<int64_t> labels = op.getLabels().getType().getShape();
  if (in.size() < 2 || labels != ArrayRef<int64_t>(labelShape))
    return op.emitOpError("labels shape ")
           << formatShape(labels) << " does not match input shape "
           << formatShape(in) << " without its class dimension (C1)";
  RankedTensorType resultType = op.getResult().getType();
  ArrayRef<int64_t> expected;
  if (op.getReduction() == LossReduction::none)
    expected = labels;
  if (resultType.getElementType() != inputType.getElementType() ||
      resultType.getShape() != expected)
    return op.emitOpError("result type ")
           << resultType << " should have shape " << formatShape(expected)
           << " and element type " << inputType.getElementType() << " (C2)";
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() { return verifyLoss(*this); }
LogicalResult NllLossOp::verify() { return verifyLoss(*this); }

#define GET_OP_CLASSES
#include "dpc/Dialect/Dpc/IR/DpcOps.cpp.inc"
