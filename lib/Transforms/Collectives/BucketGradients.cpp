//===- BucketGradients.cpp - The -dpc-bucket-gradients pass ---------------===//
//
// Many small all-reduces cost a latency each; one over their concatenation
// costs it once. Walking a block in order, all-reduces over the same group,
// kind and element type join a bucket until it holds `bucket-cap-mb`; a
// bucket is reduced where its last member was, so it may only hold members
// whose results nobody reads before that point: gradient reductions, whose
// results wait for the optimizer (once the pure ops consuming them are
// moved as late as they can go), and not a tensor-parallel reduction that
// the next op needs. ZeRO's all-gathers of the updated parameter blocks
// (along dimension 0) are bucketed alike: the gathered bucket holds each
// rank's concatenated blocks in turn, and each parameter is put back
// together from its block in every rank's part. ZeRO's reduce-scatters of
// the gradients (along dimension 0) bucket as rows: row r of the bucket
// holds every member's block r, so that each rank receives its blocks of
// all of them in one reduction. ZeRO-3's gathers of the
// parameter blocks the function takes go the other way: each is first
// moved to just before its first reader, and a bucket of them, all ready
// from the start, is gathered where its first member was, so that buckets
// follow the order in which the pass reads the parameters.
//
//===----------------------------------------------------------------------===//

#include "Scheduling.h"

#include "dpc/Transforms/Collectives/BucketCapacity.h"
#include "dpc/Transforms/Passes.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_BUCKETGRADIENTS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// Whether every use of `op`'s result comes after `point` in their block.
bool isUnusedBefore(Operation *op, Operation *point) {
  return llvm::all_of(op->getUsers(), [&](Operation *user) {
    Operation *ancestor = point->getBlock()->findAncestorOpInBlock(*user);
    return ancestor && point->isBeforeInBlock(ancestor);
  });
}

/// Whether `op` is bucketed where its bucket opens: a gather of an
/// argument of its block, or of a view made from arguments alone (ZeRO's
/// bf16 copy of a parameter block), ready wherever it is made.
template <typename Op> bool isBucketedEarly(Op op) {
  if constexpr (std::is_same_v<Op, AllGatherOp>)
    return isMadeFromArguments(*op->getBlock(), op.getInput());
  return false;
}

/// Moves each gather of arguments of `block` (with the view it gathers) to
/// just before its first reader: where it was made may be far earlier (the
/// backward pass's transposed weights are made where it begins, and moved
/// to their readers only as consumers of the gather).
void placeArgumentGathers(Block &block) {
  for (AllGatherOp gather : llvm::to_vector(block.getOps<AllGatherOp>()))
    if (isBucketedEarly(gather) && !gather.getAsync())
      if (Operation *reader = getFirstReader(block, gather.getResult()))
        moveWithOperands(gather, reader);
}

/// Replaces `members` by one all-reduce of their concatenation, placed
/// where the last member was.
void fuse(ArrayRef<AllReduceOp> members) {
  if (members.size() < 2)
    return;
  AllReduceOp last = members.back();
  OpBuilder builder(last);
  Location loc = builder.getFusedLoc(llvm::to_vector(
      llvm::map_range(members, [](AllReduceOp op) { return op.getLoc(); })));
  Type elementType =
      cast<RankedTensorType>(last.getInput().getType()).getElementType();
  SmallVector<Value> flat;
  int64_t total = 0;
  for (AllReduceOp member : members) {
    auto type = cast<RankedTensorType>(member.getInput().getType());
    auto flatType = RankedTensorType::get({type.getNumElements()}, elementType);
    flat.push_back(
        ReshapeOp::create(builder, loc, flatType, member.getInput()));
    total += type.getNumElements();
  }
  auto bucketType = RankedTensorType::get({total}, elementType);
  Value bucket = ConcatOp::create(builder, loc, bucketType, flat,
                                  builder.getI64IntegerAttr(0));
  Value reduced =
      AllReduceOp::create(builder, loc, bucketType, bucket, last.getMeshAttr(),
                          last.getAxesAttr(), last.getKindAttr());
  if (Attribute phase = last->getAttr(DpcDialect::kPhaseAttrName))
    reduced.getDefiningOp()->setAttr(DpcDialect::kPhaseAttrName, phase);
  int64_t offset = 0;
  for (AllReduceOp member : members) {
    auto type = cast<RankedTensorType>(member.getType());
    int64_t size = type.getNumElements();
    Value piece = SliceOp::create(
        builder, loc, RankedTensorType::get({size}, elementType), reduced,
        builder.getDenseI64ArrayAttr({offset}),
        builder.getDenseI64ArrayAttr({offset + size}),
        builder.getDenseI64ArrayAttr({1}));
    member.getResult().replaceAllUsesWith(
        ReshapeOp::create(builder, loc, type, piece).getResult());
    offset += size;
  }
  for (AllReduceOp member : members)
    member.erase();
}

