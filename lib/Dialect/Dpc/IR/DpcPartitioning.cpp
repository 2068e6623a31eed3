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
  auto operands = op->getAttrOfType<ArrayAttr>(
      DpcDialect::kOperandShardingsAttrName);
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
      DenseElementsAttr::get(
          scalarLabel, IntegerAttr::get(labelType, op.getIgnoreIndex())));
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

// The mask of an element depends on its index in the whole tensor, which a
// device's block does not know yet.
LogicalResult DropoutOp::partition(OpBuilder &, TypeRange localResultTypes) {
  if (getRatio().convertToDouble() != 0.0 &&
      localResultTypes.front() != getResult().getType())
    return emitOpError("with a split operand is not partitioned yet: its mask "
                       "depends on each element's index in the whole tensor; "
                       "plan it replicated");
  setResultTypes(*this, localResultTypes);
  return success();
}

// A split gathered axis needs each device's row offset to pick its rows.
LogicalResult GatherOp::partition(OpBuilder &, TypeRange localResultTypes) {
  int64_t axis = getAxis();
  auto operands = (*this)->getAttrOfType<ArrayAttr>(
      DpcDialect::kOperandShardingsAttrName);
  if (operands &&
      !cast<ShardingAttr>(operands[0]).getDimAxes(axis).empty())
    return emitOpError("with its gathered axis split is not partitioned yet "
                       "(vocabulary-parallel lookup); plan that axis whole");
  setResultTypes(*this, localResultTypes);
  return success();
}
