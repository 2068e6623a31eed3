//===- CollectiveOps.cpp - all_reduce, reduce_scatter, all_gather, ... ----===//
//
// The verifiers of the collectives: (C1) and (C2) name the group on a mesh
// and are shared; the rest relate the local shapes through the group's
// size.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::dpc;

/// The size of `op`'s group (C1, C2), or failure with a diagnostic.
static FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr meshName,
                                      ArrayAttr axes) {
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, meshName);
  if (!mesh)
    return op->emitOpError("names ")
           << meshName << ", which is no dpc.mesh (C1)";
  if (axes.empty())
    return op->emitOpError("has an empty group: it names no axis (C2)");
  if (op->hasAttr("async") && op->getNumResults() == 1)
    for (Operation *user : op->getResult(0).getUsers())
      if (!isa<WaitOp>(user))
        return op->emitOpError("is async, but ")
               << user->getName()
               << " reads its result without a dpc.wait (C3)";
  llvm::StringSet<> seen;
  int64_t size = 1;
  for (Attribute attr : axes) {
    StringRef axis = cast<StringAttr>(attr).getValue();
    std::optional<int64_t> axisSize = mesh.getAxisSize(axis);
    if (!axisSize)
      return op->emitOpError("axis '")
             << axis << "' is not an axis of mesh " << meshName << " (C2)";
    if (!seen.insert(axis).second)
      return op->emitOpError("axis '") << axis << "' appears twice (C2)";
    size *= *axisSize;
  }
  return size;
}

static LogicalResult verifyMeanIsFloat(Operation *op, ReductionKind kind,
                                       Type type, StringRef constraint) {
  if (kind == ReductionKind::mean &&
      !isa<FloatType>(cast<ShapedType>(type).getElementType()))
    return op->emitOpError("averages ")
           << type << ", which is not floating-point (" << constraint << ")";
  return success();
}

/// The shape of `type` with dimension `dim` scaled by `numerator /
/// denominator`.
static SmallVector<int64_t> scaleDim(Type type, int64_t dim, int64_t numerator,
                                     int64_t denominator) {
  SmallVector<int64_t> shape(cast<ShapedType>(type).getShape());
  shape[dim] = shape[dim] * numerator / denominator;
  return shape;
}

static LogicalResult verifyResult(Operation *op, Type input, Type result,
                                  ArrayRef<int64_t> shape,
                                  StringRef constraint) {
  auto inputType = cast<ShapedType>(input);
  auto resultType = cast<ShapedType>(result);
  if (resultType.getElementType() != inputType.getElementType() ||
      resultType.getShape() != shape)
    return op->emitOpError("result type ")
           << result << " is not " << inputType.clone(shape) << " ("
           << constraint << ")";
  return success();
}

static LogicalResult verifyDim(Operation *op, Type type, int64_t dim,
                               StringRef name, StringRef constraint) {
  int64_t rank = cast<ShapedType>(type).getRank();
  if (dim < 0 || dim >= rank)
    return op->emitOpError("'")
           << name << "' " << dim << " is not a dimension of " << type << " ("
           << constraint << ")";
  return success();
}

static LogicalResult verifyDivides(Operation *op, Type type, int64_t dim,
                                   int64_t groupSize, StringRef constraint) {
  int64_t size = cast<ShapedType>(type).getDimSize(dim);
  if (size % groupSize != 0)
    return op->emitOpError("dimension ")
           << dim << " of size " << size << " does not split over a group of "
           << groupSize << " (" << constraint << ")";
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyGroup(*this, getMeshAttr(), getAxes())))
    return failure();
  // (C4) is AllTypesMatch's.
  return verifyMeanIsFloat(*this, getKind(), getInput().getType(), "C5");
}

LogicalResult ReduceScatterOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  int64_t dim = getDimAttr().getInt();
  Type input = getInput().getType();
  if (failed(group) || failed(verifyDim(*this, input, dim, "dim", "C4")) ||
      failed(verifyDivides(*this, input, dim, *group, "C4")) ||
      failed(verifyResult(*this, input, getResult().getType(),
                          scaleDim(input, dim, 1, *group), "C5")))
    return failure();
  return verifyMeanIsFloat(*this, getKind(), input, "C6");
}

LogicalResult AllGatherOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  int64_t dim = getDimAttr().getInt();
  Type input = getInput().getType();
  if (failed(group) || failed(verifyDim(*this, input, dim, "dim", "C4")))
    return failure();
  return verifyResult(*this, input, getResult().getType(),
                      scaleDim(input, dim, *group, 1), "C5");
}

LogicalResult AllSliceOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  int64_t dim = getDimAttr().getInt();
  Type input = getInput().getType();
  if (failed(group) || failed(verifyDim(*this, input, dim, "dim", "C4")) ||
      failed(verifyDivides(*this, input, dim, *group, "C4")))
    return failure();
  return verifyResult(*this, input, getResult().getType(),
                      scaleDim(input, dim, 1, *group), "C5");
}

LogicalResult AllToAllOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  int64_t split = getSplitDimAttr().getInt();
  int64_t concat = getConcatDimAttr().getInt();
  Type input = getInput().getType();
  if (failed(group) ||
      failed(verifyDim(*this, input, split, "split_dim", "C4")) ||
      failed(verifyDim(*this, input, concat, "concat_dim", "C4")) ||
      failed(verifyDivides(*this, input, split, *group, "C4")))
    return failure();
  SmallVector<int64_t> shape = scaleDim(input, split, 1, *group);
  shape[concat] *= *group;
  return verifyResult(*this, input, getResult().getType(), shape, "C5");
}

/// (C3) of send and recv: the partner is another rank.
static LogicalResult verifyShift(Operation *op, FlatSymbolRefAttr mesh,
                                 ArrayAttr axes, int64_t shift) {
  FailureOr<int64_t> group = verifyGroup(op, mesh, axes);
  if (failed(group))
    return failure();
  if (shift % *group == 0)
    return op->emitOpError("shift ")
           << shift << " is a multiple of the group's size " << *group
           << ": a rank would send to itself (C3)";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyShift(*this, getMeshAttr(), getAxes(), getShift());
}

LogicalResult RecvOp::verify() {
  return verifyShift(*this, getMeshAttr(), getAxes(), getShift());
}

LogicalResult WaitOp::verify() {
  // (C1) is AllTypesMatch's.
  Operation *start = getInput().getDefiningOp();
  if (!start || !start->hasTrait<OpTrait::Collective>() ||
      !start->hasAttr("async"))
    return emitOpError("waits for a value no async collective produces (C2)");
  return success();
}

// Collectives move data; the cost model prices them as communication.
double AllReduceOp::getFlops() { return 0.0; }
double ReduceScatterOp::getFlops() { return 0.0; }
double AllGatherOp::getFlops() { return 0.0; }
double AllToAllOp::getFlops() { return 0.0; }
double AllSliceOp::getFlops() { return 0.0; }
double WaitOp::getFlops() { return 0.0; }
double SendOp::getFlops() { return 0.0; }
double RecvOp::getFlops() { return 0.0; }
