//===- NdIndexConverters.cpp - ONNX GatherND and ScatterND ----------------===//
//
// GatherND and ScatterND address a tensor by tuples of k indices. Both fold
// on literals (Swin's shifted-window mask is built this way at export).
// Otherwise the tuple becomes one row-major index into the tensor with its
// batch and indexed dimensions flattened, and the op becomes dpc.gather or
// dpc.scatter_add along that axis: their gradient, sharding and cost rules
// then cover these op types too.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;
using ::dpc::DType;

namespace {

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  return text + "]";
}

/// The shapes of one GatherND or ScatterND: `data` is addressed by index
/// tuples of length `k` in the last dimension of `indices`, after `batch`
/// leading dimensions that data and indices share.
struct NdIndexing {
  std::vector<int64_t> data, indices;
  int64_t batch = 0, k = 0;

  ArrayRef<int64_t> getBatchShape() const {
    return ArrayRef(data).take_front(batch);
  }
  /// The dimensions one tuple addresses.
  ArrayRef<int64_t> getIndexedShape() const {
    return ArrayRef(data).slice(batch, k);
  }
  /// What one tuple selects: the dimensions after the indexed ones.
  ArrayRef<int64_t> getSliceShape() const {
    return ArrayRef(data).drop_front(batch + k);
  }
  /// The tuples' positions: indices without their last dimension.
  ArrayRef<int64_t> getTupleShape() const {
    return ArrayRef(indices).drop_back();
  }
  int64_t getSliceSize() const { return product(getSliceShape()); }
};

/// Reads and checks the shapes of `node` (data input 0, indices input 1).
std::optional<NdIndexing> getNdIndexing(NodeContext &node, int64_t batch) {
  std::optional<RankedTensorType> data = node.getInputType(0);
  std::optional<RankedTensorType> indices = node.getInputType(1);
  if (!data || !indices)
    return std::nullopt;
  NdIndexing shapes;
  shapes.data.assign(data->getShape().begin(), data->getShape().end());
  shapes.indices.assign(indices->getShape().begin(), indices->getShape().end());
  shapes.batch = batch;
  if (!indices->getElementType().isInteger(64)) {
    node.emitError() << "indices must be int64, not "
                     << indices->getElementType();
    return std::nullopt;
  }
  if (shapes.indices.empty()) {
    node.emitError() << "indices must have rank 1 or more";
    return std::nullopt;
  }
  int64_t rank = shapes.data.size();
  shapes.k = shapes.indices.back();
  if (batch < 0 || batch >= int64_t(shapes.indices.size()) || batch > rank) {
    node.emitError() << "batch_dims " << batch << " is out of range for "
                     << "indices of rank " << shapes.indices.size();
    return std::nullopt;
  }
  if (ArrayRef(shapes.indices).take_front(batch) != shapes.getBatchShape()) {
    node.emitError() << "the first " << batch << " dimensions of data and "
                     << "indices differ";
    return std::nullopt;
  }
  if (shapes.k < 1 || shapes.k > rank - batch) {
    node.emitError() << "index tuples of length " << shapes.k
                     << " do not fit data of rank " << rank << " after "
                     << batch << " batch dimensions";
    return std::nullopt;
  }
  return shapes;
}

/// The row-major position in `data` (batch and indexed dimensions flattened)
/// of every tuple of a literal `indices`; fails on an index out of range.
std::optional<std::vector<int64_t>> foldTupleOffsets(NodeContext &node,
                                                     const NdIndexing &shapes,
                                                     const Literal &indices) {
  ArrayRef<int64_t> indexed = shapes.getIndexedShape();
  int64_t tuples = product(shapes.getTupleShape());
  int64_t perBatch =
      tuples / std::max<int64_t>(product(shapes.getBatchShape()), 1);
  std::vector<int64_t> offsets;
  offsets.reserve(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = perBatch ? t / perBatch : 0;
    for (int64_t j = 0; j < shapes.k; ++j) {
      int64_t index = indices.getInt(t * shapes.k + j);
      if (index < -indexed[j] || index >= indexed[j]) {
        node.emitError() << "index " << index << " is out of range for "
                         << "dimension " << shapes.batch + j << " of size "
                         << indexed[j];
        return std::nullopt;
      }
      offset = offset * indexed[j] + (index < 0 ? index + indexed[j] : index);
    }
    offsets.push_back(offset);
  }
  return offsets;
}

