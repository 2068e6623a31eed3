//===- ReshardLowering.cpp - A change of layout as collectives ------------===//
//
// A layout is, per dimension, the axes that split it (major to minor), and
// the axes over which the value is a pending partial result. A reshard
// walks from one layout to the other one step at a time, each step one
// collective on the local block, so that every intermediate block is the
// block of a valid layout.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Partition/ReshardLowering.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::dpc;

namespace {

using Axes = SmallVector<StringRef>;

struct Layout {
  SmallVector<Axes> dims;
  llvm::MapVector<StringRef, ReductionKind> partial;

  explicit Layout(ShardingAttr sharding) {
    for (unsigned dim = 0; dim < sharding.getRank(); ++dim)
      dims.push_back(sharding.getDimAxes(dim));
    for (auto [axis, kind] :
         llvm::zip_equal(sharding.getPartialAxes(), sharding.getPartialKinds()))
      partial.insert({cast<StringAttr>(axis).getValue(), kind});
  }
};

/// Whether `prefix` begins `axes`.
bool startsWith(ArrayRef<StringRef> axes, ArrayRef<StringRef> prefix) {
  return prefix.size() <= axes.size() &&
         axes.take_front(prefix.size()) == prefix;
}

class Lowering {
public:
  Lowering(OpBuilder &builder, Location loc, MeshOp mesh, Value value)
      : builder(builder), loc(loc), mesh(mesh), value(value) {}

  LogicalResult run(Layout have, const Layout &want);
  Value getValue() const { return value; }

private:
  ArrayAttr getAxesAttr(ArrayRef<StringRef> axes) {
    SmallVector<Attribute> names;
    for (StringRef axis : axes)
      names.push_back(builder.getStringAttr(axis));
    return builder.getArrayAttr(names);
  }
  int64_t getGroupSize(ArrayRef<StringRef> axes) {
    int64_t size = 1;
    for (StringRef axis : axes)
      size *= *mesh.getAxisSize(axis);
    return size;
  }
  /// The current block's type with `dim` scaled by `numerator / denominator`.
  RankedTensorType scaled(int64_t dim, int64_t numerator, int64_t denominator) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = shape[dim] * numerator / denominator;
    return type.clone(shape);
  }
  FlatSymbolRefAttr getMeshRef() {
    return FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  }

  void reduce(Layout &have, const Layout &want, ReductionKind kind, Axes axes);

  OpBuilder &builder;
  Location loc;
  MeshOp mesh;
  Value value;
};

} // namespace

/// Reduces the pending partial axes `axes` (all of `kind`): those the target
/// splits a dimension over, right after the axes already splitting it, with
/// a reduce-scatter on that dimension, the rest with an all-reduce. Of
/// several reduce-scatters the one over the innermost axes goes first: an
/// inner axis is the faster link (the node's), and each later one reduces
/// a block that many times smaller.
void Lowering::reduce(Layout &have, const Layout &want, ReductionKind kind,
                      Axes axes) {
  auto position = [&](StringRef axis) {
    ArrayRef<Attribute> names = mesh.getAxisNames().getValue();
    return llvm::find_if(names,
                         [&](Attribute name) {
                           return cast<StringAttr>(name).getValue() == axis;
                         }) -
           names.begin();
  };
  for (;;) {
    std::optional<unsigned> next;
    Axes nextAxes;
    int64_t innermost = -1;
    for (auto [dim, wanted] : llvm::enumerate(want.dims)) {
      const Axes &held = have.dims[dim];
      if (!startsWith(wanted, held) || wanted.size() == held.size())
        continue;
      Axes extra(ArrayRef<StringRef>(wanted).drop_front(held.size()));
      if (!llvm::all_of(
              extra, [&](StringRef a) { return llvm::is_contained(axes, a); }))
        continue;
      int64_t inner = 0;
      for (StringRef axis : extra)
        inner = std::max<int64_t>(inner, position(axis));
      if (inner > innermost) {
        next = dim;
        nextAxes = extra;
        innermost = inner;
      }
    }
    if (!next)
      break;
    value = ReduceScatterOp::create(
        builder, loc, scaled(*next, 1, getGroupSize(nextAxes)), value,
        getMeshRef(), getAxesAttr(nextAxes),
        ReductionKindAttr::get(builder.getContext(), kind),
        builder.getI64IntegerAttr(*next));
    have.dims[*next] = want.dims[*next];
    llvm::erase_if(
        axes, [&](StringRef a) { return llvm::is_contained(nextAxes, a); });
  }
  if (!axes.empty())
    value = AllReduceOp::create(
        builder, loc, value.getType(), value, getMeshRef(), getAxesAttr(axes),
        ReductionKindAttr::get(builder.getContext(), kind));
}

