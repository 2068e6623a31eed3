//===- ElementwiseConverters.cpp - ONNX elementwise ops -------------------===//
//
// Unary and broadcasting binary ops, comparisons, Where, Cast and the
// activation functions that decompose into them (Clip, HardSigmoid,
// HardSwish, LeakyRelu, Softplus, Softsign, Celu, Sign). Literal inputs
// fold, since exports compute shapes and masks with these ops.
//
//===----------------------------------------------------------------------===//

#include "OnnxModelLoader.h"
#include "OpConverters.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;
using ::dpc::DType;

namespace {

using FloatFn = double (*)(double);

/// A unary op; folds when the input is a literal and `fold` is given.
template <typename OpTy, FloatFn fold = nullptr>
LogicalResult convertUnary(NodeContext &node) {
  if constexpr (fold != nullptr) {
    if (const Literal *input = node.getLiteral(0)) {
      Literal result = *input;
      if (result.isFloat())
        for (double &value : result.floats)
          value = fold(value);
      else
        for (int64_t &value : result.ints)
          value = static_cast<int64_t>(fold(static_cast<double>(value)));
      node.setOutput(0, std::move(result));
      return success();
    }
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(
      0, OpTy::create(node.getBuilder(), node.getLoc(), input.getType(), input)
             .getResult());
  return success();
}

double negate(double x) { return -x; }
double absolute(double x) { return std::fabs(x); }
double squareRoot(double x) { return std::sqrt(x); }
double reciprocal(double x) { return 1.0 / x; }
// Folded so that the shape arithmetic of exports (a size times a scale,
// rounded down) stays known at import time.
double roundDown(double x) { return std::floor(x); }
double roundUp(double x) { return std::ceil(x); }
double roundHalfToEven(double x) { return std::nearbyint(x); }

LogicalResult convertNot(NodeContext &node) {
  if (const Literal *input = node.getLiteral(0)) {
    Literal result = *input;
    for (int64_t &value : result.ints)
      value = !value;
    node.setOutput(0, std::move(result));
    return success();
  }
  return convertUnary<NotOp>(node);
}

LogicalResult convertIdentity(NodeContext &node) {
  if (const Literal *input = node.getLiteral(0)) {
    node.setOutput(0, *input);
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, input);
  return success();
}

/// A broadcasting binary op over all inputs (left to right, as Sum, Max
/// and Min are variadic); folds literals with `floatOp` / `intOp`.
template <typename OpTy>
LogicalResult convertBinary(NodeContext &node,
                            std::function<double(double, double)> floatOp,
                            std::function<int64_t(int64_t, int64_t)> intOp) {
  if (node.allInputsLiteral() && floatOp) {
    std::optional<Literal> result = *node.getLiteral(0);
    for (unsigned i = 1; result && i < node.getNumInputs(); ++i)
      result = foldBinary(*result, *node.getLiteral(i), floatOp, intOp);
    if (!result)
      return node.emitError() << "input shapes do not broadcast";
    node.setOutput(0, std::move(*result));
    return success();
  }
  Value result = node.getInput(0);
  for (unsigned i = 1; result && i < node.getNumInputs(); ++i) {
    Value next = node.getInput(i);
    result = next ? node.createBinary<OpTy>(result, next) : Value();
  }
  if (!result)
    return failure();
  node.setOutput(0, result);
  return success();
}

LogicalResult convertAdd(NodeContext &node) {
  return convertBinary<AddOp>(node, std::plus<double>(), std::plus<int64_t>());
}
LogicalResult convertSub(NodeContext &node) {
  return convertBinary<SubOp>(node, std::minus<double>(),
                              std::minus<int64_t>());
}
LogicalResult convertMul(NodeContext &node) {
  return convertBinary<MulOp>(node, std::multiplies<double>(),
                              std::multiplies<int64_t>());
}
LogicalResult convertDiv(NodeContext &node) {
  // Integer division truncates, as onnxruntime does.
  return convertBinary<DivOp>(
      node, std::divides<double>(),
      [](int64_t a, int64_t b) { return b == 0 ? 0 : a / b; });
}
/// Mod of values known at import time (window arithmetic of shifted-window
/// attention): with `fmod` the sign of the dividend (C's fmod), else that
/// of the divisor (Python's %). A zero divisor gives 0, as for Div.
LogicalResult convertMod(NodeContext &node) {
  bool fmod = node.getInt("fmod", 0) != 0;
  if (!node.allInputsLiteral()) {
    Value lhs = node.getInput(0);
    Value rhs = lhs ? node.getInput(1) : Value();
    if (!rhs)
      return failure();
    Value mod = node.createBinary<ModOp>(lhs, rhs);
    if (!mod)
      return failure();
    // ONNX's default takes the sign of the divisor, as Python's % does.
    cast<ModOp>(mod.getDefiningOp()).setFloorMod(!fmod);
    node.setOutput(0, mod);
    return success();
  }
  auto floatMod = [fmod](double a, double b) {
    if (b == 0)
      return 0.0;
    double r = std::fmod(a, b);
    return !fmod && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  };
  auto intMod = [fmod](int64_t a, int64_t b) -> int64_t {
    if (b == 0)
      return 0;
    int64_t r = a % b;
    return !fmod && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  };
  std::optional<Literal> result =
      foldBinary(*node.getLiteral(0), *node.getLiteral(1), floatMod, intMod);
  if (!result)
    return node.emitError() << "input shapes do not broadcast";
  node.setOutput(0, std::move(*result));
  return success();
}

LogicalResult convertPow(NodeContext &node) {
  // The exponent may have another element type than the base; a literal
  // exponent is converted to the base's.
  std::optional<RankedTensorType> base = node.getInputType(0);
  const Literal *exponent = node.getLiteral(1);
  if (!base)
    return failure();
  if (!isa<FloatType>(base->getElementType()) && !node.allInputsLiteral()) {
    // An integer base is raised in f64 and truncated back to its type, as
    // onnxruntime does: exact while the power is within 2^53.
    Value lhs = node.getInput(0);
    Value rhs = lhs ? node.getInput(1) : Value();
    if (!rhs)
      return failure();
    OpBuilder &b = node.getBuilder();
    auto toF64 = [&](Value value) -> Value {
      return CastOp::create(
          b, node.getLoc(),
          RankedTensorType::get(getShapeOf(value), b.getF64Type()), value);
    };
    Value power = node.createBinary<PowOp>(toF64(lhs), toF64(rhs));
    if (!power)
      return failure();
    node.setOutput(0,
                   CastOp::create(b, node.getLoc(),
                                  RankedTensorType::get(getShapeOf(power),
                                                        base->getElementType()),
                                  power)
                       .getResult());
    return success();
  }
  if (exponent && !node.getLiteral(0) &&
      node.getImporter().getElementType(exponent->dtype) !=
          base->getElementType()) {
    Value lhs = node.getInput(0);
    Literal converted = foldCast(*exponent, ::dpc::DType::F64);
    Value rhs = node.getImporter().materialize(converted, node.getLoc());
    rhs = CastOp::create(
        node.getBuilder(), node.getLoc(),
        RankedTensorType::get(getShapeOf(rhs), base->getElementType()), rhs);
    node.setOutput(0, node.createBinary<PowOp>(lhs, rhs));
    return success();
  }
  // A float base with an exponent of another type given when the step
  // runs (an integer tensor): the exponent is cast to the base's type.
  std::optional<RankedTensorType> exponentType = node.getInputType(1);
  if (!exponent && !node.getLiteral(0) && exponentType &&
      exponentType->getElementType() != base->getElementType()) {
    Value lhs = node.getInput(0), rhs = node.getInput(1);
    if (!lhs || !rhs)
      return failure();
    rhs = CastOp::create(
        node.getBuilder(), node.getLoc(),
        RankedTensorType::get(exponentType->getShape(), base->getElementType()),
        rhs);
    node.setOutput(0, node.createBinary<PowOp>(lhs, rhs));
    return success();
  }
  return convertBinary<PowOp>(
      node, [](double a, double b) { return std::pow(a, b); },
      [](int64_t a, int64_t b) {
        return static_cast<int64_t>(std::pow(a, b));
      });
}
LogicalResult convertMax(NodeContext &node) {
  return convertBinary<MaxOp>(
      node, [](double a, double b) { return std::max(a, b); },
      [](int64_t a, int64_t b) { return std::max(a, b); });
}
LogicalResult convertMin(NodeContext &node) {
  return convertBinary<MinOp>(
      node, [](double a, double b) { return std::min(a, b); },
      [](int64_t a, int64_t b) { return std::min(a, b); });
}
LogicalResult convertAnd(NodeContext &node) {
  return convertBinary<AndOp>(
      node, nullptr, [](int64_t a, int64_t b) -> int64_t { return a && b; });
}
LogicalResult convertOr(NodeContext &node) {
  return convertBinary<OrOp>(
      node, nullptr, [](int64_t a, int64_t b) -> int64_t { return a || b; });
}

LogicalResult convertMean(NodeContext &node) {
  if (failed(convertBinary<AddOp>(node, nullptr, nullptr)))
    return failure();
  Value sum =
      node.getImporter().getValue(node.getNode().output(0), node.getLoc());
  Value count = node.createScalar(node.getNumInputs(), getElementTypeOf(sum));
  node.setOutput(0, node.createBinary<DivOp>(sum, count));
  return success();
}

/// A comparison; folds literals.
template <ComparePredicate predicate>
LogicalResult convertCompare(NodeContext &node) {
  auto compare = [](double a, double b) -> bool {
    switch (predicate) {
    case ComparePredicate::eq:
      return a == b;
    case ComparePredicate::ne:
      return a != b;
    case ComparePredicate::lt:
      return a < b;
    case ComparePredicate::le:
      return a <= b;
    case ComparePredicate::gt:
      return a > b;
    case ComparePredicate::ge:
      return a >= b;
    }
    return false;
  };
  if (node.allInputsLiteral()) {
    std::optional<Literal> result = foldBinary(
        *node.getLiteral(0), *node.getLiteral(1),
        [&](double a, double b) -> double { return compare(a, b); },
        [&](int64_t a, int64_t b) -> int64_t {
          return compare(static_cast<double>(a), static_cast<double>(b));
        },
        DType::Bool);
    if (!result)
      return node.emitError() << "input shapes do not broadcast";
    node.setOutput(0, std::move(*result));
    return success();
  }
  Value lhs = node.getInput(0), rhs = lhs ? node.getInput(1) : Value();
  Value result = rhs ? node.createCompare(predicate, lhs, rhs) : Value();
  if (!result)
    return failure();
  node.setOutput(0, result);
  return success();
}

LogicalResult convertWhere(NodeContext &node) {
  if (node.allInputsLiteral()) {
    std::optional<Literal> result = foldWhere(
        *node.getLiteral(0), *node.getLiteral(1), *node.getLiteral(2));
    if (!result)
      return node.emitError() << "input shapes do not broadcast";
    node.setOutput(0, std::move(*result));
    return success();
  }
  Value condition = node.getInput(0);
  Value onTrue = condition ? node.getInput(1) : Value();
  Value onFalse = onTrue ? node.getInput(2) : Value();
  Value result =
      onFalse ? node.createSelect(condition, onTrue, onFalse) : Value();
  if (!result)
    return failure();
  node.setOutput(0, result);
  return success();
}

/// Input 0 cast to `dtype`, folded when it is known at import time.
LogicalResult castTo(NodeContext &node, DType dtype) {
  if (const Literal *input = node.getLiteral(0)) {
    node.setOutput(0, foldCast(*input, dtype));
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  auto type = RankedTensorType::get(getShapeOf(input),
                                    node.getImporter().getElementType(dtype));
  if (type == input.getType()) {
    node.setOutput(0, input);
    return success();
  }
  node.setOutput(0,
                 CastOp::create(node.getBuilder(), node.getLoc(), type, input)
                     .getResult());
  return success();
}

LogicalResult convertCast(NodeContext &node) {
  int64_t to = node.getInt("to", 0);
  std::optional<DType> dtype = getDType(to);
  if (!dtype)
    return node.emitError() << "cannot cast to " << getOnnxTypeName(to);
  return castTo(node, *dtype);
}

/// Cast to the element type of input 1 (opset 15).
LogicalResult convertCastLike(NodeContext &node) {
  std::optional<DType> dtype;
  if (const Literal *like = node.getLiteral(1)) {
    dtype = like->dtype;
  } else if (std::optional<RankedTensorType> like = node.getInputType(1)) {
    for (DType candidate :
         {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64,
          DType::I32, DType::I16, DType::I8, DType::Bool})
      if (node.getImporter().getElementType(candidate) ==
          like->getElementType()) {
        dtype = candidate;
        break;
      }
  } else {
    return failure();
  }
  if (!dtype)
    return node.emitError() << "cannot cast to the element type of its "
                               "second input";
  return castTo(node, *dtype);
}

/// Reads a scalar bound given as an optional input (opset 11+) or as an
/// attribute (before).
/// Clip's bound `attr` (input `input` from opset 11, an attribute before),
/// as a scalar of `elementType`: a constant where it is known at import
/// time, else the graph's value; null where it is not given, or (after a
/// diagnostic, `failed` set) where it is not one element.
Value getBound(NodeContext &node, unsigned input, StringRef attr,
               Type elementType, bool &failed) {
  if (node.getOpset() < 11)
    return node.hasAttr(attr)
               ? node.createScalar(node.getFloat(attr, 0), elementType)
               : Value();
  if (!node.hasInput(input))
    return Value();
  if (const Literal *literal = node.getLiteral(input)) {
    if (literal->getNumElements() == 1)
      return node.createScalar(literal->getFloat(0), elementType);
  } else if (std::optional<RankedTensorType> type = node.getInputType(input);
             type && type->getNumElements() == 1) {
    if (type->getElementType() != elementType) {
      node.emitError() << attr << " is " << type->getElementType()
                       << ", not the input's " << elementType;
      failed = true;
      return Value();
    }
    Value bound = node.getInput(input);
    if (!bound) {
      failed = true;
      return Value();
    }
    return type->getRank() == 0 ? bound : node.createReshape(bound, {});
  }
  node.emitError() << attr << " must be a scalar";
  failed = true;
  return Value();
}

LogicalResult convertClip(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Type elementType = getElementTypeOf(input);
  bool failed = false;
  Value low = getBound(node, 1, "min", elementType, failed);
  if (failed)
    return failure();
  Value high = getBound(node, 2, "max", elementType, failed);
  if (failed)
    return failure();
  Value result = input;
  if (low)
    result = node.createBinary<MaxOp>(result, low);
  if (high)
    result = node.createBinary<MinOp>(result, high);
  node.setOutput(0, result);
  return success();
}

/// max(0, min(1, alpha * x + beta)).
Value createHardSigmoid(NodeContext &node, Value input, double alpha,
                        double beta) {
  Type elementType = getElementTypeOf(input);
  Value scaled =
      node.createBinary<MulOp>(input, node.createScalar(alpha, elementType));
  Value shifted =
      node.createBinary<AddOp>(scaled, node.createScalar(beta, elementType));
  Value upper =
      node.createBinary<MinOp>(shifted, node.createScalar(1.0, elementType));
  return node.createBinary<MaxOp>(upper, node.createScalar(0.0, elementType));
}

LogicalResult convertHardSigmoid(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, createHardSigmoid(node, input, node.getFloat("alpha", 0.2f),
                                      node.getFloat("beta", 0.5f)));
  return success();
}

/// x * HardSigmoid(x) with alpha 1/6 and beta 1/2 (MobileNetV3's; PyTorch
/// exports nn.Hardswish as this op at opsets 14 to 17).
LogicalResult convertHardSwish(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, node.createBinary<MulOp>(
                        input, createHardSigmoid(node, input, 1.0 / 6.0, 0.5)));
  return success();
}

/// A unary op of `node`'s input, made from the op's own elementwise ops.
template <typename OpTy> Value createUnaryOp(NodeContext &node, Value input) {
  return OpTy::create(node.getBuilder(), node.getLoc(), input.getType(), input)
      .getResult();
}

/// ln(1 + e^x).
LogicalResult convertSoftplus(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Value one = node.createScalar(1.0, getElementTypeOf(input));
  Value shifted =
      node.createBinary<AddOp>(createUnaryOp<ExpOp>(node, input), one);
  node.setOutput(0, createUnaryOp<LogOp>(node, shifted));
  return success();
}

/// x / (1 + |x|).
LogicalResult convertSoftsign(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Value one = node.createScalar(1.0, getElementTypeOf(input));
  Value denominator =
      node.createBinary<AddOp>(createUnaryOp<AbsOp>(node, input), one);
  node.setOutput(0, node.createBinary<DivOp>(input, denominator));
  return success();
}

/// max(0, x) + min(0, alpha * (e^(x / alpha) - 1)).
LogicalResult convertCelu(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Type elementType = getElementTypeOf(input);
  double alpha = node.getFloat("alpha", 1.0f);
  Value zero = node.createScalar(0.0, elementType);
  Value scaled =
      node.createBinary<DivOp>(input, node.createScalar(alpha, elementType));
  Value expm1 = node.createBinary<SubOp>(createUnaryOp<ExpOp>(node, scaled),
                                         node.createScalar(1.0, elementType));
  Value negative = node.createBinary<MinOp>(
      zero,
      node.createBinary<MulOp>(node.createScalar(alpha, elementType), expm1));
  node.setOutput(0, node.createBinary<AddOp>(
                        node.createBinary<MaxOp>(zero, input), negative));
  return success();
}

/// 1, 0 or -1 by the sign of x: (x > 0) - (x < 0).
LogicalResult convertSign(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Type elementType = getElementTypeOf(input);
  Value zero = node.createScalar(0.0, elementType);
  Value one = node.createScalar(1.0, elementType);
  Value positive = node.createSelect(
      node.createCompare(ComparePredicate::gt, input, zero), one, zero);
  Value negative = node.createSelect(
      node.createCompare(ComparePredicate::lt, input, zero), one, zero);
  node.setOutput(0, node.createBinary<SubOp>(positive, negative));
  return success();
}

LogicalResult convertLeakyRelu(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Type elementType = getElementTypeOf(input);
  Value zero = node.createScalar(0.0, elementType);
  Value negative = node.createCompare(ComparePredicate::lt, input, zero);
  Value scaled = node.createBinary<MulOp>(
      input, node.createScalar(node.getFloat("alpha", 0.01f), elementType));
  node.setOutput(0, node.createSelect(negative, scaled, input));
  return success();
}

/// alpha * (exp(x) - 1) below zero, x above, both times `scale` (Elu:
/// scale 1; Selu: gamma).
Value createExponentialLinear(NodeContext &node, Value input, double alpha,
                              double scale) {
  Type elementType = getElementTypeOf(input);
  Value expm1 = node.createBinary<SubOp>(createUnaryOp<ExpOp>(node, input),
                                         node.createScalar(1.0, elementType));
  Value negative = node.createCompare(ComparePredicate::lt, input,
                                      node.createScalar(0.0, elementType));
  Value result = node.createSelect(
      negative,
      node.createBinary<MulOp>(expm1, node.createScalar(alpha, elementType)),
      input);
  if (scale == 1.0)
    return result;
  return node.createBinary<MulOp>(result,
                                  node.createScalar(scale, elementType));
}

LogicalResult convertElu(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, createExponentialLinear(node, input,
                                            node.getFloat("alpha", 1.0f), 1.0));
  return success();
}