/// The same as a dpc value: an i64 tensor of the tuple shape. An index out
/// of range makes the position out of range too, so that the gather or
/// scatter it feeds reports it.
Value createTupleOffsets(NodeContext &node, const NdIndexing &shapes,
                         Value indices) {
  ArrayRef<int64_t> indexed = shapes.getIndexedShape();
  std::vector<int64_t> strides(shapes.k, 1);
  for (int64_t j = shapes.k - 1; j > 0; --j)
    strides[j - 1] = strides[j] * indexed[j];
  GraphImporter &importer = node.getImporter();
  Location loc = node.getLoc();
  std::vector<int64_t> tupleShape = {shapes.k};
  Value sizes = importer.materialize(
      Literal::ofInts(std::vector<int64_t>(indexed.begin(), indexed.end()),
                      tupleShape, DType::I64),
      loc);
  Value strideValue = importer.materialize(
      Literal::ofInts(strides, tupleShape, DType::I64), loc);
  Type i64 = node.getBuilder().getI64Type();
  Value zero = node.createScalar(0, i64);

  Value negative = node.createCompare(ComparePredicate::lt, indices, zero);
  Value wrapped = node.createSelect(
      negative, node.createBinary<AddOp>(indices, sizes), indices);
  Value inRange = node.createBinary<AndOp>(
      node.createCompare(ComparePredicate::ge, wrapped, zero),
      node.createCompare(ComparePredicate::lt, wrapped, sizes));
  Value misses = node.createSelect(inRange, zero, node.createScalar(1, i64));
  int64_t last = shapes.indices.size() - 1;
  Value offsets = node.createReduce<ReduceSumOp>(
      node.createBinary<MulOp>(wrapped, strideValue), {last}, false);
  Value anyMiss = node.createCompare(
      ComparePredicate::gt,
      node.createReduce<ReduceSumOp>(misses, {last}, false), zero);
  int64_t positions = product(shapes.getBatchShape()) * product(indexed);
  offsets =
      node.createSelect(anyMiss, node.createScalar(positions, i64), offsets);
  if (shapes.batch == 0)
    return offsets;
  // Tuple t of batch b addresses row b * prod(indexed) + offset.
  ArrayRef<int64_t> tupleShapeAll = shapes.getTupleShape();
  std::vector<int64_t> batchShape(tupleShapeAll.begin(), tupleShapeAll.end());
  for (size_t d = shapes.batch; d < batchShape.size(); ++d)
    batchShape[d] = 1;
  std::vector<int64_t> batchStarts(product(batchShape));
  for (size_t b = 0; b < batchStarts.size(); ++b)
    batchStarts[b] = int64_t(b) * product(indexed);
  return node.createBinary<AddOp>(
      offsets, importer.materialize(
                   Literal::ofInts(batchStarts, batchShape, DType::I64), loc));
}

/// The positions of the tuples in node input 1: a constant when the
/// indices are literals (checked here), else computed by the step.
Value getTupleOffsets(NodeContext &node, const NdIndexing &shapes) {
  if (const Literal *indices = node.getLiteral(1)) {
    std::optional<std::vector<int64_t>> offsets =
        foldTupleOffsets(node, shapes, *indices);
    if (!offsets)
      return {};
    std::vector<int64_t> tupleShape(shapes.getTupleShape().begin(),
                                    shapes.getTupleShape().end());
    return node.getImporter().materialize(
        Literal::ofInts(*offsets, tupleShape, DType::I64), node.getLoc());
  }
  Value indices = node.getInput(1);
  return indices ? createTupleOffsets(node, shapes, indices) : Value();
}

/// `shape` with its first `count` dimensions made one.
SmallVector<int64_t> flattenFront(ArrayRef<int64_t> shape, int64_t count) {
  SmallVector<int64_t> result = {product(shape.take_front(count))};
  llvm::append_range(result, shape.drop_front(count));
  return result;
}

LogicalResult convertGatherND(NodeContext &node) {
  std::optional<NdIndexing> shapes =
      getNdIndexing(node, node.getInt("batch_dims", 0));
  if (!shapes)
    return failure();
  std::vector<int64_t> resultShape(shapes->getTupleShape().begin(),
                                   shapes->getTupleShape().end());
  llvm::append_range(resultShape, shapes->getSliceShape());

  const Literal *indices = node.getLiteral(1);
  if (const Literal *data = node.getLiteral(0); data && indices) {
    std::optional<std::vector<int64_t>> offsets =
        foldTupleOffsets(node, *shapes, *indices);
    if (!offsets)
      return failure();
    int64_t slice = shapes->getSliceSize();
    Literal result = *data;
    result.shape = resultShape;
    result.ints.clear();
    result.floats.clear();
    for (int64_t offset : *offsets)
      for (int64_t i = 0; i < slice; ++i) {
        if (data->isFloat())
          result.floats.push_back(data->floats[offset * slice + i]);
        else
          result.ints.push_back(data->ints[offset * slice + i]);
      }
    node.setOutput(0, std::move(result));
    return success();
  }
  Value data = node.getInput(0);
  Value offsets = data ? getTupleOffsets(node, *shapes) : Value();
  if (!offsets)
    return failure();
  Value rows = node.createReshape(
      data, flattenFront(shapes->data, shapes->batch + shapes->k));
  auto type = RankedTensorType::get(resultShape, getElementTypeOf(data));
  node.setOutput(0, GatherOp::create(node.getBuilder(), node.getLoc(), type,
                                     rows, offsets, /*axis=*/0)
                        .getResult());
  return success();
}

