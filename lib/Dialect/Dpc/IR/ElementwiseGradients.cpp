//===- ElementwiseGradients.cpp - Gradient rules of elementwise ops -------===//
//
// DifferentiableOpInterface for the unary and broadcasting binary ops,
// select, cast and dropout. Each rule follows PyTorch's derivative of the
// same function (derivatives.yaml), including its choices at ties and at
// zero, so that gradients match PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "GradientBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dpc;

using Gradients = SmallVectorImpl<Value>;

//===----------------------------------------------------------------------===//
// Unary ops: y = f(x), dx = g * f'(x)
//===----------------------------------------------------------------------===//

LogicalResult NegOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  out[0] = GradientBuilder(b, getLoc()).neg(grads[0]);
  return success();
}

LogicalResult AbsOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  // g * sign(x), with sign(0) = 0.
  GradientBuilder gb(b, getLoc());
  Value x = getInput(), g = grads[0], zero = gb.scalar(0.0, x);
  Value negative = gb.select(gb.compare(ComparePredicate::lt, x, zero),
                             gb.neg(g), gb.filled(0.0, g));
  out[0] = gb.select(gb.compare(ComparePredicate::gt, x, zero), g, negative);
  return success();
}

LogicalResult ExpOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  out[0] = GradientBuilder(b, getLoc()).mul(grads[0], getResult());
  return success();
}

LogicalResult LogOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  out[0] = GradientBuilder(b, getLoc()).div(grads[0], getInput());
  return success();
}

LogicalResult SqrtOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.div(grads[0], gb.mul(getResult(), gb.scalar(2.0, getResult())));
  return success();
}

LogicalResult RsqrtOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  // d/dx x^-1/2 = -1/2 y^3.
  GradientBuilder gb(b, getLoc());
  Value y = getResult();
  Value cube = gb.mul(y, gb.mul(y, y));
  out[0] = gb.mul(gb.mul(grads[0], gb.scalar(-0.5, y)), cube);
  return success();
}

LogicalResult ReciprocalOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                           Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value y = getResult();
  out[0] = gb.mul(gb.neg(grads[0]), gb.mul(y, y));
  return success();
}

LogicalResult TanhOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value y = getResult();
  out[0] = gb.mul(grads[0], gb.sub(gb.scalar(1.0, y), gb.mul(y, y)));
  return success();
}

LogicalResult SigmoidOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                        Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value y = getResult();
  out[0] = gb.mul(gb.mul(grads[0], y), gb.sub(gb.scalar(1.0, y), y));
  return success();
}

LogicalResult ReluOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  // The mask is read off the result (positive exactly where the input is):
  // the next op stores the result for its own gradient anyway, the input
  // need not be stored, and a pipeline stage that receives the result
  // needs nothing more.
  GradientBuilder gb(b, getLoc());
  Value y = getResult();
  Value positive = gb.compare(ComparePredicate::gt, y, gb.scalar(0.0, y));
  out[0] = gb.select(positive, grads[0], gb.scalar(0.0, grads[0]));
  return success();
}

LogicalResult ErfOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  // d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2).
  GradientBuilder gb(b, getLoc());
  Value x = getInput();
  Value density = gb.exp(gb.neg(gb.mul(x, x)));
  out[0] =
      gb.mul(gb.mul(grads[0], gb.scalar(2.0 / std::sqrt(M_PI), x)), density);
  return success();
}

LogicalResult SinOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.mul(grads[0], gb.unary<CosOp>(getInput()));
  return success();
}

LogicalResult CosOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.mul(gb.neg(grads[0]), gb.unary<SinOp>(getInput()));
  return success();
}

LogicalResult TanOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  // d/dx tan(x) = 1 + tan(x)^2.
  GradientBuilder gb(b, getLoc());
  Value y = getResult();
  out[0] = gb.mul(grads[0], gb.add(gb.scalar(1.0, y), gb.mul(y, y)));
  return success();
}