LogicalResult convertSelu(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, createExponentialLinear(
                        node, input,
                        node.getFloat("alpha", 1.67326319217681884765625f),
                        node.getFloat("gamma", 1.05070102214813232421875f)));
  return success();
}

/// x above alpha, else 0.
LogicalResult convertThresholdedRelu(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Type elementType = getElementTypeOf(input);
  Value above = node.createCompare(
      ComparePredicate::gt, input,
      node.createScalar(node.getFloat("alpha", 1.0f), elementType));
  node.setOutput(
      0, node.createSelect(above, input, node.createScalar(0.0, elementType)));
  return success();
}

/// x + bias below -lambd, x - bias above lambd, else 0.
LogicalResult convertShrink(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Type elementType = getElementTypeOf(input);
  double lambd = node.getFloat("lambd", 0.5f),
         bias = node.getFloat("bias", 0.0f);
  Value zero = node.createScalar(0.0, elementType);
  Value below = node.createCompare(ComparePredicate::lt, input,
                                   node.createScalar(-lambd, elementType));
  Value above = node.createCompare(ComparePredicate::gt, input,
                                   node.createScalar(lambd, elementType));
  Value shifted = node.createSelect(
      above,
      node.createBinary<SubOp>(input, node.createScalar(bias, elementType)),
      zero);
  node.setOutput(
      0, node.createSelect(below,
                           node.createBinary<AddOp>(
                               input, node.createScalar(bias, elementType)),
                           shifted));
  return success();
}

