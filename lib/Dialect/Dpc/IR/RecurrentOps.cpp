//===- RecurrentOps.cpp - lstm, gru and their gradient ops ----------------===//
//
// Verifiers, sharding rules, FLOP counts and gradient rules of the
// recurrent layers. The layers differ in their gate count (LSTM 4, GRU 3)
// and in whether a cell state runs beside the hidden one; the rest is
// shared here.
//
//===----------------------------------------------------------------------===//

#include "GradientBuilder.h"

using namespace mlir;
using namespace mlir::dpc;

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

ArrayRef<int64_t> shapeOf(Value value) { return typeOf(value).getShape(); }

/// The sizes of a recurrent layer, read from its input and recurrence.
struct RecurrentShape {
  int64_t steps, batch, inputSize, hidden;
};

/// Checks the operands of a layer with `gates` gates; `states` are its
/// initial states (h, and c for an LSTM).
FailureOr<RecurrentShape> verifyLayerOperands(Operation *op, int64_t gates,
                                              Value input, Value weights,
                                              Value recurrence, Value bias,
                                              ValueRange states,
                                              Value lengths) {
  ArrayRef<int64_t> x = shapeOf(input), r = shapeOf(recurrence);
  if (x.size() != 3 || x[0] < 1 || r.size() != 2 || r[0] != gates * r[1]) {
    op->emitOpError("needs a [T, B, I] input with T >= 1 and a [")
        << gates << "H, H] recurrence, got " << input.getType() << " and "
        << recurrence.getType() << " (C1)";
    return failure();
  }
  RecurrentShape shape{x[0], x[1], x[2], r[1]};
  Type element = typeOf(input).getElementType();
  auto expect = [&](Value value, ArrayRef<int64_t> dims,
                    StringRef name) -> LogicalResult {
    if (shapeOf(value) == dims && typeOf(value).getElementType() == element)
      return success();
    return op->emitOpError()
           << name << " should be " << RankedTensorType::get(dims, element)
           << ", got " << value.getType() << " (C1)";
  };
  if (failed(expect(weights, {gates * shape.hidden, shape.inputSize},
                    "weights")) ||
      failed(expect(bias, {2 * gates * shape.hidden}, "bias")))
    return failure();
  for (Value state : states)
    if (failed(expect(state, {shape.batch, shape.hidden}, "an initial state")))
      return failure();
  if (lengths && shapeOf(lengths) != ArrayRef<int64_t>{shape.batch}) {
    op->emitOpError("lengths should have shape [")
        << shape.batch << "], got " << lengths.getType() << " (C2)";
    return failure();
  }
  return shape;
}

/// Checks that `values` have the types of `expected`, one by one.
LogicalResult verifySameTypes(Operation *op, ValueRange values,
                              TypeRange expected, StringRef what) {
  for (auto [i, pair] : llvm::enumerate(llvm::zip_equal(values, expected)))
    if (std::get<0>(pair).getType() != std::get<1>(pair))
      return op->emitOpError()
             << what << " " << i << " should be " << std::get<1>(pair)
             << ", got " << std::get<0>(pair).getType() << " (C1)";
  return success();
}

/// The types of a layer's results: output [T, B, H] and one [B, H] final
/// state per initial state.
SmallVector<Type> getLayerResultTypes(const RecurrentShape &shape, Type element,
                                      unsigned states) {
  SmallVector<Type> types = {
      RankedTensorType::get({shape.steps, shape.batch, shape.hidden}, element)};
  for (unsigned i = 0; i < states; ++i)
    types.push_back(
        RankedTensorType::get({shape.batch, shape.hidden}, element));
  return types;
}

/// The sharding rule of a layer or its gradient op: the batch is the only
/// factor that splits. In the gradient op it is a reduction (the weights'
/// gradients sum over it); time, input and hidden sizes stay whole.
ShardingRule getRecurrentRule(Operation *op, unsigned numStates, Value lengths,
                              bool isGradient) {
  ShardingRule rule;
  ArrayRef<int64_t> x = shapeOf(op->getOperand(0));
  int64_t hidden = shapeOf(op->getOperand(2))[1];
  int64_t gateRows = shapeOf(op->getOperand(2))[0];
  auto whole = [&](int64_t size) {
    return rule.addFactor(size, FactorKind::NeedReplication);
  };
  int64_t time = whole(x[0]), in = whole(x[2]), h = whole(hidden);
  int64_t gates = whole(gateRows), biasRows = whole(2 * gateRows);
  int64_t batch = rule.addFactor(x[1], isGradient ? FactorKind::Reduction
                                                  : FactorKind::Parallel);
  SmallVector<int64_t> sequence = {time, batch, in};
  SmallVector<int64_t> weights = {gates, in}, recurrence = {gates, h};
  SmallVector<int64_t> bias = {biasRows}, state = {batch, h};
  SmallVector<int64_t> output = {time, batch, h};
  rule.addOperand(sequence);
  rule.addOperand(weights);
  rule.addOperand(recurrence);
  rule.addOperand(bias);
  for (unsigned i = 0; i < numStates; ++i)
    rule.addOperand(state);
  if (isGradient) {
    rule.addOperand(output);
    for (unsigned i = 0; i < numStates; ++i)
      rule.addOperand(state);
  }
  if (lengths)
    rule.addOperand({batch});
  if (isGradient) {
    rule.addResult(sequence);
    rule.addResult(weights);
    rule.addResult(recurrence);
    rule.addResult(bias);
  } else {
    rule.addResult(output);
  }
  for (unsigned i = 0; i < numStates; ++i)
    rule.addResult(state);
  return rule;
}

