//===- ShapeConverters.cpp - ONNX shape and data-movement ops -------------===//
//
// Constants, shape computations (Shape, Range, ConstantOfShape, Trilu, ...)
// and data movement (Reshape, Transpose, Concat, Slice, Split, Gather,
// Expand, ...). Shapes, axes and indices that dpc needs statically must be
// literals; data movement on literals folds.
//
//===----------------------------------------------------------------------===//

#include "OnnxModelLoader.h"
#include "OpConverters.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;
using ::dpc::DType;

namespace {

std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// The shape of input `i`, from its value or literal.
std::optional<std::vector<int64_t>> getInputShape(NodeContext &node,
                                                  unsigned i) {
  std::optional<RankedTensorType> type = node.getInputType(i);
  if (!type)
    return std::nullopt;
  return toVector(type->getShape());
}

/// Sets output 0 to `input` reshaped, folding literals.
LogicalResult setReshaped(NodeContext &node, ArrayRef<int64_t> shape) {
  if (const Literal *literal = node.getLiteral(0)) {
    node.setOutput(0, literal->withShape(toVector(shape)));
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, node.createReshape(input, shape));
  return success();
}

LogicalResult convertConstant(NodeContext &node) {
  StoredTensor stored;
  stored.fromConstantNode = true;
  if (const onnx::AttributeProto *value = node.getAttr("value")) {
    std::string error;
    if (!decodeTensor(value->t(), node.getImporter().getModelDir(),
                      stored.tensor, error))
      return node.emitError() << error;
    node.getImporter().setStored(node.getNode().output(0), std::move(stored));
    return success();
  }
  if (const onnx::AttributeProto *value = node.getAttr("value_float")) {
    node.setOutput(0, Literal::ofFloats({value->f()}, {}, DType::F32));
    return success();
  }
  if (const onnx::AttributeProto *value = node.getAttr("value_floats")) {
    std::vector<double> floats(value->floats().begin(), value->floats().end());
    int64_t n = floats.size();
    node.setOutput(0, Literal::ofFloats(std::move(floats), {n}, DType::F32));
    return success();
  }
  if (const onnx::AttributeProto *value = node.getAttr("value_int")) {
    node.setOutput(0, Literal::ofInts({value->i()}, {}, DType::I64));
    return success();
  }
  if (node.hasAttr("value_ints")) {
    std::vector<int64_t> ints = node.getInts("value_ints");
    int64_t n = ints.size();
    node.setOutput(0, Literal::ofInts(std::move(ints), {n}, DType::I64));
    return success();
  }
  return node.emitError() << "only tensor and numeric constants are supported";
}

LogicalResult convertConstantOfShape(NodeContext &node) {
  const Literal *shape = node.requireLiteral(0, "shape");
  if (!shape)
    return failure();
  Literal fill = Literal::ofFloats({0.0}, {}, DType::F32);
  if (const onnx::AttributeProto *value = node.getAttr("value")) {
    ::dpc::HostTensor tensor;
    std::string error;
    if (!decodeTensor(value->t(), node.getImporter().getModelDir(), tensor,
                      error))
      return node.emitError() << error;
    fill = Literal::fromTensor(tensor).withShape({});
  }
  node.setOutput(0, foldBroadcast(fill, shape->getInts()));
  return success();
}

LogicalResult convertShape(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t rank = shape->size();
  int64_t start = node.getInt("start", 0), end = node.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  std::vector<int64_t> dims(shape->begin() + start,
                            shape->begin() + std::max(start, end));
  int64_t n = dims.size();
  node.setOutput(0, Literal::ofInts(std::move(dims), {n}, DType::I64));
  return success();
}

LogicalResult convertSize(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  node.setOutput(0, Literal::ofInts({product(*shape)}, {}, DType::I64));
  return success();
}

LogicalResult convertReshape(NodeContext &node) {
  std::optional<std::vector<int64_t>> inputShape = getInputShape(node, 0);
  std::vector<int64_t> target;
  if (node.getOpset() < 5) {
    target = node.getInts("shape");
  } else {
    const Literal *shape = node.requireLiteral(1, "target shape");
    if (!shape)
      return failure();
    target = shape->getInts();
  }
  if (!inputShape)
    return failure();
  bool allowZero = node.getInt("allowzero", 0);
  int64_t inferred = -1, known = 1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == 0 && !allowZero) {
      if (d >= inputShape->size())
        return node.emitError() << "target dimension " << d
                                << " copies a dimension the input lacks";
      target[d] = (*inputShape)[d];
    }
    if (target[d] == -1) {
      if (inferred >= 0)
        return node.emitError() << "target shape has more than one -1";
      inferred = d;
      continue;
    }
    known *= target[d];
  }
  int64_t total = product(*inputShape);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return node.emitError() << "cannot infer the -1 dimension of the "
                                 "target shape from "
                              << total << " elements";
    target[inferred] = total / known;
  } else if (known != total) {
    return node.emitError()
           << "cannot reshape " << total << " elements into " << known;
  }
  return setReshaped(node, target);
}