/// g / sqrt(a + s x^2), the shape of the inverse functions' derivatives.
static Value divideByRootOfQuadratic(GradientBuilder &gb, Value g, Value x,
                                     double a, double s) {
  Value quadratic =
      gb.add(gb.scalar(a, x), gb.mul(gb.scalar(s, x), gb.mul(x, x)));
  return gb.mul(g, gb.unary<RsqrtOp>(quadratic));
}

LogicalResult AsinOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = divideByRootOfQuadratic(gb, grads[0], getInput(), 1.0, -1.0);
  return success();
}

LogicalResult AcosOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = divideByRootOfQuadratic(gb, gb.neg(grads[0]), getInput(), 1.0, -1.0);
  return success();
}

LogicalResult AtanOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value x = getInput();
  out[0] = gb.div(grads[0], gb.add(gb.scalar(1.0, x), gb.mul(x, x)));
  return success();
}

LogicalResult SinhOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.mul(grads[0], gb.unary<CoshOp>(getInput()));
  return success();
}

LogicalResult CoshOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.mul(grads[0], gb.unary<SinhOp>(getInput()));
  return success();
}

LogicalResult AsinhOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = divideByRootOfQuadratic(gb, grads[0], getInput(), 1.0, 1.0);
  return success();
}

LogicalResult AcoshOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = divideByRootOfQuadratic(gb, grads[0], getInput(), -1.0, 1.0);
  return success();
}

LogicalResult AtanhOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value x = getInput();
  out[0] = gb.div(grads[0], gb.sub(gb.scalar(1.0, x), gb.mul(x, x)));
  return success();
}

/// Rounding is flat between the integers: its gradient is zero.
static LogicalResult buildZeroGradient(OpBuilder &b, Location loc,
                                       ArrayRef<Value> grads, Gradients &out) {
  out[0] = GradientBuilder(b, loc).filled(0.0, grads[0]);
  return success();
}

LogicalResult FloorOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  return buildZeroGradient(b, getLoc(), grads, out);
}

LogicalResult CeilOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  return buildZeroGradient(b, getLoc(), grads, out);
}

LogicalResult RoundOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                      Gradients &out) {
  return buildZeroGradient(b, getLoc(), grads, out);
}

//===----------------------------------------------------------------------===//
// Binary ops: gradients are summed back to each operand's shape
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

LogicalResult AddOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.unbroadcast(grads[0], shapeOf(getLhs()));
  out[1] = gb.unbroadcast(grads[0], shapeOf(getRhs()));
  return success();
}

LogicalResult SubOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.unbroadcast(grads[0], shapeOf(getLhs()));
  out[1] = gb.unbroadcast(gb.neg(grads[0]), shapeOf(getRhs()));
  return success();
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  out[0] = gb.unbroadcast(gb.mul(grads[0], getRhs()), shapeOf(getLhs()));
  out[1] = gb.unbroadcast(gb.mul(grads[0], getLhs()), shapeOf(getRhs()));
  return success();
}

LogicalResult DivOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value g = grads[0], lhs = getLhs(), rhs = getRhs();
  out[0] = gb.unbroadcast(gb.div(g, rhs), shapeOf(lhs));
  out[1] = gb.unbroadcast(gb.div(gb.mul(gb.neg(g), lhs), gb.mul(rhs, rhs)),
                          shapeOf(rhs));
  return success();
}

LogicalResult ModOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  // x - y q with q = x / y rounded (down, or toward zero): q is flat
  // between the jumps, so dx = g and dy = -g q, as PyTorch has them.
  GradientBuilder gb(b, getLoc());
  Value g = grads[0], lhs = getLhs(), rhs = getRhs();
  Value ratio = gb.div(lhs, rhs);
  Value down = gb.unary<FloorOp>(ratio);
  Value quotient = getFloorMod()
                       ? down
                       : gb.select(gb.compare(ComparePredicate::lt, ratio,
                                              gb.scalar(0.0, ratio)),
                                   gb.unary<CeilOp>(ratio), down);
  out[0] = gb.unbroadcast(g, shapeOf(lhs));
  out[1] = gb.unbroadcast(gb.mul(gb.neg(g), quotient), shapeOf(rhs));
  return success();
}