/// ScatterND on literals, applying the updates in order as ONNX defines.
LogicalResult foldScatterND(NodeContext &node, const NdIndexing &shapes,
                            StringRef reduction, const Literal &data,
                            const Literal &indices, const Literal &updates) {
  std::optional<std::vector<int64_t>> offsets =
      foldTupleOffsets(node, shapes, indices);
  if (!offsets)
    return failure();
  // Element i of slice t lands at element i of the slice its tuple picks.
  int64_t slice = shapes.getSliceSize();
  std::vector<int64_t> targets;
  for (int64_t offset : *offsets)
    for (int64_t i = 0; i < slice; ++i)
      targets.push_back(offset * slice + i);
  Literal result = foldScatter(data, targets, updates, reduction.str());
  node.setOutput(0, std::move(result));
  return success();
}

LogicalResult convertScatterND(NodeContext &node) {
  std::string reduction = node.getString("reduction", "none");
  if (!isScatterReduction(reduction))
    return node.emitError() << "unknown reduction '" << reduction << "'";
  std::optional<NdIndexing> shapes = getNdIndexing(node, 0);
  std::optional<RankedTensorType> updatesType = node.getInputType(2);
  if (!shapes || !updatesType)
    return failure();
  SmallVector<int64_t> expected(shapes->getTupleShape());
  llvm::append_range(expected, shapes->getSliceShape());
  if (updatesType->getShape() != ArrayRef(expected))
    return node.emitError()
           << "updates have shape " << formatShape(updatesType->getShape())
           << ", the indices and data need " << formatShape(expected);

  const Literal *indices = node.getLiteral(1);
  if (node.allInputsLiteral())
    return foldScatterND(node, *shapes, reduction, *node.getLiteral(0),
                         *indices, *node.getLiteral(2));
  if (reduction != "none" && reduction != "add")
    return node.emitError() << "reduction '" << reduction << "' needs its "
                            << "inputs known at import time (dpc folds it)";
  std::optional<std::vector<int64_t>> literalOffsets;
  if (indices) {
    literalOffsets = foldTupleOffsets(node, *shapes, *indices);
    if (!literalOffsets)
      return failure();
    if (reduction == "none" && hasRepeats(*literalOffsets))
      return node.emitError() << "indices address one element twice, "
                                 "which ONNX leaves undefined";
  }
  Value data = node.getInput(0);
  Value updates = data ? node.getInput(2) : Value();
  Value tupleOffsets = updates ? getTupleOffsets(node, *shapes) : Value();
  if (!tupleOffsets)
    return failure();

  // Updates added into zeros at their rows; the rows they do not reach are
  // the data's. (With runtime indices, a row addressed twice gets the sum.)
  SmallVector<int64_t> rowsShape = flattenFront(shapes->data, shapes->k);
  Value offsets =
      node.createReshape(tupleOffsets, {product(shapes->getTupleShape())});
  int64_t tuples = getShapeOf(offsets)[0];
  SmallVector<int64_t> updateRows = {tuples};
  llvm::append_range(updateRows, shapes->getSliceShape());
  Type elementType = getElementTypeOf(data);
  OpBuilder &b = node.getBuilder();
  Value added = ScatterAddOp::create(
      b, node.getLoc(), RankedTensorType::get(rowsShape, elementType),
      node.createReshape(updates, updateRows), offsets, /*axis=*/0);
  Value rows = node.createReshape(data, rowsShape);
  Value result;
  SmallVector<int64_t> column(rowsShape.size(), 1);
  column[0] = rowsShape[0];
  if (reduction == "add") {
    result = node.createBinary<AddOp>(rows, added);
  } else if (indices) {
    // Which rows the updates replace is known now.
    std::vector<int64_t> hit(rowsShape[0], 0);
    for (int64_t offset : *literalOffsets)
      hit[offset] = 1;
    Value mask = node.getImporter().materialize(
        Literal::ofInts(hit, std::vector<int64_t>(column.begin(), column.end()),
                        DType::Bool),
        node.getLoc());
    result = node.createSelect(mask, added, rows);
  } else {
    Value ones =
        node.createBroadcast(node.createScalar(1, elementType), {tuples});
    Value hits = ScatterAddOp::create(
        b, node.getLoc(), RankedTensorType::get({rowsShape[0]}, elementType),
        ones, offsets, /*axis=*/0);
    Value hit = node.createCompare(ComparePredicate::gt,
                                   node.createReshape(hits, column),
                                   node.createScalar(0, elementType));
    result = node.createSelect(hit, added, rows);
  }
  if (!result)
    return failure();
  node.setOutput(0, node.createReshape(result, shapes->data));
  return success();
}

} // namespace

void mlir::dpc::onnx_import::addNdIndexConverters(OpConverterMap &converters) {
  converters["GatherND"] = convertGatherND;
  converters["ScatterND"] = convertScatterND;
}