LogicalResult Lowering::run(Layout have, const Layout &want) {
  // 1. Pending partial results the target does not keep as they are.
  llvm::MapVector<ReductionKind, Axes> toReduce;
  for (auto [axis, kind] : have.partial) {
    auto kept = want.partial.find(axis);
    if (kept == want.partial.end() || kept->second != kind)
      toReduce[kind].push_back(axis);
  }
  for (auto &[kind, axes] : toReduce) {
    reduce(have, want, kind, axes);
    for (StringRef axis : axes)
      have.partial.erase(axis);
  }
  // A replicated value is its own mean, maximum and minimum, never its own
  // sum.
  for (auto [axis, kind] : want.partial) {
    if (have.partial.count(axis))
      continue;
    if (kind == ReductionKind::sum)
      return emitError(loc, "cannot make a value a pending sum over '")
             << axis << "': it is not a partial sum there";
  }

  // 2. Axes that move from the end of one dimension to the end of another.
  for (unsigned from = 0; from < have.dims.size(); ++from) {
    for (unsigned to = 0; to < have.dims.size(); ++to) {
      if (from == to || !startsWith(have.dims[from], want.dims[from]) ||
          !startsWith(want.dims[to], have.dims[to]))
        continue;
      ArrayRef<StringRef> leaving = ArrayRef<StringRef>(have.dims[from])
                                        .drop_front(want.dims[from].size());
      ArrayRef<StringRef> arriving =
          ArrayRef<StringRef>(want.dims[to]).drop_front(have.dims[to].size());
      if (leaving.empty() || leaving != arriving)
        continue;
      int64_t group = getGroupSize(leaving);
      RankedTensorType type = scaled(to, 1, group);
      SmallVector<int64_t> shape(type.getShape());
      shape[from] *= group;
      value = AllToAllOp::create(builder, loc, type.clone(shape), value,
                                 getMeshRef(), getAxesAttr(leaving),
                                 builder.getI64IntegerAttr(to),
                                 builder.getI64IntegerAttr(from));
      have.dims[to] = want.dims[to];
      have.dims[from] = want.dims[from];
    }
  }

  // 3. Gather what is split beyond the part both layouts share, then
  // 4. slice what the target splits beyond it.
  SmallVector<size_t> shared;
  for (auto [held, wanted] : llvm::zip_equal(have.dims, want.dims)) {
    size_t common = 0;
    while (common < held.size() && common < wanted.size() &&
           held[common] == wanted[common])
      ++common;
    shared.push_back(common);
  }
  for (auto [dim, held] : llvm::enumerate(have.dims)) {
    if (held.size() == shared[dim])
      continue;
    Axes extra(ArrayRef<StringRef>(held).drop_front(shared[dim]));
    value = AllGatherOp::create(
        builder, loc, scaled(dim, getGroupSize(extra), 1), value, getMeshRef(),
        getAxesAttr(extra), builder.getI64IntegerAttr(dim));
    held.resize(shared[dim]);
  }
  for (auto [dim, wanted] : llvm::enumerate(want.dims)) {
    if (wanted.size() == shared[dim])
      continue;
    Axes extra(ArrayRef<StringRef>(wanted).drop_front(shared[dim]));
    value = AllSliceOp::create(
        builder, loc, scaled(dim, 1, getGroupSize(extra)), value, getMeshRef(),
        getAxesAttr(extra), builder.getI64IntegerAttr(dim));
  }
  return success();
}

FailureOr<Value> mlir::dpc::lowerReshard(OpBuilder &builder, Location loc,
                                         Value local, ShardingAttr from,
                                         ShardingAttr to, MeshOp mesh) {
  Lowering lowering(builder, loc, mesh, local);
  if (failed(lowering.run(Layout(getCanonicalSharding(from, mesh)),
                          Layout(getCanonicalSharding(to, mesh)))))
    return failure();
  return lowering.getValue();
}