LogicalResult convertFlatten(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t rank = shape->size();
  int64_t axis = node.getInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return node.emitError() << "axis " << node.getInt("axis", 1)
                            << " is out of range for rank " << rank;
  ArrayRef<int64_t> dims(*shape);
  return setReshaped(
      node, {product(dims.take_front(axis)), product(dims.drop_front(axis))});
}

/// Axes from input 1 (opset 13+) or the `axes` attribute.
std::optional<std::vector<int64_t>> getAxes(NodeContext &node, bool &failed) {
  if (node.getOpset() >= 13) {
    if (!node.hasInput(1))
      return std::nullopt;
    const Literal *axes = node.requireLiteral(1, "axes");
    if (!axes) {
      failed = true;
      return std::nullopt;
    }
    return axes->getInts();
  }
  if (!node.hasAttr("axes"))
    return std::nullopt;
  return node.getInts("axes");
}

LogicalResult convertSqueeze(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  bool failed = false;
  std::optional<std::vector<int64_t>> axes = getAxes(node, failed);
  if (!shape || failed)
    return failure();
  int64_t rank = shape->size();
  std::vector<bool> drop(rank, false);
  if (!axes) {
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = (*shape)[d] == 1;
  } else {
    for (int64_t axis : *axes) {
      std::optional<int64_t> d = node.normalizeAxis(axis, rank);
      if (!d)
        return mlir::failure();
      if ((*shape)[*d] != 1)
        return node.emitError() << "cannot squeeze dimension " << *d
                                << " of size " << (*shape)[*d];
      drop[*d] = true;
    }
  }
  std::vector<int64_t> result;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d])
      result.push_back((*shape)[d]);
  return setReshaped(node, result);
}

LogicalResult convertUnsqueeze(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  bool failed = false;
  std::optional<std::vector<int64_t>> axes = getAxes(node, failed);
  if (!shape || failed)
    return failure();
  if (!axes)
    return node.emitError() << "needs axes";
  int64_t rank = shape->size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    std::optional<int64_t> d = node.normalizeAxis(axis, rank);
    if (!d)
      return mlir::failure();
    inserted[*d] = true;
  }
  std::vector<int64_t> result;
  for (int64_t d = 0, next = 0; d < rank; ++d)
    result.push_back(inserted[d] ? 1 : (*shape)[next++]);
  return setReshaped(node, result);
}

LogicalResult convertTranspose(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t rank = shape->size();
  std::vector<int64_t> permutation(rank);
  for (int64_t d = 0; d < rank; ++d)
    permutation[d] = rank - 1 - d;
  permutation = node.getInts("perm", permutation);
  if (static_cast<int64_t>(permutation.size()) != rank)
    return node.emitError()
           << "perm has " << permutation.size() << " entries for rank " << rank;
  if (const Literal *literal = node.getLiteral(0)) {
    node.setOutput(0, foldTranspose(*literal, permutation));
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, node.createTranspose(input, permutation));
  return success();
}

LogicalResult convertConcat(NodeContext &node) {
  std::optional<std::vector<int64_t>> first = getInputShape(node, 0);
  if (!first)
    return failure();
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", 0), first->size());
  if (!axis)
    return failure();
  if (node.allInputsLiteral()) {
    std::vector<Literal> inputs;
    for (unsigned i = 0; i < node.getNumInputs(); ++i)
      inputs.push_back(*node.getLiteral(i));
    std::optional<Literal> result = foldConcat(inputs, *axis);
    if (!result)
      return node.emitError() << "inputs do not agree outside the axis";
    node.setOutput(0, std::move(*result));
    return success();
  }
  SmallVector<Value> inputs;
  SmallVector<int64_t> shape(first->begin(), first->end());
  shape[*axis] = 0;
  for (unsigned i = 0; i < node.getNumInputs(); ++i) {
    Value input = node.getInput(i);
    if (!input)
      return failure();
    inputs.push_back(input);
    shape[*axis] += getShapeOf(input)[*axis];
  }
  auto type = RankedTensorType::get(shape, getElementTypeOf(inputs.front()));
  node.setOutput(
      0, ConcatOp::create(node.getBuilder(), node.getLoc(), type, inputs, *axis)
             .getResult());
  return success();
}

