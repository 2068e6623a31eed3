//===- NodeContext.cpp - One ONNX node seen by its converter --------------===//

#include "OpConverters.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;

NodeContext::NodeContext(GraphImporter &importer, const onnx::NodeProto &node,
                         int64_t opset)
    : importer(importer), node(node), opset(opset),
      loc(NameLoc::get(
          StringAttr::get(importer.getContext(),
                          node.name().empty() ? node.op_type() : node.name()),
          importer.getFileLoc())) {}

bool NodeContext::hasInput(unsigned i) const {
  return i < static_cast<unsigned>(node.input_size()) && !node.input(i).empty();
}

Value NodeContext::getInput(unsigned i, TensorUse use) {
  if (!hasInput(i)) {
    emitError() << "needs input #" << i;
    return {};
  }
  return importer.getValue(node.input(i), loc, use);
}

const Literal *NodeContext::getLiteral(unsigned i, bool forceStored) {
  return hasInput(i) ? importer.getLiteral(node.input(i), forceStored)
                     : nullptr;
}

const Literal *NodeContext::requireLiteral(unsigned i, StringRef what) {
  if (!hasInput(i)) {
    emitError() << "needs its " << what << " (input #" << i << ")";
    return nullptr;
  }
  if (const Literal *literal = importer.getLiteral(node.input(i),
                                                   /*forceStored=*/true))
    return literal;
  emitError() << "its " << what << " ('" << node.input(i)
              << "') must be known at import time; dpc needs static shapes";
  return nullptr;
}

bool NodeContext::allInputsLiteral() {
  for (unsigned i = 0; i < getNumInputs(); ++i)
    if (hasInput(i) && !getLiteral(i))
      return false;
  return true;
}

std::optional<RankedTensorType> NodeContext::getInputType(unsigned i) {
  if (!hasInput(i)) {
    emitError() << "needs input #" << i;
    return std::nullopt;
  }
  std::optional<RankedTensorType> type = importer.getType(node.input(i));
  if (!type)
    emitError() << "input '" << node.input(i)
                << "' is not produced by any node or graph input";
  return type;
}

const onnx::AttributeProto *NodeContext::getAttr(StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

bool NodeContext::hasAttr(StringRef name) const { return getAttr(name); }

int64_t NodeContext::getInt(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *attr = getAttr(name);
  return attr ? attr->i() : defaultValue;
}

float NodeContext::getFloat(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *attr = getAttr(name);
  return attr ? attr->f() : defaultValue;
}

std::string NodeContext::getString(StringRef name,
                                   StringRef defaultValue) const {
  const onnx::AttributeProto *attr = getAttr(name);
  return attr ? attr->s() : defaultValue.str();
}

std::vector<int64_t>
NodeContext::getInts(StringRef name, std::vector<int64_t> defaultValue) const {
  const onnx::AttributeProto *attr = getAttr(name);
  if (!attr)
    return defaultValue;
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

bool NodeContext::isOutputUsed(unsigned i) const {
  return i < static_cast<unsigned>(node.output_size()) &&
         !node.output(i).empty() && importer.isUsed(node.output(i));
}

void NodeContext::setOutput(unsigned i, Value value) {
  if (i < static_cast<unsigned>(node.output_size()) && !node.output(i).empty())
    importer.setValue(node.output(i), value);
}

void NodeContext::setOutput(unsigned i, Literal literal) {
  if (i < static_cast<unsigned>(node.output_size()) && !node.output(i).empty())
    importer.setLiteral(node.output(i), std::move(literal));
}

InFlightDiagnostic NodeContext::emitError() {
  InFlightDiagnostic diag = mlir::emitError(loc);
  diag << "node '" << node.name() << "' (" << node.op_type() << "): ";
  return diag;
}

std::optional<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank) {
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    emitError() << "axis " << axis << " is out of range for rank " << rank;
    return std::nullopt;
  }
  return normalized;
}

