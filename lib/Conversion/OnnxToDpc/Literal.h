//===- Literal.h - Compile-time tensors of the importer ---------*- C++ -*-===//
//
// ONNX exports compute shapes at run time (Shape, Gather, Concat, ...) and
// carry small constants (masks, scales, indices). The importer evaluates
// such chains on literals, so that every dpc value has a static shape and
// only the tensors that really flow through the model become IR.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_CONVERSION_ONNXTODPC_LITERAL_H
#define DPC_LIB_CONVERSION_ONNXTODPC_LITERAL_H

#include "dpc/Runtime/HostTensor.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::dpc::onnx_import {

/// A tensor known at import time. Integers and booleans are held exactly
/// in `ints`; floating-point values in `floats` (as doubles).
struct Literal {
  ::dpc::DType dtype = ::dpc::DType::I64;
  std::vector<int64_t> shape;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  static Literal fromTensor(const ::dpc::HostTensor &tensor);
  static Literal ofInts(std::vector<int64_t> values, std::vector<int64_t> shape,
                        ::dpc::DType dtype);
  static Literal ofFloats(std::vector<double> values,
                          std::vector<int64_t> shape, ::dpc::DType dtype);

  bool isFloat() const;
  int64_t getNumElements() const;
  /// Element `i` as a double / integer, whatever the storage.
  double getFloat(int64_t i) const;
  int64_t getInt(int64_t i) const;
  /// All elements as integers (for shapes, axes, indices).
  std::vector<int64_t> getInts() const;

  /// The same elements with another shape (Reshape, Squeeze, Unsqueeze).
  Literal withShape(std::vector<int64_t> newShape) const;
};

/// Broadcasting binary arithmetic; `floatOp` applies to float literals,
/// `intOp` to integer ones. The result has `resultType` (the operands' type
/// unless given, bool for comparisons).
std::optional<Literal>
foldBinary(const Literal &lhs, const Literal &rhs,
           const std::function<double(double, double)> &floatOp,
           const std::function<int64_t(int64_t, int64_t)> &intOp,
           std::optional<::dpc::DType> resultType = std::nullopt);

/// `data` with element `i` of `updates` combined into element `targets[i]`,
/// in order, as ONNX's ScatterND and ScatterElements define it:
/// `reduction` is none (the update replaces), add, mul, max or min.
Literal foldScatter(const Literal &data, const std::vector<int64_t> &targets,
                    const Literal &updates, const std::string &reduction);

/// Elementwise select between `onTrue` and `onFalse` (ONNX Where).
std::optional<Literal> foldWhere(const Literal &condition,
                                 const Literal &onTrue, const Literal &onFalse);

/// Conversion to another element type, with ONNX Cast semantics.
Literal foldCast(const Literal &input, ::dpc::DType dtype);

/// Concatenation along `axis` (non-negative); nullopt on mismatch.
std::optional<Literal> foldConcat(const std::vector<Literal> &inputs,
                                  int64_t axis);

/// ONNX Gather along `axis` (non-negative) with negative indices allowed;
/// nullopt when an index is out of range.
std::optional<Literal> foldGather(const Literal &data, const Literal &indices,
                                  int64_t axis);

/// Strided slice with already normalized bounds per dimension.
Literal foldSlice(const Literal &input, const std::vector<int64_t> &start,
                  const std::vector<int64_t> &step,
                  const std::vector<int64_t> &resultShape);

/// Permutes dimensions.
Literal foldTranspose(const Literal &input,
                      const std::vector<int64_t> &permutation);

/// Broadcast to `shape` (which the input must be broadcast-compatible with).
Literal foldBroadcast(const Literal &input, const std::vector<int64_t> &shape);

/// Row-major strides of `shape`.
std::vector<int64_t> getStrides(const std::vector<int64_t> &shape);

/// The NumPy broadcast of two shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>>
broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b);

} // namespace mlir::dpc::onnx_import

#endif // DPC_LIB_CONVERSION_ONNXTODPC_LITERAL_H
