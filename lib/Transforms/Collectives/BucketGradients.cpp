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
// together from its block in every rank's part.
//
//===----------------------------------------------------------------------===//

#include "Scheduling.h"

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
/// concatenation over r of its piece of part r.
void fuse(ArrayRef<AllGatherOp> members) {
  if (members.size() < 2)
    return;
  AllGatherOp last = members.back();
  OpBuilder builder(last);
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

struct BucketGradientsPass
    : public dpc::impl::BucketGradientsBase<BucketGradientsPass> {
  using BucketGradientsBase::BucketGradientsBase;

  void runOnOperation() override {
    if (!(bucketCapMb > 0) || bucketCapMb > 1e6) {
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
    bucket<AllReduceOp>(block, capacity, [](AllReduceOp op) -> Attribute {
      return op.getKindAttr();
    });
    bucket<AllGatherOp>(block, capacity, [](AllGatherOp op) -> Attribute {
      // Only gathers along the outermost dimension concatenate as flat
      // vectors; the others are left alone.
      return op.getDim() == 0 ? op.getDimAttr() : Attribute();
    });
  }

  /// Buckets the ops of type `Op` of `block` by group and element type and
  /// `getKind` (null: the op is left alone).
  template <typename Op, typename KindFn>
  void bucket(Block &block, int64_t capacity, KindFn getKind) {
    using Key = std::tuple<Attribute, Attribute, Attribute, Type>;
    SmallVector<std::pair<Op, Key>> ops;
    for (Op op : block.getOps<Op>()) {
      Attribute kind = getKind(op);
      if (!kind || op.getAsync())
        continue;
      Type elementType =
          cast<RankedTensorType>(op.getInput().getType()).getElementType();
      ops.push_back(
          {op, Key{op.getMeshAttr(), op.getAxesAttr(), kind, elementType}});
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
      std::pair<Key, unsigned> key{kindKey,
                                   isUnusedBefore(op, last[kindKey]) ? 1 : 0};
      auto &[members, bytes] = open[key];
      int64_t size = int64_t(getSizeInBytes(op.getInput().getType()));
      // The bucket moves to `op`: its members' results must not be read
      // before, and it must not overflow.
      bool fits =
          bytes + size <= capacity && llvm::all_of(members, [&](Op member) {
            return isUnusedBefore(member, op);
          });
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