/// slope * x below zero, x elsewhere; the slope broadcasts to x.
LogicalResult convertPRelu(NodeContext &node) {
  Value input = node.getInput(0);
  Value slope = input ? node.getInput(1) : Value();
  if (!slope)
    return failure();
  Type elementType = getElementTypeOf(input);
  Value negative = node.createCompare(ComparePredicate::lt, input,
                                      node.createScalar(0.0, elementType));
  Value scaled = node.createBinary<MulOp>(input, slope);
  if (!scaled)
    return failure();
  if (getShapeOf(scaled) != getShapeOf(input))
    return node.emitError() << "slope " << slope.getType()
                            << " does not broadcast to X " << input.getType();
  node.setOutput(0, node.createSelect(negative, scaled, input));
  return success();
}

/// NaN is the one value not equal to itself.
LogicalResult convertIsNaN(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, node.createCompare(ComparePredicate::ne, input, input));
  return success();
}

LogicalResult convertIsInf(NodeContext &node) {
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Type elementType = getElementTypeOf(input);
  bool negative = node.getInt("detect_negative", 1) != 0;
  bool positive = node.getInt("detect_positive", 1) != 0;
  double infinity = std::numeric_limits<double>::infinity();
  Value result;
  if (negative && positive)
    result = node.createCompare(ComparePredicate::eq,
                                createUnaryOp<AbsOp>(node, input),
                                node.createScalar(infinity, elementType));
  else if (negative || positive)
    result = node.createCompare(
        ComparePredicate::eq, input,
        node.createScalar(negative ? -infinity : infinity, elementType));
  else
    result = node.getImporter().materialize(
        Literal::ofInts(
            std::vector<int64_t>(
                cast<RankedTensorType>(input.getType()).getNumElements(), 0),
            std::vector<int64_t>(getShapeOf(input).begin(),
                                 getShapeOf(input).end()),
            DType::Bool),
        node.getLoc());
  node.setOutput(0, result);
  return success();
}

} // namespace

