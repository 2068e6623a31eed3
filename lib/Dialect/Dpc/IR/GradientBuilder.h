//===- GradientBuilder.h - Emitting gradient computations -------*- C++ -*-===//
//
// The gradient rules of the dpc ops build small expressions of other dpc
// ops; this builder keeps them short: it infers result types (NumPy
// broadcasting) and folds the common trivial cases (adding a null
// gradient, reshaping to the same shape).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_DIALECT_DPC_IR_GRADIENTBUILDER_H
#define DPC_LIB_DIALECT_DPC_IR_GRADIENTBUILDER_H

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::dpc {

class GradientBuilder {
public:
  GradientBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  OpBuilder &getBuilder() { return builder; }
  Location getLoc() const { return loc; }

  static RankedTensorType getType(Value value) {
    return llvm::cast<RankedTensorType>(value.getType());
  }

  /// A scalar constant with the element type of `like`.
  Value scalar(double value, Value like);
  /// A constant tensor of the type of `like`, filled with `value`.
  Value filled(double value, Value like);

  Value add(Value lhs, Value rhs);
  Value sub(Value lhs, Value rhs);
  Value mul(Value lhs, Value rhs);
  Value div(Value lhs, Value rhs);
  Value neg(Value value);
  Value exp(Value value);
  Value log(Value value);
  Value pow(Value lhs, Value rhs);
  Value compare(ComparePredicate predicate, Value lhs, Value rhs);
  Value select(Value condition, Value onTrue, Value onFalse);
  Value cast(Value value, Type elementType);
  /// One of the elementwise unary ops applied to `value`.
  template <typename UnaryOpT> Value unary(Value value) {
    return UnaryOpT::create(builder, loc, value);
  }

  Value reshape(Value value, ArrayRef<int64_t> shape);
  Value transpose(Value value, ArrayRef<int64_t> permutation);
  Value broadcastTo(Value value, ArrayRef<int64_t> shape);
  Value reduceSum(Value value, ArrayRef<int64_t> dims, bool keepDims);
  Value matmul(Value lhs, Value rhs);

  /// Sums `gradient` (of a broadcast result) down to `shape`: the inverse
  /// of NumPy broadcasting, for the gradient of a broadcast operand.
  Value unbroadcast(Value gradient, ArrayRef<int64_t> shape);

  /// Re-expands a reduction's result (or its gradient) over the reduced
  /// `dims` of `shape`; `keptDims` says whether they are still there.
  Value expandReduced(Value value, ArrayRef<int64_t> dims,
                      ArrayRef<int64_t> shape, bool keptDims);

private:
  OpBuilder &builder;
  Location loc;
};

} // namespace mlir::dpc

#endif // DPC_LIB_DIALECT_DPC_IR_GRADIENTBUILDER_H