/// Reads an optional list of integers from input `i` (opset 10+ Slice).
std::optional<std::vector<int64_t>> readInts(NodeContext &node, unsigned i,
                                             StringRef what, bool &failed) {
  if (!node.hasInput(i))
    return std::nullopt;
  const Literal *literal = node.requireLiteral(i, what);
  if (!literal) {
    failed = true;
    return std::nullopt;
  }
  return literal->getInts();
}

/// Pad in constant mode, pads known at import time (PyTorch puts one before
/// every AvgPool2d that counts padding).
/// Reflect and edge padding, one gather per padded dimension: the element
/// at padded position i of a dimension of size n is the input's at
/// |i| reflected back from the ends (reflect: -1 reads 1, n reads n-2) or
/// clamped to them (edge). The gather's gradient sums what each input
/// element was copied to.
static LogicalResult padByGathering(NodeContext &node, Value input,
                                    ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> low,
                                    ArrayRef<int64_t> high, bool reflect) {
  OpBuilder &builder = node.getBuilder();
  SmallVector<int64_t> current(shape);
  for (int64_t d = 0, rank = shape.size(); d < rank; ++d) {
    if (low[d] == 0 && high[d] == 0)
      continue;
    int64_t n = shape[d];
    if (n == 0 || (reflect && (low[d] >= n || high[d] >= n)))
      return node.emitError()
             << (reflect ? "reflect" : "edge") << " pads " << low[d] << " and "
             << high[d] << " of dimension " << d << " (size " << n
             << ") must be " << (reflect ? "smaller than it" : "of a "
                                                                "non-empty "
                                                                "dimension");
    SmallVector<int64_t> indices;
    for (int64_t i = -low[d]; i < n + high[d]; ++i) {
      if (reflect)
        indices.push_back(i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i));
      else
        indices.push_back(std::clamp<int64_t>(i, 0, n - 1));
    }
    auto indexType =
        RankedTensorType::get({int64_t(indices.size())}, builder.getI64Type());
    Value indexValue =
        ConstantOp::create(builder, node.getLoc(), indexType,
                           DenseElementsAttr::get(indexType,
                                                  ArrayRef<int64_t>(indices)));
    current[d] = indices.size();
    auto type = RankedTensorType::get(current, getElementTypeOf(input));
    input = GatherOp::create(builder, node.getLoc(), type, input, indexValue, d)
                .getResult();
  }
  node.setOutput(0, input);
  return success();
}

LogicalResult convertPad(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  std::string mode = node.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return node.emitError() << "mode '" << mode
                            << "' is not supported (constant, reflect or "
                               "edge)";
  std::vector<int64_t> pads;
  double value = 0.0;
  if (node.getOpset() < 11) {
    pads = node.getInts("pads");
    value = node.getFloat("value", 0.0f);
  } else {
    bool failed = false;
    std::optional<std::vector<int64_t>> read =
        readInts(node, 1, "pads", failed);
    if (failed)
      return failure();
    if (!read)
      return node.emitError() << "needs pads";
    pads = *read;
    if (node.hasInput(2)) {
      const Literal *constant = node.requireLiteral(2, "constant_value");
      if (!constant)
        return failure();
      value = constant->isFloat() ? constant->getFloat(0)
                                  : double(constant->getInts().front());
    }
  }
  int64_t rank = shape->size();
  if (int64_t(pads.size()) != 2 * rank)
    return node.emitError() << "has " << pads.size() << " pads for rank "
                            << rank << " (2 per dimension)";
  // Checked before they are added: pads come from the file.
  constexpr int64_t kMaxPad = int64_t(1) << 40;
  if (llvm::any_of(pads, [](int64_t pad) { return pad < 0; }))
    return node.emitError() << "negative pads (cropping) are not supported";
  if (llvm::any_of(pads, [&](int64_t pad) { return pad > kMaxPad; }))
    return node.emitError() << "a pad is larger than dpc holds (at most "
                            << kMaxPad << ")";
  std::vector<int64_t> low(pads.begin(), pads.begin() + rank),
      high(pads.begin() + rank, pads.end()), resultShape(*shape);
  for (int64_t d = 0; d < rank; ++d)
    resultShape[d] += low[d] + high[d];
  Value input = node.getInput(0);
  if (!input)
    return failure();
  OpBuilder &builder = node.getBuilder();
  if (mode != "constant")
    return padByGathering(node, input, *shape, low, high, mode == "reflect");
  auto type = RankedTensorType::get(resultShape, getElementTypeOf(input));
  node.setOutput(0, PadOp::create(builder, node.getLoc(), type, input,
                                  builder.getDenseI64ArrayAttr(low),
                                  builder.getDenseI64ArrayAttr(high),
                                  builder.getDenseI64ArrayAttr(
                                      std::vector<int64_t>(rank, 0)),
                                  builder.getF64FloatAttr(value)));
  return success();
}

