//===- GradientBuilder.cpp - Emitting gradient computations ---------------===//

#include "GradientBuilder.h"

using namespace mlir;
using namespace mlir::dpc;

Value GradientBuilder::scalar(double value, Value like) {
  Type elementType = getType(like).getElementType();
  auto type = RankedTensorType::get({}, elementType);
  Attribute element = llvm::isa<FloatType>(elementType)
                          ? Attribute(FloatAttr::get(elementType, value))
                          : Attribute(IntegerAttr::get(
                                elementType, static_cast<int64_t>(value)));
  return ConstantOp::create(builder, loc, type,
                            DenseElementsAttr::get(type, element));
}

Value GradientBuilder::filled(double value, Value like) {
  return broadcastTo(scalar(value, like), getType(like).getShape());
}

/// The result type of a broadcasting op on `lhs` and `rhs`.
static RankedTensorType getBroadcastType(Value lhs, Value rhs,
                                         Type elementType) {
  ArrayRef<int64_t> a = GradientBuilder::getType(lhs).getShape();
  ArrayRef<int64_t> b = GradientBuilder::getType(rhs).getShape();
  FailureOr<SmallVector<int64_t>> shape = getBroadcastShape({a, b});
  assert(succeeded(shape) && "gradient operands must broadcast");
  return RankedTensorType::get(*shape, elementType);
}

template <typename OpTy>
static Value createBinary(OpBuilder &builder, Location loc, Value lhs,
                          Value rhs) {
  return OpTy::create(
      builder, loc,
      getBroadcastType(lhs, rhs,
                       GradientBuilder::getType(lhs).getElementType()),
      lhs, rhs);
}

Value GradientBuilder::add(Value lhs, Value rhs) {
  if (!lhs)
    return rhs;
  if (!rhs)
    return lhs;
  return createBinary<AddOp>(builder, loc, lhs, rhs);
}

Value GradientBuilder::sub(Value lhs, Value rhs) {
  return createBinary<SubOp>(builder, loc, lhs, rhs);
}

Value GradientBuilder::mul(Value lhs, Value rhs) {
  return createBinary<MulOp>(builder, loc, lhs, rhs);
}

Value GradientBuilder::div(Value lhs, Value rhs) {
  return createBinary<DivOp>(builder, loc, lhs, rhs);
}

Value GradientBuilder::pow(Value lhs, Value rhs) {
  return createBinary<PowOp>(builder, loc, lhs, rhs);
}

Value GradientBuilder::neg(Value value) {
  return NegOp::create(builder, loc, value);
}

Value GradientBuilder::exp(Value value) {
  return ExpOp::create(builder, loc, value);
}

Value GradientBuilder::log(Value value) {
  return LogOp::create(builder, loc, value);
}

Value GradientBuilder::compare(ComparePredicate predicate, Value lhs,
                               Value rhs) {
  return CompareOp::create(builder, loc,
                           getBroadcastType(lhs, rhs, builder.getI1Type()),
                           predicate, lhs, rhs);
}

Value GradientBuilder::select(Value condition, Value onTrue, Value onFalse) {
  FailureOr<SmallVector<int64_t>> shape = getBroadcastShape(
      {getType(condition).getShape(), getType(onTrue).getShape(),
       getType(onFalse).getShape()});
  assert(succeeded(shape) && "select operands must broadcast");
  auto type = RankedTensorType::get(*shape, getType(onTrue).getElementType());
  return SelectOp::create(builder, loc, type, condition, onTrue, onFalse);
}

Value GradientBuilder::cast(Value value, Type elementType) {
  RankedTensorType type = getType(value);
  if (type.getElementType() == elementType)
    return value;
  return CastOp::create(builder, loc, type.clone(elementType), value);
}

Value GradientBuilder::reshape(Value value, ArrayRef<int64_t> shape) {
  if (getType(value).getShape() == shape)
    return value;
  return ReshapeOp::create(builder, loc, getType(value).clone(shape), value);
}

Value GradientBuilder::transpose(Value value, ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(getType(value).getDimSize(dim));
  return TransposeOp::create(builder, loc, getType(value).clone(shape), value,
                             builder.getDenseI64ArrayAttr(permutation));
}

Value GradientBuilder::broadcastTo(Value value, ArrayRef<int64_t> shape) {
  if (getType(value).getShape() == shape)
    return value;
  return BroadcastToOp::create(builder, loc, getType(value).clone(shape),
                               value);
}

Value GradientBuilder::reduceSum(Value value, ArrayRef<int64_t> dims,
                                 bool keepDims) {
  if (dims.empty())
    return value;
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(getType(value).getShape())) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      shape.push_back(size);
    else if (keepDims)
      shape.push_back(1);
  }
  return ReduceSumOp::create(builder, loc, getType(value).clone(shape), value,
                             builder.getDenseI64ArrayAttr(dims),
                             keepDims ? builder.getUnitAttr() : UnitAttr());
}

Value GradientBuilder::matmul(Value lhs, Value rhs) {
  ArrayRef<int64_t> a = getType(lhs).getShape(), b = getType(rhs).getShape();
  FailureOr<SmallVector<int64_t>> batch =
      getBroadcastShape({a.drop_back(2), b.drop_back(2)});
  assert(succeeded(batch) && "matmul batch dimensions must broadcast");
  SmallVector<int64_t> shape = *batch;
  shape.append({a[a.size() - 2], b.back()});
  return MatmulOp::create(builder, loc, getType(lhs).clone(shape), lhs, rhs);
}

Value GradientBuilder::unbroadcast(Value gradient, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = getType(gradient).getShape();
  if (from == shape)
    return gradient;
  // Sum the leading dimensions the operand lacks and the ones it has as 1.
  size_t offset = from.size() - shape.size();
  SmallVector<int64_t> dims;
  for (size_t d = 0; d < from.size(); ++d)
    if (d < offset || (shape[d - offset] == 1 && from[d] != 1))
      dims.push_back(d);
  return reshape(reduceSum(gradient, dims, /*keepDims=*/false), shape);
}

Value GradientBuilder::expandReduced(Value value, ArrayRef<int64_t> dims,
                                     ArrayRef<int64_t> shape, bool keptDims) {
  if (!keptDims) {
    SmallVector<int64_t> kept(shape);
    for (int64_t dim : dims)
      kept[dim] = 1;
    value = reshape(value, kept);
  }
  return broadcastTo(value, shape);
}
