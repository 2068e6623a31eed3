//===- Cast.cpp - Element type conversion ---------------------------------===//
//
// dpc.cast: floats round to nearest even (in one step, also to f16 and
// bf16), floats truncate toward zero into integers, anything tests for
// non-zero into i1, and integers wrap to narrower widths.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dpc/Runtime/FloatConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

/// `value` rounded to the float type `type`, held in `T`.
template <typename T> static T roundToFloat(double value, Type type) {
  if (type.isF16())
    return ::dpc::convertFromHalf(::dpc::convertToHalf(value));
  if (type.isBF16())
    return ::dpc::convertFromBFloat16(::dpc::convertToBFloat16(value));
  if (type.isF32())
    return static_cast<float>(value);
  return static_cast<T>(value);
}

FailureOr<Tensor> interpreter::castElements(Operation *op, const Tensor &input,
                                            Type resultType,
                                            Precision precision) {
  Tensor result(getElementKind(resultType, precision), input.getShape());
  int64_t count = input.getNumElements();
  auto integer = dyn_cast<IntegerType>(resultType);
  LogicalResult status = success();

  dispatchKind(input.getKind(), [&](auto inputZero) {
    using In = decltype(inputZero);
    ArrayRef<In> in = input.getData<In>();
    dispatchKind(result.getKind(), [&](auto resultZero) {
      using Out = decltype(resultZero);
      MutableArrayRef<Out> out = result.getData<Out>();
      for (int64_t i = 0; i < count; ++i) {
        In value = in[i];
        if constexpr (std::is_floating_point_v<Out>) {
          // Under F64 every float is a double: nothing to round.
          if (precision == Precision::F64 && std::is_floating_point_v<In>)
            out[i] = static_cast<Out>(value);
          else
            out[i] = roundToFloat<Out>(static_cast<double>(value), resultType);
        } else if (integer.getWidth() == 1) {
          out[i] = value != 0;
        } else if constexpr (std::is_floating_point_v<In>) {
          double truncated = std::trunc(static_cast<double>(value));
          double limit = std::ldexp(1.0, integer.getWidth() - 1);
          if (!(truncated >= -limit && truncated < limit)) {
            op->emitError("cannot cast ")
                << value << " to " << resultType << ": out of range";
            status = failure();
            return;
          }
          out[i] = static_cast<int64_t>(truncated);
        } else {
          out[i] = value; // wrapped to the width by the caller
        }
      }
    });
  });
  if (failed(status))
    return failure();
  return result;
}