/// Replaces `members`, all-gathers along dimension 0 over a group of k
/// ranks, by one all-gather of their flattened, concatenated blocks: rank
/// r's part of the result holds its blocks in order, so member i is the
/// concatenation over r of its piece of part r. The bucket is placed where
/// the first member was when every member gathers arguments of the block
/// (or a view of them), else where the last was.
void fuse(ArrayRef<AllGatherOp> members) {
  if (members.size() < 2)
    return;
  AllGatherOp last = members.back();
  bool ready = llvm::all_of(
      members, [](AllGatherOp member) { return isBucketedEarly(member); });
  // A ready bucket opens at its first member, with every member's view.
  if (ready)
    for (AllGatherOp member : members.drop_front())
      if (Operation *view = member.getInput().getDefiningOp())
        moveWithOperands(view, members.front());
  OpBuilder builder(ready ? members.front() : last);
  Location loc = builder.getFusedLoc(llvm::to_vector(
      llvm::map_range(members, [](AllGatherOp op) { return op.getLoc(); })));
  Type elementType =
      cast<RankedTensorType>(last.getInput().getType()).getElementType();
  SmallVector<Value> flat;
  int64_t total = 0;
  for (AllGatherOp member : members) {
    auto type = cast<RankedTensorType>(member.getInput().getType());
    flat.push_back(ReshapeOp::create(
        builder, loc,
        RankedTensorType::get({type.getNumElements()}, elementType),
        member.getInput()));
    total += type.getNumElements();
  }
  auto gatheredType = cast<RankedTensorType>(last.getType());
  int64_t ranks =
      gatheredType.getDimSize(0) /
      cast<RankedTensorType>(last.getInput().getType()).getDimSize(0);
  Value bucket = ConcatOp::create(builder, loc,
                                  RankedTensorType::get({total}, elementType),
                                  flat, builder.getI64IntegerAttr(0));
  Value gathered = AllGatherOp::create(
      builder, loc, RankedTensorType::get({ranks * total}, elementType), bucket,
      last.getMeshAttr(), last.getAxesAttr(), last.getDimAttr(),
      /*async=*/nullptr);
  if (Attribute phase = last->getAttr(DpcDialect::kPhaseAttrName))
    gathered.getDefiningOp()->setAttr(DpcDialect::kPhaseAttrName, phase);
  int64_t offset = 0;
  for (AllGatherOp member : members) {
    auto type = cast<RankedTensorType>(member.getInput().getType());
    int64_t size = type.getNumElements();
    SmallVector<Value> pieces;
    for (int64_t r = 0; r < ranks; ++r) {
      int64_t start = r * total + offset;
      pieces.push_back(SliceOp::create(
          builder, loc, RankedTensorType::get({size}, elementType), gathered,
          builder.getDenseI64ArrayAttr({start}),
          builder.getDenseI64ArrayAttr({start + size}),
          builder.getDenseI64ArrayAttr({1})));
    }
    Value whole = ConcatOp::create(
        builder, loc, RankedTensorType::get({ranks * size}, elementType),
        pieces, builder.getI64IntegerAttr(0));
    member.getResult().replaceAllUsesWith(
        ReshapeOp::create(builder, loc, member.getType(), whole).getResult());
    offset += size;
  }
  for (AllGatherOp member : members)
    member.erase();
}

/// Replaces `members`, reductions scattered along dimension 0 over a group
/// of k ranks, by one reduce-scatter of a k-row bucket: row r holds every
/// member's block r in turn (a member of n elements seen as k rows of
/// n/k), so rank r receives its blocks of all members, one after the
/// other. Placed where the last member was.
void fuse(ArrayRef<ReduceScatterOp> members) {
  if (members.size() < 2)
    return;
  ReduceScatterOp last = members.back();
  OpBuilder builder(last);
  Location loc = builder.getFusedLoc(llvm::to_vector(llvm::map_range(
      members, [](ReduceScatterOp op) { return op.getLoc(); })));
  Type elementType =
      cast<RankedTensorType>(last.getInput().getType()).getElementType();
  auto lastInput = cast<RankedTensorType>(last.getInput().getType());
  int64_t ranks = lastInput.getDimSize(0) /
                  cast<RankedTensorType>(last.getType()).getDimSize(0);
  SmallVector<Value> rows;
  int64_t width = 0;
  for (ReduceScatterOp member : members) {
    int64_t block = cast<RankedTensorType>(member.getType()).getNumElements();
    rows.push_back(ReshapeOp::create(
        builder, loc, RankedTensorType::get({ranks, block}, elementType),
        member.getInput()));
    width += block;
  }
  Value bucket = ConcatOp::create(
      builder, loc, RankedTensorType::get({ranks, width}, elementType), rows,
      builder.getI64IntegerAttr(1));
  Value scattered = ReduceScatterOp::create(
      builder, loc, RankedTensorType::get({1, width}, elementType), bucket,
      last.getMeshAttr(), last.getAxesAttr(), last.getKindAttr(),
      last.getDimAttr(), /*async=*/nullptr);
  if (Attribute phase = last->getAttr(DpcDialect::kPhaseAttrName))
    scattered.getDefiningOp()->setAttr(DpcDialect::kPhaseAttrName, phase);
  int64_t offset = 0;
  for (ReduceScatterOp member : members) {
    auto type = cast<RankedTensorType>(member.getType());
    int64_t block = type.getNumElements();
    Value piece = SliceOp::create(
        builder, loc, RankedTensorType::get({1, block}, elementType), scattered,
        builder.getDenseI64ArrayAttr({0, offset}),
        builder.getDenseI64ArrayAttr({1, offset + block}),
        builder.getDenseI64ArrayAttr({1, 1}));
    member.getResult().replaceAllUsesWith(
        ReshapeOp::create(builder, loc, type, piece).getResult());
    offset += block;
  }
  for (ReduceScatterOp member : members)
    member.erase();
}