LogicalResult convertSlice(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t rank = shape->size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.getOpset() < 10) {
    starts = node.getInts("starts");
    ends = node.getInts("ends");
    axes = node.getInts("axes");
  } else {
    bool failed = false;
    std::optional<std::vector<int64_t>> s = readInts(node, 1, "starts", failed);
    std::optional<std::vector<int64_t>> e = readInts(node, 2, "ends", failed);
    std::optional<std::vector<int64_t>> a = readInts(node, 3, "axes", failed);
    std::optional<std::vector<int64_t>> t = readInts(node, 4, "steps", failed);
    if (failed)
      return failure();
    if (!s || !e)
      return node.emitError() << "needs starts and ends";
    starts = *s;
    ends = *e;
    if (a)
      axes = *a;
    if (t)
      steps = *t;
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return node.emitError() << "starts, ends, axes and steps differ in length";

  std::vector<int64_t> start(rank, 0), step(rank, 1), resultShape(*shape);
  bool negativeStep = false;
  for (size_t i = 0; i < starts.size(); ++i) {
    std::optional<int64_t> d = node.normalizeAxis(axes[i], rank);
    if (!d)
      return failure();
    int64_t size = (*shape)[*d];
    int64_t s = starts[i], e = ends[i], t = steps[i];
    if (t == 0)
      return node.emitError() << "step is 0 on axis " << *d;
    if (s < 0)
      s += size;
    if (e < 0 && e > std::numeric_limits<int64_t>::min() / 2)
      e += size;
    if (t > 0) {
      s = std::clamp<int64_t>(s, 0, size);
      e = std::clamp<int64_t>(e, 0, size);
      resultShape[*d] = std::max<int64_t>(0, (e - s + t - 1) / t);
    } else {
      negativeStep = true;
      s = std::clamp<int64_t>(s, 0, size - 1);
      e = std::clamp<int64_t>(e, -1, size - 1);
      resultShape[*d] = std::max<int64_t>(0, (s - e + (-t) - 1) / (-t));
    }
    start[*d] = s;
    step[*d] = t;
  }
  if (const Literal *literal = node.getLiteral(0)) {
    node.setOutput(0, foldSlice(*literal, start, step, resultShape));
    return success();
  }
  if (negativeStep)
    return node.emitError() << "negative steps are supported only on "
                               "tensors known at import time";
  Value input = node.getInput(0);
  if (!input)
    return failure();
  std::vector<int64_t> limit(rank);
  for (int64_t d = 0; d < rank; ++d)
    limit[d] = resultShape[d] == 0
                   ? start[d]
                   : start[d] + (resultShape[d] - 1) * step[d] + 1;
  OpBuilder &b = node.getBuilder();
  auto type = RankedTensorType::get(resultShape, getElementTypeOf(input));
  node.setOutput(0, SliceOp::create(b, node.getLoc(), type, input,
                                    b.getDenseI64ArrayAttr(start),
                                    b.getDenseI64ArrayAttr(limit),
                                    b.getDenseI64ArrayAttr(step))
                        .getResult());
  return success();
}

