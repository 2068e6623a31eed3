//===- ElementwiseFormulas.cpp - Elementwise ops as C++ expressions -------===//

#include "ElementwiseFormulas.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dpc;

std::string mlir::dpc::getStorageCType(Type type) {
  if (type.isF64())
    return "double";
  if (isa<IntegerType>(type))
    return "int64_t";
  return "float";
}

static Type getElementType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

bool mlir::dpc::hasScalarFormula(Operation *op) {
  return isa<NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, TanhOp,
             SigmoidOp, ReluOp, ErfOp, NotOp, SinOp, CosOp, TanOp, AsinOp,
             AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, FloorOp,
             CeilOp, RoundOp, AddOp, SubOp, MulOp, DivOp, ModOp, PowOp, MaxOp,
             MinOp, AndOp, OrOp, CompareOp, SelectOp, CastOp>(op);
}

/// `text` rounded or wrapped to the element type `type` it is held for,
/// as the interpreter conforms every result.
static std::string conform(const std::string &text, Type type) {
  if (type.isBF16())
    return "dpc_round_bf16(" + text + ")";
  if (type.isF16())
    return "dpc_round_half(" + text + ")";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width == 1)
      return "int64_t((" + text + ") & 1)";
    if (width == 32)
      return "int64_t(int32_t(" + text + "))";
    if (width == 16)
      return "int64_t(int16_t(" + text + "))";
    if (width == 8)
      return "int64_t(int8_t(" + text + "))";
  }
  return text;
}

