//===- OpConverters.h - ONNX node to dpc op conversion ----------*- C++ -*-===//
//
// One converter per ONNX op type, registered by op type name (the importer
// is the one place that knows ONNX's names). A converter reads its node
// through NodeContext, folds it when every input is a literal and the op
// computes shapes or masks, and otherwise emits dpc ops.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_CONVERSION_ONNXTODPC_OPCONVERTERS_H
#define DPC_LIB_CONVERSION_ONNXTODPC_OPCONVERTERS_H

#include "GraphImporter.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::dpc::onnx_import {

/// One node being converted.
class NodeContext {
public:
  NodeContext(GraphImporter &importer, const onnx::NodeProto &node,
              int64_t opset);

  const onnx::NodeProto &getNode() const { return node; }
  int64_t getOpset() const { return opset; }
  OpBuilder &getBuilder() { return importer.getBuilder(); }
  Location getLoc() const { return loc; }
  GraphImporter &getImporter() { return importer; }

  /// Number of inputs, counting empty (omitted optional) ones.
  unsigned getNumInputs() const { return node.input_size(); }
  /// Whether optional input `i` is given.
  bool hasInput(unsigned i) const;
  /// Input `i` as an SSA value; null (after a diagnostic) on failure.
  Value getInput(unsigned i, TensorUse use = TensorUse::Operand);
  /// Input `i` if it is known at import time; with `forceStored`, a tensor
  /// the model holds is read as one even where it would be a parameter.
  const Literal *getLiteral(unsigned i, bool forceStored = false);
  /// Input `i`, which must be known at import time (`what` names it).
  const Literal *requireLiteral(unsigned i, StringRef what);
  /// Whether every given input is a literal.
  bool allInputsLiteral();
  /// Static type of input `i`.
  std::optional<RankedTensorType> getInputType(unsigned i);

  bool hasAttr(StringRef name) const;
  int64_t getInt(StringRef name, int64_t defaultValue) const;
  float getFloat(StringRef name, float defaultValue) const;
  std::string getString(StringRef name, StringRef defaultValue) const;
  std::vector<int64_t> getInts(StringRef name,
                               std::vector<int64_t> defaultValue = {}) const;
  const onnx::AttributeProto *getAttr(StringRef name) const;

  unsigned getNumOutputs() const { return node.output_size(); }
  bool isOutputUsed(unsigned i) const;
  void setOutput(unsigned i, Value value);
  void setOutput(unsigned i, Literal literal);

  /// An error at this node: "node 'NAME' (OpType): ...".
  InFlightDiagnostic emitError();
  /// Maps a possibly negative `axis` into [0, rank), or reports an error.
  std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
  /// `axes` normalized, without repeats, sorted; or an error.
  std::optional<SmallVector<int64_t>> normalizeAxes(ArrayRef<int64_t> axes,
                                                    int64_t rank);

  //===--------------------------------------------------------------------===//
  // Emission helpers
  //===--------------------------------------------------------------------===//

  /// A broadcasting binary op; the result has the lhs element type (or i1
  /// for comparisons).
  template <typename OpTy> Value createBinary(Value lhs, Value rhs);
  Value createCompare(ComparePredicate predicate, Value lhs, Value rhs);
  Value createSelect(Value condition, Value onTrue, Value onFalse);
  Value createReshape(Value input, ArrayRef<int64_t> shape);
  Value createTranspose(Value input, ArrayRef<int64_t> permutation);
  /// Slice `index` of dimension `dim` of `value`, that dimension dropped.
  Value createIndexSlice(Value value, int64_t dim, int64_t index);
  /// `values` (of one type) stacked along a new dimension `dim`.
  Value createStack(ArrayRef<Value> values, int64_t dim);
  Value createBroadcast(Value input, ArrayRef<int64_t> shape);
  template <typename OpTy>
  Value createReduce(Value input, ArrayRef<int64_t> dims, bool keepDims);
  /// A scalar constant of `elementType`.
  Value createScalar(double value, Type elementType);

private:
  GraphImporter &importer;
  const onnx::NodeProto &node;
  int64_t opset;
  Location loc;
};

using OpConverter = LogicalResult (*)(NodeContext &);
using OpConverterMap = llvm::StringMap<OpConverter>;

/// Every supported ONNX op type (default domain) and its converter.
const OpConverterMap &getOpConverters();

void addElementwiseConverters(OpConverterMap &converters);
void addShapeConverters(OpConverterMap &converters);
void addNdIndexConverters(OpConverterMap &converters);
void addEinsumConverter(OpConverterMap &converters);
void addRecurrentConverters(OpConverterMap &converters);
void addControlFlowConverters(OpConverterMap &converters);
void addNeuralNetConverters(OpConverterMap &converters);

//===----------------------------------------------------------------------===//
// Template definitions
//===----------------------------------------------------------------------===//

/// Whether `reduction` is one ONNX's scatter ops define.
inline bool isScatterReduction(StringRef reduction) {
  return llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction);
}

/// Whether some value of `targets` repeats: a scatter without a reduction
/// that writes one element twice, which ONNX leaves undefined.
inline bool hasRepeats(ArrayRef<int64_t> targets) {
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t target : targets)
    if (!seen.insert(target).second)
      return true;
  return false;
}

/// The number of elements of a shape.
inline int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t value : values)
    result *= value;
  return result;
}

inline ArrayRef<int64_t> getShapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

inline Type getElementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

template <typename OpTy> Value NodeContext::createBinary(Value lhs, Value rhs) {
  FailureOr<SmallVector<int64_t>> shape =
      getBroadcastShape({getShapeOf(lhs), getShapeOf(rhs)});
  if (failed(shape)) {
    emitError() << "operand shapes " << lhs.getType() << " and "
                << rhs.getType() << " do not broadcast";
    return {};
  }
  if (getElementTypeOf(lhs) != getElementTypeOf(rhs)) {
    emitError() << "operand element types differ: " << lhs.getType() << " and "
                << rhs.getType();
    return {};
  }
  auto type = RankedTensorType::get(*shape, getElementTypeOf(lhs));
  return OpTy::create(getBuilder(), loc, type, lhs, rhs);
}

template <typename OpTy>
Value NodeContext::createReduce(Value input, ArrayRef<int64_t> dims,
                                bool keepDims) {
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(getShapeOf(input))) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      shape.push_back(size);
    else if (keepDims)
      shape.push_back(1);
  }
  auto type = RankedTensorType::get(shape, getElementTypeOf(input));
  return OpTy::create(getBuilder(), loc, type, input,
                      getBuilder().getDenseI64ArrayAttr(dims),
                      keepDims ? getBuilder().getUnitAttr() : UnitAttr());
}

} // namespace mlir::dpc::onnx_import

#endif // DPC_LIB_CONVERSION_ONNXTODPC_OPCONVERTERS_H