LogicalResult convertSplit(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t rank = shape->size();
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", 0), rank);
  if (!axis)
    return failure();
  std::vector<int64_t> sizes;
  if (node.getOpset() >= 13 && node.hasInput(1)) {
    const Literal *split = node.requireLiteral(1, "split sizes");
    if (!split)
      return failure();
    sizes = split->getInts();
  } else if (node.getOpset() < 13) {
    sizes = node.getInts("split");
  }
  int64_t parts = node.getNumOutputs();
  if (sizes.empty()) {
    int64_t size = (*shape)[*axis];
    if (size % parts != 0)
      return node.emitError()
             << "cannot split " << size << " into " << parts << " equal parts";
    sizes.assign(parts, size / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) !=
          (*shape)[*axis])
    return node.emitError() << "split sizes do not add up to dimension "
                            << *axis << " of size " << (*shape)[*axis];
  if (const Literal *literal = node.getLiteral(0)) {
    int64_t offset = 0;
    for (int64_t i = 0; i < parts; ++i) {
      std::vector<int64_t> start(rank, 0), step(rank, 1), result(*shape);
      start[*axis] = offset;
      result[*axis] = sizes[i];
      node.setOutput(i, foldSlice(*literal, start, step, result));
      offset += sizes[i];
    }
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  SmallVector<Type> types;
  for (int64_t size : sizes) {
    SmallVector<int64_t> result(shape->begin(), shape->end());
    result[*axis] = size;
    types.push_back(RankedTensorType::get(result, getElementTypeOf(input)));
  }
  auto split =
      SplitOp::create(node.getBuilder(), node.getLoc(), types, input, *axis);
  for (int64_t i = 0; i < parts; ++i)
    node.setOutput(i, split.getResult(i));
  return success();
}

LogicalResult convertGather(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  std::optional<std::vector<int64_t>> indexShape = getInputShape(node, 1);
  if (!shape || !indexShape)
    return failure();
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", 0), shape->size());
  if (!axis)
    return failure();
  const Literal *indices = node.getLiteral(1);
  if (const Literal *data = node.getLiteral(0); data && indices) {
    std::optional<Literal> result = foldGather(*data, *indices, *axis);
    if (!result)
      return node.emitError() << "an index is out of range for dimension "
                              << *axis << " of size " << (*shape)[*axis];
    node.setOutput(0, std::move(*result));
    return success();
  }
  if (indices)
    for (int64_t index : indices->getInts())
      if (index < -(*shape)[*axis] || index >= (*shape)[*axis])
        return node.emitError()
               << "index " << index << " is out of range for dimension "
               << *axis << " of size " << (*shape)[*axis];
  Value data = node.getInput(0);
  Value indexValue = data ? node.getInput(1) : Value();
  if (!indexValue)
    return failure();
  SmallVector<int64_t> result(shape->begin(), shape->begin() + *axis);
  llvm::append_range(result, *indexShape);
  result.append(shape->begin() + *axis + 1, shape->end());
  auto type = RankedTensorType::get(result, getElementTypeOf(data));
  node.setOutput(0, GatherOp::create(node.getBuilder(), node.getLoc(), type,
                                     data, indexValue, *axis)
                        .getResult());
  return success();
}

LogicalResult convertGatherElements(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  std::optional<std::vector<int64_t>> indexShape = getInputShape(node, 1);
  if (!shape || !indexShape)
    return failure();
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", 0), shape->size());
  if (!axis)
    return failure();
  Value data = node.getInput(0);
  Value indices = data ? node.getInput(1) : Value();
  if (!indices)
    return failure();
  auto type = RankedTensorType::get(*indexShape, getElementTypeOf(data));
  node.setOutput(0, GatherElementsOp::create(node.getBuilder(), node.getLoc(),
                                             type, data, indices, *axis)
                        .getResult());
  return success();
}

/// The offset in `data` (shape `shape`) of every element of `indices`
/// (shape `indexShape`): its own position with the `axis` component
/// replaced by its value. Fails on a value out of range.
std::optional<std::vector<int64_t>>
getScatterTargets(NodeContext &node, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> indexShape, const Literal &indices,
                  int64_t axis) {
  std::vector<int64_t> strides = getStrides(toVector(shape));
  std::vector<int64_t> indexStrides = getStrides(toVector(indexShape));
  std::vector<int64_t> targets;
  for (int64_t i = 0; i < indices.getNumElements(); ++i) {
    int64_t index = indices.getInt(i), size = shape[axis];
    if (index < -size || index >= size) {
      node.emitError() << "index " << index << " is out of range for "
                       << "dimension " << axis << " of size " << size;
      return std::nullopt;
    }
    int64_t offset = 0, rest = i;
    for (size_t d = 0; d < indexShape.size(); ++d) {
      int64_t position = rest / indexStrides[d];
      rest %= indexStrides[d];
      if (int64_t(d) == axis)
        position = index < 0 ? index + size : index;
      offset += position * strides[d];
    }
    targets.push_back(offset);
  }
  return targets;
}

/// ScatterElements (and Scatter, its opset-9 name): the updates land at
/// their own position with the axis component taken from `indices`. It is
/// a scatter_add_elements into zeros, with the data kept where nothing
/// lands (or added to, with reduction add). Folds on literals.
LogicalResult convertScatterElements(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  std::optional<std::vector<int64_t>> indexShape = getInputShape(node, 1);
  std::optional<std::vector<int64_t>> updatesShape = getInputShape(node, 2);
  if (!shape || !indexShape || !updatesShape)
    return failure();
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", 0), shape->size());
  if (!axis)
    return failure();
  if (*updatesShape != *indexShape || indexShape->size() != shape->size())
    return node.emitError() << "indices and updates need the data's rank and "
                            << "one shape";
  for (size_t d = 0; d < shape->size(); ++d)
    if (int64_t(d) != *axis && (*indexShape)[d] > (*shape)[d])
      return node.emitError() << "indices are larger than the data beside "
                              << "axis " << *axis;
  std::string reduction = node.getString("reduction", "none");
  if (!isScatterReduction(reduction))
    return node.emitError() << "unknown reduction '" << reduction << "'";

  const Literal *indices = node.getLiteral(1);
  std::optional<std::vector<int64_t>> targets;
  if (indices && !(targets = getScatterTargets(node, *shape, *indexShape,
                                               *indices, *axis)))
    return failure();
  if (node.allInputsLiteral()) {
    Literal result = foldScatter(*node.getLiteral(0), *targets,
                                 *node.getLiteral(2), reduction);
    node.setOutput(0, std::move(result));
    return success();
  }
  if (reduction != "none" && reduction != "add")
    return node.emitError() << "reduction '" << reduction << "' needs its "
                            << "inputs known at import time (dpc folds it)";
  if (targets && reduction == "none" && hasRepeats(*targets))
    return node.emitError() << "indices address one element twice, "
                               "which ONNX leaves undefined";
  Value data = node.getInput(0);
  Value indexValue = data ? node.getInput(1) : Value();
  Value updates = indexValue ? node.getInput(2) : Value();
  if (!updates)
    return failure();
  OpBuilder &b = node.getBuilder();
  auto dataType = cast<RankedTensorType>(data.getType());
  Value added = ScatterAddElementsOp::create(b, node.getLoc(), dataType,
                                             updates, indexValue, *axis);
  if (reduction == "add") {
    node.setOutput(0, node.createBinary<AddOp>(data, added));
    return success();
  }
  Value hit;
  if (targets) {
    std::vector<int64_t> mask(dataType.getNumElements(), 0);
    for (int64_t target : *targets)
      mask[target] = 1;
    hit = node.getImporter().materialize(
        Literal::ofInts(mask, *shape, DType::Bool), node.getLoc());
  } else {
    // Rows reached by a run-time index: where a scatter of ones lands.
    Type elementType = dataType.getElementType();
    Value ones =
        node.createBroadcast(node.createScalar(1.0, elementType), *indexShape);
    hit = node.createCompare(ComparePredicate::gt,
                             ScatterAddElementsOp::create(b, node.getLoc(),
                                                          dataType, ones,
                                                          indexValue, *axis),
                             node.createScalar(0.0, elementType));
  }
  node.setOutput(0, node.createSelect(hit, added, data));
  return success();
}

LogicalResult convertExpand(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  const Literal *target = node.requireLiteral(1, "target shape");
  if (!shape || !target)
    return failure();
  std::optional<std::vector<int64_t>> result =
      broadcastShapes(*shape, target->getInts());
  if (!result)
    return node.emitError() << "cannot broadcast the input to the target "
                               "shape";
  if (const Literal *literal = node.getLiteral(0)) {
    node.setOutput(0, foldBroadcast(*literal, *result));
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(0, node.createBroadcast(input, *result));
  return success();
}

LogicalResult convertRange(NodeContext &node) {
  const Literal *start = node.requireLiteral(0, "start");
  const Literal *limit = start ? node.requireLiteral(1, "limit") : nullptr;
  const Literal *delta = limit ? node.requireLiteral(2, "delta") : nullptr;
  if (!delta)
    return failure();
  double first = start->getFloat(0), last = limit->getFloat(0),
         step = delta->getFloat(0);
  if (step == 0)
    return node.emitError() << "delta is 0";
  int64_t n = std::max<int64_t>(0, std::ceil((last - first) / step));
  Literal result;
  result.dtype = start->dtype;
  result.shape = {n};
  for (int64_t i = 0; i < n; ++i) {
    if (start->isFloat())
      result.floats.push_back(first + i * step);
    else
      result.ints.push_back(start->getInt(0) + i * delta->getInt(0));
  }
  node.setOutput(0, std::move(result));
  return success();
}

LogicalResult convertTrilu(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t k = 0;
  if (node.hasInput(1)) {
    const Literal *diagonal = node.requireLiteral(1, "diagonal offset k");
    if (!diagonal)
      return failure();
    k = diagonal->getInt(0);
  }
  if (shape->size() < 2)
    return node.emitError() << "input must have rank 2 or more";
  bool upper = node.getInt("upper", 1);
  int64_t rows = (*shape)[shape->size() - 2], columns = shape->back();
  // The mask of kept elements of one matrix; it broadcasts over the batch.
  std::vector<int64_t> keep;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t column = 0; column < columns; ++column)
      keep.push_back(upper ? column - row >= k : column - row <= k);
  Literal mask = Literal::ofInts(keep, {rows, columns}, DType::Bool);
  if (const Literal *input = node.getLiteral(0)) {
    Literal zero = foldCast(Literal::ofInts({0}, {}, DType::I64), input->dtype);
    node.setOutput(0, *foldWhere(mask, *input, zero));
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  Value zero = node.createScalar(0.0, getElementTypeOf(input));
  Value maskValue = node.getImporter().materialize(mask, node.getLoc());
  node.setOutput(0, node.createSelect(maskValue, input, zero));
  return success();
}

/// `input` repeated `repeats[d]` times along each dimension: each
/// dimension gets a repeat dimension before it, broadcast, then merged.
LogicalResult convertTile(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  const Literal *repeatsLiteral = node.requireLiteral(1, "repeats");
  if (!shape || !repeatsLiteral)
    return failure();
  std::vector<int64_t> repeats = repeatsLiteral->getInts();
  if (repeats.size() != shape->size())
    return node.emitError()
           << "repeats has " << repeats.size()
           << " entries for an input of rank " << shape->size();
  std::vector<int64_t> split, expanded, result;
  for (auto [size, repeat] : llvm::zip_equal(*shape, repeats)) {
    if (repeat < 0)
      return node.emitError() << "repeat " << repeat << " is negative";
    split.insert(split.end(), {1, size});
    expanded.insert(expanded.end(), {repeat, size});
    result.push_back(repeat * size);
  }
  if (const Literal *input = node.getLiteral(0)) {
    node.setOutput(
        0, foldBroadcast(input->withShape(split), expanded).withShape(result));
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(
      0, node.createReshape(
             node.createBroadcast(node.createReshape(input, split), expanded),
             result));
  return success();
}

/// Reshape, transpose, reshape: how DepthToSpace and SpaceToDepth move
/// blocks of an NCHW tensor.
LogicalResult setRearranged(NodeContext &node, ArrayRef<int64_t> split,
                            ArrayRef<int64_t> permutation,
                            ArrayRef<int64_t> result) {
  if (const Literal *input = node.getLiteral(0)) {
    node.setOutput(0, foldTranspose(input->withShape(toVector(split)),
                                    toVector(permutation))
                          .withShape(toVector(result)));
    return success();
  }
  Value input = node.getInput(0);
  if (!input)
    return failure();
  node.setOutput(
      0, node.createReshape(node.createTranspose(
                                node.createReshape(input, split), permutation),
                            result));
  return success();
}

LogicalResult convertDepthToSpace(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t b = node.getInt("blocksize", 0);
  if (shape->size() != 4 || b < 1 || (*shape)[1] % (b * b) != 0)
    return node.emitError() << "needs an NCHW input whose channels the "
                            << "square of blocksize " << b << " divides";
  auto [n, c, h, w] = std::array<int64_t, 4>{(*shape)[0], (*shape)[1],
                                             (*shape)[2], (*shape)[3]};
  std::string mode = node.getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    return node.emitError() << "unknown mode '" << mode << "'";
  SmallVector<int64_t> result = {n, c / (b * b), h * b, w * b};
  if (mode == "DCR")
    return setRearranged(node, {n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2},
                         result);
  return setRearranged(node, {n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3},
                       result);
}

LogicalResult convertSpaceToDepth(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  if (!shape)
    return failure();
  int64_t b = node.getInt("blocksize", 0);
  if (shape->size() != 4 || b < 1 || (*shape)[2] % b != 0 ||
      (*shape)[3] % b != 0)
    return node.emitError() << "needs an NCHW input whose height and width "
                            << "blocksize " << b << " divides";
  auto [n, c, h, w] = std::array<int64_t, 4>{(*shape)[0], (*shape)[1],
                                             (*shape)[2], (*shape)[3]};
  return setRearranged(node, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4},
                       {n, c * b * b, h / b, w / b});
}

/// values[1] where the index (cast to an integer, negative counting from
/// the end) equals the position along the new axis, values[0] elsewhere.
LogicalResult convertOneHot(NodeContext &node) {
  std::optional<std::vector<int64_t>> shape = getInputShape(node, 0);
  const Literal *depthLiteral = node.requireLiteral(1, "depth");
  if (!shape || !depthLiteral)
    return failure();
  if (depthLiteral->getNumElements() != 1)
    return node.emitError() << "depth must hold one value";
  int64_t depth = static_cast<int64_t>(depthLiteral->getFloat(0));
  if (depth < 1)
    return node.emitError() << "depth " << depth << " is not positive";
  std::optional<int64_t> axis =
      node.normalizeAxis(node.getInt("axis", -1), shape->size() + 1);
  std::optional<RankedTensorType> valuesType = node.getInputType(2);
  if (!axis || !valuesType)
    return failure();
  if (valuesType->getNumElements() != 2)
    return node.emitError()
           << "values must hold [off, on], got " << *valuesType;
  Value indices = node.getInput(0);
  Value values = indices ? node.getInput(2) : Value();
  if (!values)
    return failure();
  OpBuilder &b = node.getBuilder();
  Type i64 = b.getI64Type();
  if (getElementTypeOf(indices) != i64)
    indices = CastOp::create(b, node.getLoc(),
                             RankedTensorType::get(getShapeOf(indices), i64),
                             indices);
  Value wrapped = node.createSelect(
      node.createCompare(ComparePredicate::lt, indices,
                         node.createScalar(0, i64)),
      node.createBinary<AddOp>(indices, node.createScalar(depth, i64)),
      indices);
  std::vector<int64_t> expanded = *shape, positionsShape(shape->size() + 1, 1);
  expanded.insert(expanded.begin() + *axis, 1);
  positionsShape[*axis] = depth;
  std::vector<int64_t> positions(depth);
  for (int64_t i = 0; i < depth; ++i)
    positions[i] = i;
  Value hit = node.createCompare(
      ComparePredicate::eq, node.createReshape(wrapped, expanded),
      node.getImporter().materialize(
          Literal::ofInts(positions, positionsShape, DType::I64),
          node.getLoc()));
  Value flat = node.createReshape(values, {2});
  auto scalarType = RankedTensorType::get({1}, getElementTypeOf(flat));
  auto pick = [&](int64_t i) {
    return node.createReshape(SliceOp::create(b, node.getLoc(), scalarType,
                                              flat, b.getDenseI64ArrayAttr({i}),
                                              b.getDenseI64ArrayAttr({i + 1}),
                                              b.getDenseI64ArrayAttr({1})),
                              {});
  };
  node.setOutput(0, node.createSelect(hit, pick(1), pick(0)));
  return success();
}

/// Ones on diagonal k of a matrix of the input's shape: a literal.
LogicalResult convertEyeLike(NodeContext &node) {
  std::optional<RankedTensorType> type = node.getInputType(0);
  if (!type)
    return failure();
  if (type->getRank() != 2)
    return node.emitError() << "input must be a matrix, got " << *type;
  std::optional<DType> dtype;
  if (node.hasAttr("dtype")) {
    dtype = getDType(node.getInt("dtype", 0));
    if (!dtype)
      return node.emitError() << "unsupported dtype "
                              << getOnnxTypeName(node.getInt("dtype", 0));
  } else {
    for (DType candidate :
         {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64,
          DType::I32, DType::I16, DType::I8, DType::Bool})
      if (node.getImporter().getElementType(candidate) ==
          type->getElementType())
        dtype = candidate;
    if (!dtype)
      return node.emitError()
             << "unsupported element type " << type->getElementType();
  }
  int64_t rows = type->getDimSize(0), columns = type->getDimSize(1);
  int64_t k = node.getInt("k", 0);
  std::vector<int64_t> eye(rows * columns);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t column = 0; column < columns; ++column)
      eye[row * columns + column] = column - row == k;
  node.setOutput(
      0, foldCast(Literal::ofInts(eye, {rows, columns}, DType::I64), *dtype));
  return success();
}

} // namespace