struct BucketGradientsPass
    : public dpc::impl::BucketGradientsBase<BucketGradientsPass> {
  using BucketGradientsBase::BucketGradientsBase;

  void runOnOperation() override {
    if (!isValidBucketCapMb(bucketCapMb)) {
      emitError(getOperation().getLoc(), "--bucket-cap-mb=")
          << llvm::formatv("{0}", double(bucketCapMb))
          << " is outside (0, 1e6]";
      return signalPassFailure();
    }
    int64_t capacity = int64_t(bucketCapMb * 1024 * 1024);
    getOperation().walk([&](Block *block) { bucketBlock(*block, capacity); });
  }

  void bucketBlock(Block &block, int64_t capacity) {
    sinkConsumers(block);
    placeArgumentGathers(block);
    bucket<AllReduceOp>(block, capacity, [](AllReduceOp op) -> Attribute {
      return op.getKindAttr();
    });
    bucket<AllGatherOp>(block, capacity, [](AllGatherOp op) -> Attribute {
      // Only gathers along the outermost dimension concatenate as flat
      // vectors; the others are left alone.
      return op.getDim() == 0 ? op.getDimAttr() : Attribute();
    });
    bucket<ReduceScatterOp>(
        block, capacity, [](ReduceScatterOp op) -> Attribute {
          // Scattered along the outermost dimension, each rank's block of a
          // member is a contiguous run of it; the others are left alone.
          return op.getDim() == 0 ? op.getKindAttr() : Attribute();
        });
  }

  /// Buckets the ops of type `Op` of `block` by group and element type and
  /// `getKind` (null: the op is left alone).
  template <typename Op, typename KindFn>
  void bucket(Block &block, int64_t capacity, KindFn getKind) {
    // The last field is the pass of an op whose input is an argument: its
    // bucket is made where it opens, and must not reach into the next
    // pass (ZeRO-3 holds no parameter whole from the forward pass into
    // the backward pass).
    using Key = std::tuple<Attribute, Attribute, Attribute, Type, Attribute>;
    SmallVector<std::pair<Op, Key>> ops;
    for (Op op : block.getOps<Op>()) {
      Attribute kind = getKind(op);
      if (!kind || op.getAsync())
        continue;
      Type elementType =
          cast<RankedTensorType>(op.getInput().getType()).getElementType();
      Attribute pass;
      if (isBucketedEarly(op))
        pass = op->getAttr(DpcDialect::kPhaseAttrName);
      ops.push_back({op, Key{op.getMeshAttr(), op.getAxesAttr(), kind,
                             elementType, pass}});
    }
    // Reductions nobody reads before the last one of their kind
    // (gradients, read by the optimizer or returned) bucket among
    // themselves; those read sooner (a normalization's statistics) only
    // with their neighbours, so that none waits for a gradient bucket.
    llvm::DenseMap<Key, Op> last;
    for (auto [op, key] : ops)
      last[key] = op;
    // Open buckets in the order they opened, with their sizes.
    llvm::MapVector<std::pair<Key, unsigned>,
                    std::pair<SmallVector<Op>, int64_t>>
        open;
    for (auto [op, kindKey] : ops) {
      bool ready = isBucketedEarly(op);
      std::pair<Key, unsigned> key{kindKey, ready ? 2
                                            : isUnusedBefore(op, last[kindKey])
                                                ? 1
                                                : 0};
      auto &[members, bytes] = open[key];
      // What a bucket holds is the larger of what it sends and receives:
      // a gathered bucket is the group's size times its blocks, a
      // scattered one the members whole.
      int64_t size = int64_t(std::max(getSizeInBytes(op.getType()),
                                      getSizeInBytes(op.getInput().getType())));
      // The bucket must not overflow; unless its inputs are all ready
      // where it opens, it moves to `op`, so its members' results must not
      // be read before.
      bool fits = bytes + size <= capacity &&
                  (ready || llvm::all_of(members, [&](Op member) {
                     return isUnusedBefore(member, op);
                   }));
      if (!fits) {
        fuse(members);
        members.clear();
        bytes = 0;
      }
      members.push_back(op);
      bytes += size;
    }
    for (auto &entry : open)
      fuse(entry.second.first);
  }
};

} // namespace