void mlir::dpc::onnx_import::addElementwiseConverters(
    OpConverterMap &converters) {
  converters["Abs"] = convertUnary<AbsOp, absolute>;
  converters["Neg"] = convertUnary<NegOp, negate>;
  converters["Exp"] = convertUnary<ExpOp>;
  converters["Log"] = convertUnary<LogOp>;
  converters["Sqrt"] = convertUnary<SqrtOp, squareRoot>;
  converters["Reciprocal"] = convertUnary<ReciprocalOp, reciprocal>;
  converters["Tanh"] = convertUnary<TanhOp>;
  converters["Sigmoid"] = convertUnary<SigmoidOp>;
  converters["Relu"] = convertUnary<ReluOp>;
  converters["Erf"] = convertUnary<ErfOp>;
  converters["Sin"] = convertUnary<SinOp>;
  converters["Cos"] = convertUnary<CosOp>;
  converters["Tan"] = convertUnary<TanOp>;
  converters["Asin"] = convertUnary<AsinOp>;
  converters["Acos"] = convertUnary<AcosOp>;
  converters["Atan"] = convertUnary<AtanOp>;
  converters["Sinh"] = convertUnary<SinhOp>;
  converters["Cosh"] = convertUnary<CoshOp>;
  converters["Asinh"] = convertUnary<AsinhOp>;
  converters["Acosh"] = convertUnary<AcoshOp>;
  converters["Atanh"] = convertUnary<AtanhOp>;
  converters["Floor"] = convertUnary<FloorOp, roundDown>;
  converters["Ceil"] = convertUnary<CeilOp, roundUp>;
  converters["Round"] = convertUnary<RoundOp, roundHalfToEven>;
  converters["Not"] = convertNot;
  converters["Identity"] = convertIdentity;
  converters["Add"] = convertAdd;
  converters["Sub"] = convertSub;
  converters["Mul"] = convertMul;
  converters["Div"] = convertDiv;
  converters["Mod"] = convertMod;
  converters["Pow"] = convertPow;
  converters["Max"] = convertMax;
  converters["Min"] = convertMin;
  converters["Sum"] = convertAdd;
  converters["Mean"] = convertMean;
  converters["And"] = convertAnd;
  converters["Or"] = convertOr;
  converters["Equal"] = convertCompare<ComparePredicate::eq>;
  converters["Less"] = convertCompare<ComparePredicate::lt>;
  converters["LessOrEqual"] = convertCompare<ComparePredicate::le>;
  converters["Greater"] = convertCompare<ComparePredicate::gt>;
  converters["GreaterOrEqual"] = convertCompare<ComparePredicate::ge>;
  converters["Where"] = convertWhere;
  converters["Cast"] = convertCast;
  converters["CastLike"] = convertCastLike;
  converters["Clip"] = convertClip;
  converters["HardSigmoid"] = convertHardSigmoid;
  converters["HardSwish"] = convertHardSwish;
  converters["LeakyRelu"] = convertLeakyRelu;
  converters["Elu"] = convertElu;
  converters["Selu"] = convertSelu;
  converters["ThresholdedRelu"] = convertThresholdedRelu;
  converters["Shrink"] = convertShrink;
  converters["PRelu"] = convertPRelu;
  converters["IsNaN"] = convertIsNaN;
  converters["IsInf"] = convertIsInf;
  converters["Xor"] = convertCompare<ComparePredicate::ne>;
  converters["Softplus"] = convertSoftplus;
  converters["Softsign"] = convertSoftsign;
  converters["Celu"] = convertCelu;
  converters["Sign"] = convertSign;
}