void mlir::dpc::onnx_import::addShapeConverters(OpConverterMap &converters) {
  converters["Constant"] = convertConstant;
  converters["ConstantOfShape"] = convertConstantOfShape;
  converters["Shape"] = convertShape;
  converters["Size"] = convertSize;
  converters["Reshape"] = convertReshape;
  converters["Flatten"] = convertFlatten;
  converters["Squeeze"] = convertSqueeze;
  converters["Unsqueeze"] = convertUnsqueeze;
  converters["Transpose"] = convertTranspose;
  converters["Concat"] = convertConcat;
  converters["Slice"] = convertSlice;
  converters["Pad"] = convertPad;
  converters["GatherElements"] = convertGatherElements;
  converters["ScatterElements"] = convertScatterElements;
  converters["Scatter"] = convertScatterElements;
  converters["Split"] = convertSplit;
  converters["Gather"] = convertGather;
  converters["Expand"] = convertExpand;
  converters["Range"] = convertRange;
  converters["Trilu"] = convertTrilu;
  converters["Tile"] = convertTile;
  converters["DepthToSpace"] = convertDepthToSpace;
  converters["SpaceToDepth"] = convertSpaceToDepth;
  converters["OneHot"] = convertOneHot;
  converters["EyeLike"] = convertEyeLike;
}