/// Multiply-adds of the input and recurrent products, plus ~`pointwise`
/// operations per gate element and step.
double getLayerFlops(Value input, Value recurrence, double pointwise) {
  ArrayRef<int64_t> x = shapeOf(input), r = shapeOf(recurrence);
  double steps = double(x[0]) * double(x[1]);
  return steps * (2.0 * r[0] * (x[2] + r[1]) + pointwise * r[0]);
}

/// What the gradient op costs beyond its layer's forward: the rerun
/// forward, and the backward's two products per weight (input and weight
/// gradients), i.e. about three forwards in all.
constexpr double kGradientOverForward = 3.0;

} // namespace

//===----------------------------------------------------------------------===//
// lstm
//===----------------------------------------------------------------------===//

LogicalResult LstmOp::verify() {
  FailureOr<RecurrentShape> shape = verifyLayerOperands(
      *this, 4, getInput(), getWeights(), getRecurrence(), getBias(),
      {getInitialH(), getInitialC()}, getLengths());
  if (failed(shape))
    return failure();
  return verifySameTypes(
      *this, getResults(),
      getLayerResultTypes(*shape, typeOf(getInput()).getElementType(), 2),
      "result");
}

ShardingRule LstmOp::getShardingRule() {
  return getRecurrentRule(*this, 2, getLengths(), /*isGradient=*/false);
}

double LstmOp::getFlops() {
  return getLayerFlops(getInput(), getRecurrence(), 3.0);
}

LogicalResult LstmOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     SmallVectorImpl<Value> &out) {
  GradientBuilder gb(b, getLoc());
  auto orZeros = [&](Value grad, Value like) {
    return grad ? grad : gb.filled(0.0, like);
  };
  auto gradOp = LstmGradOp::create(
      b, getLoc(),
      TypeRange{getInput().getType(), getWeights().getType(),
                getRecurrence().getType(), getBias().getType(),
                getInitialH().getType(), getInitialC().getType()},
      getInput(), getWeights(), getRecurrence(), getBias(), getInitialH(),
      getInitialC(), orZeros(grads[0], getOutput()),
      orZeros(grads[1], getFinalH()), orZeros(grads[2], getFinalC()),
      getLengths(), getReverse());
  for (unsigned i = 0; i < 6; ++i)
    out[i] = gradOp.getResult(i);
  return success();
}

LogicalResult LstmGradOp::verify() {
  FailureOr<RecurrentShape> shape = verifyLayerOperands(
      *this, 4, getInput(), getWeights(), getRecurrence(), getBias(),
      {getInitialH(), getInitialC()}, getLengths());
  if (failed(shape))
    return failure();
  if (failed(verifySameTypes(
          *this, {getGradOutput(), getGradFinalH(), getGradFinalC()},
          getLayerResultTypes(*shape, typeOf(getInput()).getElementType(), 2),
          "result gradient")))
    return failure();
  return verifySameTypes(*this, getResults(),
                         getOperands().take_front(6).getTypes(), "result");
}

ShardingRule LstmGradOp::getShardingRule() {
  return getRecurrentRule(*this, 2, getLengths(), /*isGradient=*/true);
}

double LstmGradOp::getFlops() {
  return kGradientOverForward * getLayerFlops(getInput(), getRecurrence(), 3.0);
}

//===----------------------------------------------------------------------===//
// gru
//===----------------------------------------------------------------------===//

LogicalResult GruOp::verify() {
  FailureOr<RecurrentShape> shape =
      verifyLayerOperands(*this, 3, getInput(), getWeights(), getRecurrence(),
                          getBias(), {getInitialH()}, getLengths());
  if (failed(shape))
    return failure();
  return verifySameTypes(
      *this, getResults(),
      getLayerResultTypes(*shape, typeOf(getInput()).getElementType(), 1),
      "result");
}

ShardingRule GruOp::getShardingRule() {
  return getRecurrentRule(*this, 1, getLengths(), /*isGradient=*/false);
}

double GruOp::getFlops() {
  return getLayerFlops(getInput(), getRecurrence(), 3.0);
}

LogicalResult GruOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    SmallVectorImpl<Value> &out) {
  GradientBuilder gb(b, getLoc());
  auto orZeros = [&](Value grad, Value like) {
    return grad ? grad : gb.filled(0.0, like);
  };
  auto gradOp = GruGradOp::create(
      b, getLoc(),
      TypeRange{getInput().getType(), getWeights().getType(),
                getRecurrence().getType(), getBias().getType(),
                getInitialH().getType()},
      getInput(), getWeights(), getRecurrence(), getBias(), getInitialH(),
      orZeros(grads[0], getOutput()), orZeros(grads[1], getFinalH()),
      getLengths(), getReverse(), getLinearBeforeReset());
  for (unsigned i = 0; i < 5; ++i)
    out[i] = gradOp.getResult(i);
  return success();
}

LogicalResult GruGradOp::verify() {
  FailureOr<RecurrentShape> shape =
      verifyLayerOperands(*this, 3, getInput(), getWeights(), getRecurrence(),
                          getBias(), {getInitialH()}, getLengths());
  if (failed(shape))
    return failure();
  if (failed(verifySameTypes(
          *this, {getGradOutput(), getGradFinalH()},
          getLayerResultTypes(*shape, typeOf(getInput()).getElementType(), 1),
          "result gradient")))
    return failure();
  return verifySameTypes(*this, getResults(),
                         getOperands().take_front(5).getTypes(), "result");
}

ShardingRule GruGradOp::getShardingRule() {
  return getRecurrentRule(*this, 1, getLengths(), /*isGradient=*/true);
}

double GruGradOp::getFlops() {
  return kGradientOverForward * getLayerFlops(getInput(), getRecurrence(), 3.0);
}