std::optional<SmallVector<int64_t>>
NodeContext::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> dims;
  for (int64_t axis : axes) {
    std::optional<int64_t> d = normalizeAxis(axis, rank);
    if (!d)
      return std::nullopt;
    if (!llvm::is_contained(dims, *d))
      dims.push_back(*d);
  }
  llvm::sort(dims);
  return dims;
}

Value NodeContext::createCompare(ComparePredicate predicate, Value lhs,
                                 Value rhs) {
  FailureOr<SmallVector<int64_t>> shape =
      getBroadcastShape({getShapeOf(lhs), getShapeOf(rhs)});
  if (failed(shape)) {
    emitError() << "operand shapes " << lhs.getType() << " and "
                << rhs.getType() << " do not broadcast";
    return {};
  }
  auto type =
      RankedTensorType::get(*shape, IntegerType::get(lhs.getContext(), 1));
  return CompareOp::create(getBuilder(), loc, type, predicate, lhs, rhs);
}

Value NodeContext::createSelect(Value condition, Value onTrue, Value onFalse) {
  FailureOr<SmallVector<int64_t>> shape = getBroadcastShape(
      {getShapeOf(condition), getShapeOf(onTrue), getShapeOf(onFalse)});
  if (failed(shape)) {
    emitError() << "operand shapes do not broadcast";
    return {};
  }
  auto type = RankedTensorType::get(*shape, getElementTypeOf(onTrue));
  return SelectOp::create(getBuilder(), loc, type, condition, onTrue, onFalse);
}

Value NodeContext::createReshape(Value input, ArrayRef<int64_t> shape) {
  if (getShapeOf(input) == shape)
    return input;
  auto type = RankedTensorType::get(shape, getElementTypeOf(input));
  return ReshapeOp::create(getBuilder(), loc, type, input);
}

Value NodeContext::createIndexSlice(Value value, int64_t dim, int64_t index) {
  ArrayRef<int64_t> shape = getShapeOf(value);
  if (shape[dim] != 1) {
    SmallVector<int64_t> start(shape.size(), 0), limit(shape),
        stride(shape.size(), 1), sliced(shape);
    start[dim] = index;
    limit[dim] = index + 1;
    sliced[dim] = 1;
    OpBuilder &b = getBuilder();
    value = SliceOp::create(
        b, loc, RankedTensorType::get(sliced, getElementTypeOf(value)), value,
        b.getDenseI64ArrayAttr(start), b.getDenseI64ArrayAttr(limit),
        b.getDenseI64ArrayAttr(stride));
  }
  SmallVector<int64_t> dropped(shape);
  dropped.erase(dropped.begin() + dim);
  return createReshape(value, dropped);
}

Value NodeContext::createStack(ArrayRef<Value> values, int64_t dim) {
  SmallVector<Value> expanded;
  SmallVector<int64_t> shape(getShapeOf(values[0]));
  shape.insert(shape.begin() + dim, 1);
  for (Value value : values)
    expanded.push_back(createReshape(value, shape));
  if (expanded.size() == 1)
    return expanded[0];
  shape[dim] = expanded.size();
  return ConcatOp::create(
      getBuilder(), loc,
      RankedTensorType::get(shape, getElementTypeOf(values[0])), expanded, dim);
}

Value NodeContext::createTranspose(Value input, ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(getShapeOf(input)[dim]);
  auto type = RankedTensorType::get(shape, getElementTypeOf(input));
  return TransposeOp::create(getBuilder(), loc, type, input,
                             getBuilder().getDenseI64ArrayAttr(permutation));
}

Value NodeContext::createBroadcast(Value input, ArrayRef<int64_t> shape) {
  if (getShapeOf(input) == shape)
    return input;
  auto type = RankedTensorType::get(shape, getElementTypeOf(input));
  return BroadcastToOp::create(getBuilder(), loc, type, input);
}

Value NodeContext::createScalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    element = FloatAttr::get(floatType, value);
  else
    element = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  return ConstantOp::create(getBuilder(), loc, type,
                            DenseElementsAttr::get(type, element));
}
