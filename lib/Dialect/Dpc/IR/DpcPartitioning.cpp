//===- DpcPartitioning.cpp - Ops that rewrite themselves per rank ---------===//
//
// The `partition` methods of the ops for which setting local result types
// is not enough: attributes that hold global sizes, and results whose
// pending reduction needs a weight the planned collective cannot see.
//
//===----------------------------------------------------------------------===//

#include "GradientBuilder.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "llvm/ADT/SetVector.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dpc;

static void setResultTypes(Operation *op, TypeRange types) {
  for (auto [result, type] : llvm::zip_equal(op->getResults(), types))
    result.setType(type);
}

// Only dimensions taken whole may be split (the rule keeps the others
// whole), and a split one is taken whole locally: its limit becomes the
// local size.
LogicalResult SliceOp::partition(OpBuilder &, TypeRange localResultTypes) {
  ArrayRef<int64_t> global =
      cast<RankedTensorType>(getResult().getType()).getShape();
  ArrayRef<int64_t> local =
      cast<RankedTensorType>(localResultTypes.front()).getShape();
  SmallVector<int64_t> limit(getLimit());
  for (auto [dim, size] : llvm::enumerate(local))
    if (size != global[dim])
      limit[dim] = size;
  setLimit(limit);
  setResultTypes(*this, localResultTypes);
  return success();
}

/// The mesh axes that split the labels of a loss, in the order they appear.
static SmallVector<StringRef> getSampleAxes(Operation *op,
                                            FlatSymbolRefAttr &mesh) {
  auto operands =
      op->getAttrOfType<ArrayAttr>(DpcDialect::kOperandShardingsAttrName);
  SmallVector<StringRef> axes;
  if (!operands || operands.size() < 2)
    return axes;
  auto labels = cast<ShardingAttr>(operands[1]);
  mesh = labels.getMesh();
  for (unsigned dim = 0; dim < labels.getRank(); ++dim)
    llvm::append_range(axes, labels.getDimAxes(dim));
  return axes;
}