LogicalResult PowOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value g = grads[0], x = getLhs(), e = getRhs(), y = getResult();
  // d/dx = e * x^(e-1), taken as 0 where e == 0 (PyTorch).
  Value slope = gb.mul(e, gb.pow(x, gb.sub(e, gb.scalar(1.0, e))));
  slope = gb.select(gb.compare(ComparePredicate::eq, e, gb.scalar(0.0, e)),
                    gb.scalar(0.0, slope), slope);
  out[0] = gb.unbroadcast(gb.mul(g, slope), shapeOf(x));
  // d/de = y * ln(x), taken as 0 where x == 0 and e >= 0 (PyTorch).
  Value zero = gb.scalar(0.0, x);
  Value atZero = AndOp::create(
      b, getLoc(), RankedTensorType::get(shapeOf(y), b.getI1Type()),
      gb.broadcastTo(gb.compare(ComparePredicate::eq, x, zero), shapeOf(y)),
      gb.broadcastTo(gb.compare(ComparePredicate::ge, e, zero), shapeOf(y)));
  Value exponentSlope =
      gb.select(atZero, gb.scalar(0.0, y), gb.mul(y, gb.log(x)));
  out[1] = gb.unbroadcast(gb.mul(g, exponentSlope), shapeOf(e));
  return success();
}

/// maximum / minimum: the gradient goes to the chosen operand, split in
/// half on ties (PyTorch).
static void buildExtremumGradients(GradientBuilder &gb, Value lhs, Value rhs,
                                   Value g, ComparePredicate lhsLoses,
                                   ComparePredicate rhsLoses, Gradients &out) {
  Value zero = gb.scalar(0.0, g);
  Value tie = gb.compare(ComparePredicate::eq, lhs, rhs);
  Value shared = gb.select(tie, gb.mul(g, gb.scalar(0.5, g)), g);
  out[0] = gb.unbroadcast(
      gb.select(gb.compare(lhsLoses, lhs, rhs), zero, shared), shapeOf(lhs));
  out[1] = gb.unbroadcast(
      gb.select(gb.compare(rhsLoses, lhs, rhs), zero, shared), shapeOf(rhs));
}

LogicalResult MaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  buildExtremumGradients(gb, getLhs(), getRhs(), grads[0], ComparePredicate::lt,
                         ComparePredicate::gt, out);
  return success();
}

LogicalResult MinOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                    Gradients &out) {
  GradientBuilder gb(b, getLoc());
  buildExtremumGradients(gb, getLhs(), getRhs(), grads[0], ComparePredicate::gt,
                         ComparePredicate::lt, out);
  return success();
}

LogicalResult SelectOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                       Gradients &out) {
  GradientBuilder gb(b, getLoc());
  Value g = grads[0], zero = gb.scalar(0.0, g), c = getCondition();
  out[1] = gb.unbroadcast(gb.select(c, g, zero), shapeOf(getOnTrue()));
  out[2] = gb.unbroadcast(gb.select(c, zero, g), shapeOf(getOnFalse()));
  return success();
}

LogicalResult CastOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                     Gradients &out) {
  Type inputType = getInput().getType().getElementType();
  if (isa<FloatType>(inputType))
    out[0] = GradientBuilder(b, getLoc()).cast(grads[0], inputType);
  return success();
}

LogicalResult DropoutOp::buildGradients(OpBuilder &b, ArrayRef<Value> grads,
                                        Gradients &out) {
  // The keep mask is a function of the element's index and the step's
  // seed, so the same dropout applied to the gradient masks and scales it
  // exactly as the forward did.
  out[0] =
      DropoutOp::create(b, getLoc(), grads[0].getType(), grads[0], getSeed(),
                        getOffset(), getRatioAttr(), getStreamAttr());
  return success();
}