FailureOr<std::string>
mlir::dpc::getScalarFormula(Operation *op, ArrayRef<std::string> operands,
                            bool simdMath) {
  Type resultType = getElementType(op->getResult(0));
  bool isInteger = isa<IntegerType>(getElementType(op->getOperand(0)));
  std::string t = getStorageCType(resultType);
  // f32, f16 and bf16 are computed in float.
  std::string math = simdMath && t == "float" ? "dpc::simd::" : "std::";
  auto x = [&]() { return "(" + operands[0] + ")"; };
  auto y = [&]() { return "(" + operands[1] + ")"; };
  // Integer arithmetic wraps around, as two's complement.
  auto wrapping = [&](const char *symbol) {
    return "int64_t(uint64_t" + x() + " " + symbol + " uint64_t" + y() + ")";
  };
  auto floatOrWrapping = [&](const char *symbol) {
    return isInteger ? wrapping(symbol) : x() + " " + symbol + " " + y();
  };
  FailureOr<std::string> formula =
      llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
          .Case([&](NegOp) -> std::string {
            return isInteger ? "int64_t(0ULL - uint64_t" + x() + ")"
                             : "-" + x();
          })
          .Case([&](AbsOp) -> std::string {
            return isInteger ? "(" + x() + " < 0 ? int64_t(0ULL - uint64_t" +
                                   x() + ") : " + x() + ")"
                             : "std::fabs" + x();
          })
          .Case([&](ExpOp) { return math + "exp" + x(); })
          .Case([&](LogOp) { return "std::log" + x(); })
          .Case([&](SqrtOp) { return "std::sqrt" + x(); })
          .Case([&](RsqrtOp) { return t + "(1) / std::sqrt" + x(); })
          .Case([&](ReciprocalOp) { return t + "(1) / " + x(); })
          .Case([&](TanhOp) { return math + "tanh" + x(); })
          .Case([&](SigmoidOp) -> std::string {
            if (math != "std::")
              return math + "sigmoid" + x();
            return t + "(1) / (" + t + "(1) + std::exp(-" + x() + "))";
          })
          .Case([&](ReluOp) {
            // NaN stays NaN, as in PyTorch.
            return "(std::isnan" + x() + " || " + x() + " > " + t + "(0) ? " +
                   x() + " : " + t + "(0))";
          })
          .Case([&](ErfOp) { return math + "erf" + x(); })
          .Case([&](NotOp) { return "int64_t(" + x() + " == 0)"; })
          .Case([&](SinOp) { return "std::sin" + x(); })
          .Case([&](CosOp) { return "std::cos" + x(); })
          .Case([&](TanOp) { return "std::tan" + x(); })
          .Case([&](AsinOp) { return "std::asin" + x(); })
          .Case([&](AcosOp) { return "std::acos" + x(); })
          .Case([&](AtanOp) { return "std::atan" + x(); })
          .Case([&](SinhOp) { return "std::sinh" + x(); })
          .Case([&](CoshOp) { return "std::cosh" + x(); })
          .Case([&](AsinhOp) { return "std::asinh" + x(); })
          .Case([&](AcoshOp) { return "std::acosh" + x(); })
          .Case([&](AtanhOp) { return "std::atanh" + x(); })
          .Case([&](FloorOp) { return "std::floor" + x(); })
          .Case([&](CeilOp) { return "std::ceil" + x(); })
          // Halves to even: the default rounding mode.
          .Case([&](RoundOp) { return "std::nearbyint" + x(); })
          .Case([&](AddOp) { return floatOrWrapping("+"); })
          .Case([&](SubOp) { return floatOrWrapping("-"); })
          .Case([&](MulOp) { return floatOrWrapping("*"); })
          .Case([&](DivOp) -> std::string {
            if (!isInteger)
              return x() + " / " + y();
            // Truncates toward zero; a zero divisor is caught by the loop's
            // check (dpc_divisor_zero).
            return "(" + y() +
                   " == 0 ? (dpc_divisor_zero = true, int64_t(0)) "
                   ": " +
                   y() + " == -1 ? int64_t(0ULL - uint64_t" + x() +
                   ") : " + x() + " / " + y() + ")";
          })
          .Case([&](ModOp mod) -> std::string {
            // The remainder toward zero; a zero integer divisor is caught
            // by the loop's check, -1 leaves 0 (INT64_MIN % -1 overflows).
            std::string r =
                isInteger
                    ? "(" + y() +
                          " == 0 ? (dpc_divisor_zero = true, "
                          "int64_t(0)) : " +
                          y() + " == -1 ? int64_t(0) : " + x() + " % " + y() +
                          ")"
                    : "std::fmod(" + operands[0] + ", " + operands[1] + ")";
            if (!mod.getFloorMod())
              return r;
            // Moved to the sign of y where it differs.
            return "(" + r + " != 0 && ((" + r + " < 0) != (" + y() +
                   " < 0)) ? " + r + " + " + y() + " : " + r + ")";
          })
          .Case([&](PowOp) {
            return "std::pow(" + operands[0] + ", " + operands[1] + ")";
          })
          .Case<MaxOp, MinOp>([&](Operation *) -> std::string {
            bool isMax = isa<MaxOp>(op);
            std::string pick =
                isMax
                    ? "(" + x() + " < " + y() + " ? " + y() + " : " + x() + ")"
                    : "(" + y() + " < " + x() + " ? " + y() + " : " + x() + ")";
            if (isInteger)
              return pick;
            // NaN propagates, as torch.maximum and torch.minimum do.
            return "(std::isnan" + x() + " || std::isnan" + y() +
                   " ? std::numeric_limits<" + t + ">::quiet_NaN() : " + pick +
                   ")";
          })
          .Case([&](AndOp) {
            return "int64_t(" + x() + " != 0 && " + y() + " != 0)";
          })
          .Case([&](OrOp) {
            return "int64_t(" + x() + " != 0 || " + y() + " != 0)";
          })
          .Case([&](CompareOp compare) -> std::string {
            const char *symbol = "==";
            switch (compare.getPredicate()) {
            case ComparePredicate::eq:
              symbol = "==";
              break;
            case ComparePredicate::ne:
              symbol = "!=";
              break;
            case ComparePredicate::lt:
              symbol = "<";
              break;
            case ComparePredicate::le:
              symbol = "<=";
              break;
            case ComparePredicate::gt:
              symbol = ">";
              break;
            case ComparePredicate::ge:
              symbol = ">=";
              break;
            }
            return "int64_t(" + x() + " " + symbol + " " + y() + ")";
          })
          .Case([&](SelectOp) {
            return "(" + x() + " != 0 ? " + y() + " : (" + operands[2] + "))";
          })
          .Case([&](CastOp) -> std::string {
            if (auto integer = dyn_cast<IntegerType>(resultType)) {
              if (integer.getWidth() == 1)
                return "int64_t(" + x() + " != 0)";
              if (!isInteger)
                // Out of range is caught by the loop's check
                // (dpc_cast_out_of_range).
                return "dpc_cast_to_int(std::trunc(double" + x() + "), " +
                       std::to_string(integer.getWidth()) +
                       ", dpc_cast_out_of_range)";
              return "int64_t" + x();
            }
            return t + "(" + operands[0] + ")";
          })
          .Default([&](Operation *) -> FailureOr<std::string> {
            return op->emitError("has no scalar formula in the CPU backend");
          });
  if (failed(formula))
    return failure();
  return conform(*formula, resultType);
}