// A mean over samples split across devices is a pending mean that must
// weight each device's part by its count of samples not ignored. The
// planned collective averages plainly, so each device contributes
// `local sum / average count`: the plain average of these is the total
// sum over the total count, whatever each device's count.
template <typename LossOp>
static LogicalResult partitionLoss(LossOp op, OpBuilder &builder,
                                   TypeRange localResultTypes) {
  setResultTypes(op, localResultTypes);
  FlatSymbolRefAttr mesh;
  SmallVector<StringRef> axes = getSampleAxes(op, mesh);
  if (op.getReduction() != LossReduction::mean || axes.empty())
    return success();
  op.setReduction(LossReduction::sum);

  builder.setInsertionPointAfter(op);
  GradientBuilder gb(builder, op.getLoc());
  Value labels = op.getLabels();
  auto labelsType = cast<RankedTensorType>(labels.getType());
  Type elementType =
      cast<RankedTensorType>(op.getInput().getType()).getElementType();
  Type labelType = labelsType.getElementType();
  auto scalarLabel = RankedTensorType::get({}, labelType);
  Value ignoreIndex = ConstantOp::create(
      builder, op.getLoc(), scalarLabel,
      DenseElementsAttr::get(scalarLabel,
                             IntegerAttr::get(labelType, op.getIgnoreIndex())));
  Value kept = gb.cast(gb.compare(ComparePredicate::ne, labels, ignoreIndex),
                       elementType);
  SmallVector<int64_t> dims(labelsType.getRank());
  std::iota(dims.begin(), dims.end(), 0);
  Value count = gb.reduceSum(kept, dims, /*keepDims=*/false);
  SmallVector<Attribute> axisNames;
  for (StringRef axis : axes)
    axisNames.push_back(builder.getStringAttr(axis));
  Value averageCount = AllReduceOp::create(
      builder, op.getLoc(), count.getType(), count, mesh,
      builder.getArrayAttr(axisNames),
      ReductionKindAttr::get(builder.getContext(), ReductionKind::mean));
  Value weighted = gb.div(op.getResult(), averageCount);
  op.getResult().replaceAllUsesExcept(weighted, weighted.getDefiningOp());
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::partition(OpBuilder &builder,
                                               TypeRange localResultTypes) {
  return partitionLoss(*this, builder, localResultTypes);
}

LogicalResult NllLossOp::partition(OpBuilder &builder,
                                   TypeRange localResultTypes) {
  return partitionLoss(*this, builder, localResultTypes);
}

// Synchronized batch norm. Where training-mode statistics span split
// dimensions, each rank sums its part of every channel and the sums are
// all-reduced over the splitting axes: the mean's first, then the squared
// deviations from it, two passes as one device computes them. The op then
// normalizes the rank's part with those statistics in its inference form,
// and the running statistics are updated from them as training would.
LogicalResult BatchNormOp::partition(OpBuilder &builder,
                                     TypeRange localResultTypes) {
  ArrayRef<int64_t> global =
      cast<RankedTensorType>(getResult().getType()).getShape();
  setResultTypes(*this, localResultTypes);
  auto operands =
      (*this)->getAttrOfType<ArrayAttr>(DpcDialect::kOperandShardingsAttrName);
  if (!getTraining() || !operands)
    return success();
  auto input = cast<ShardingAttr>(operands[0]);
  auto mesh =
      SymbolTable::lookupNearestSymbolFrom<MeshOp>(*this, input.getMesh());
  // The axes that split the statistics; one of size 1 splits nothing.
  SmallVector<Attribute> axes;
  int64_t count = 1;
  SmallVector<int64_t> reduced;
  for (auto [dim, size] : llvm::enumerate(global)) {
    if (dim == 1)
      continue;
    count *= size;
    reduced.push_back(dim);
    for (StringRef axis : input.getDimAxes(dim))
      if (mesh.getAxisSize(axis).value_or(1) > 1)
        axes.push_back(builder.getStringAttr(axis));
  }
  if (axes.empty())
    return success();
  if (count < 2)
    return emitOpError("in training mode needs more than one value per "
                       "channel, got ")
           << count;

  Location loc = getLoc();
  GradientBuilder gb(builder, loc);
  auto sumOverRanks = [&](Value local) -> Value {
    return AllReduceOp::create(
        builder, loc, local.getType(), local, input.getMesh(),
        builder.getArrayAttr(axes),
        ReductionKindAttr::get(builder.getContext(), ReductionKind::sum));
  };
  Value x = getInput();
  SmallVector<int64_t> channelShape(global.size(), 1);
  channelShape[1] = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Value scaleLike = getScale();
  Value total = gb.scalar(double(count), scaleLike);
  // Two passes, as one device computes them: the squared deviations are
  // the same terms, summed in another order (a one-pass or combined form
  // would round differently from the single-device step).
  Value mean =
      gb.div(sumOverRanks(gb.reduceSum(x, reduced, /*keepDims=*/false)), total);
  Value centered = gb.sub(x, gb.reshape(mean, channelShape));
  Value squares = sumOverRanks(
      gb.reduceSum(gb.mul(centered, centered), reduced, /*keepDims=*/false));
  Value variance = gb.div(squares, total);

  // Constants exact in the element type, the rest computed as the op's
  // kernel computes it: `1 - momentum` and the unbiased variance's divisor.
  Value keep = gb.scalar(getMomentum().convertToDouble(), scaleLike);
  Value take = gb.sub(gb.scalar(1.0, scaleLike), keep);
  Value unbiased = gb.div(squares, gb.scalar(double(count - 1), scaleLike));
  Value newMean = gb.add(gb.mul(keep, getRunningMean()), gb.mul(take, mean));
  Value newVariance =
      gb.add(gb.mul(keep, getRunningVar()), gb.mul(take, unbiased));
  getNewRunningMean().replaceAllUsesWith(newMean);
  getNewRunningVar().replaceAllUsesWith(newVariance);
  getBatchMean().replaceAllUsesWith(mean);
  getBatchVar().replaceAllUsesWith(variance);
  getRunningMeanMutable().assign(mean);
  getRunningVarMutable().assign(variance);
  setTraining(false);
  return success();
}

/// This rank's block index along `axes` of `mesh` (the axes of one split
/// dimension, major to minor), as a scalar: its slice of 0, 1, ..., k-1.
static Value getBlockIndex(OpBuilder &builder, Location loc,
                           FlatSymbolRefAttr meshName, ArrayRef<StringRef> axes,
                           Operation *scope) {
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(scope, meshName);
  int64_t blocks = 1;
  SmallVector<Attribute> names;
  for (StringRef axis : axes) {
    blocks *= *mesh.getAxisSize(axis);
    names.push_back(builder.getStringAttr(axis));
  }
  auto iotaType = RankedTensorType::get({blocks}, builder.getI64Type());
  SmallVector<int64_t> iota(blocks);
  std::iota(iota.begin(), iota.end(), 0);
  Value all = ConstantOp::create(
      builder, loc, iotaType,
      DenseElementsAttr::get(iotaType, ArrayRef<int64_t>(iota)));
  Value mine = AllSliceOp::create(
      builder, loc, RankedTensorType::get({1}, builder.getI64Type()), all,
      meshName, builder.getArrayAttr(names), builder.getI64IntegerAttr(0),
      UnitAttr());
  return ReshapeOp::create(
      builder, loc, RankedTensorType::get({}, builder.getI64Type()), mine);
}

static Value getI64Scalar(OpBuilder &builder, Location loc, int64_t value) {
  auto type = RankedTensorType::get({}, builder.getI64Type());
  return ConstantOp::create(
      builder, loc, type,
      DenseElementsAttr::get(type, builder.getI64IntegerAttr(value)));
}

// The mask of an element depends on its index in the whole tensor (the
// `offset` of the first element plus its row-major position). A block
// split along dimension 0 alone is contiguous there: its first element
// sits `block index * block size` further. Blocks of other splits are not
// contiguous, which one offset cannot describe.
LogicalResult DropoutOp::partition(OpBuilder &builder,
                                   TypeRange localResultTypes) {
  auto local = cast<RankedTensorType>(localResultTypes.front());
  auto global = cast<RankedTensorType>(getResult().getType());
  setResultTypes(*this, localResultTypes);
  if (local == global || getRatio().convertToDouble() == 0.0)
    return success();
  auto operands =
      (*this)->getAttrOfType<ArrayAttr>(DpcDialect::kOperandShardingsAttrName);
  auto sharding = cast<ShardingAttr>(operands[0]);
  for (unsigned dim = 1; dim < sharding.getRank(); ++dim)
    if (!sharding.getDimAxes(dim).empty())
      return emitOpError("with dimension ")
             << dim << " split is not partitioned yet: its block is not "
             << "contiguous in the whole tensor, which the mask is drawn "
             << "over; plan only the first dimension split";
  Location loc = getLoc();
  Value block = getBlockIndex(builder, loc, sharding.getMesh(),
                              sharding.getDimAxes(0), *this);
  Value stride = getI64Scalar(builder, loc, local.getNumElements());
  auto scalar = RankedTensorType::get({}, builder.getI64Type());
  Value skip = MulOp::create(builder, loc, scalar, block, stride);
  setOperand(2, AddOp::create(builder, loc, scalar, getOffset(), skip));
  return success();
}

// Megatron-LM's vocabulary-parallel lookup: with the gathered axis split,
// each device holds rows [block * L, (block + 1) * L) of the table. It looks
// up the indices that fall there and gives zeros for the others, so the
// sum over the devices (the rule's pending partial sum) is the lookup.
LogicalResult GatherOp::partition(OpBuilder &builder,
                                  TypeRange localResultTypes) {
  int64_t axis = getAxis();
  auto operands =
      (*this)->getAttrOfType<ArrayAttr>(DpcDialect::kOperandShardingsAttrName);
  auto table = operands ? cast<ShardingAttr>(operands[0]) : ShardingAttr();
  if (!table || table.getDimAxes(axis).empty()) {
    setResultTypes(*this, localResultTypes);
    return success();
  }
  Location loc = getLoc();
  auto localTable = cast<RankedTensorType>(getInput().getType());
  int64_t rows = localTable.getDimSize(axis);
  int64_t blocks = 1;
  auto mesh =
      SymbolTable::lookupNearestSymbolFrom<MeshOp>(*this, table.getMesh());
  for (StringRef name : table.getDimAxes(axis))
    blocks *= *mesh.getAxisSize(name);
  GradientBuilder gb(builder, loc);
  Value indices = getIndices();
  auto indexType = cast<RankedTensorType>(indices.getType());
  if (!indexType.getElementType().isInteger(64))
    indices = gb.cast(indices, builder.getI64Type());
  // Negative indices count from the end of the whole axis.
  Value zero = getI64Scalar(builder, loc, 0);
  Value whole = getI64Scalar(builder, loc, rows * blocks);
  Value positions = gb.select(gb.compare(ComparePredicate::lt, indices, zero),
                              gb.add(indices, whole), indices);
  Value first = MulOp::create(builder, loc,
                              RankedTensorType::get({}, builder.getI64Type()),
                              getBlockIndex(builder, loc, table.getMesh(),
                                            table.getDimAxes(axis), *this),
                              getI64Scalar(builder, loc, rows));
  Value shifted = gb.sub(positions, first);
  Value inside = AndOp::create(
      builder, loc,
      cast<RankedTensorType>(shifted.getType()).clone(builder.getI1Type()),
      gb.compare(ComparePredicate::ge, shifted, zero),
      gb.compare(ComparePredicate::lt, shifted,
                 getI64Scalar(builder, loc, rows)));
  Value safe = gb.select(inside, shifted, zero);
  setOperand(1, safe);
  setResultTypes(*this, localResultTypes);
  // The mask, shaped to broadcast over the gathered slices.
  builder.setInsertionPointAfter(*this);
  auto result = cast<RankedTensorType>(getResult().getType());
  SmallVector<int64_t> maskShape(axis, 1);
  llvm::append_range(maskShape,
                     cast<RankedTensorType>(safe.getType()).getShape());
  maskShape.append(localTable.getRank() - axis - 1, 1);
  Value mask = gb.reshape(gb.cast(inside, result.getElementType()), maskShape);
  Value masked = gb.mul(getResult(), mask);
  getResult().replaceAllUsesExcept(masked, masked.getDefiningOp());
  return success();
}
