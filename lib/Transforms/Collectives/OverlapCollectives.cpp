//===- OverlapCollectives.cpp - The -dpc-overlap-collectives pass ---------===//
//
// A collective that starts as soon as its operand is ready and is waited
// for only where its result is first read leaves the compute in between
// to run while it moves data: gradient reductions under the rest of the
// backward pass, tensor-parallel exchanges under independent compute.
//
//===----------------------------------------------------------------------===//

#include "Scheduling.h"

#include "dpc/Transforms/Passes.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_OVERLAPCOLLECTIVES
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

struct OverlapCollectivesPass
    : public dpc::impl::OverlapCollectivesBase<OverlapCollectivesPass> {
  void runOnOperation() override {
    getOperation().walk([&](Block *block) { overlapBlock(*block); });
  }

  void overlapBlock(Block &block) {
    sinkConsumers(block);
    sinkRecomputation(block);
    SmallVector<Operation *> collectives;
    for (Operation &op : block)
      if (isCommunicating(&op) && !op.hasAttr("async"))
        collectives.push_back(&op);
    // A gather of arguments (a ZeRO-3 parameter, or a bucket of them)
    // started as soon as it could be would hold every whole parameter from
    // the block's start: it starts one gather ahead instead, when the
    // previous one's first reader runs, as ZeRO-3's prefetch does, and not
    // before its pass begins (its first computing op: a constant of the
    // pass may be made earlier).
    DenseMap<Attribute, Operation *> passBegins;
    for (Operation &op : block)
      if (Attribute phase = op.getAttr(DpcDialect::kPhaseAttrName);
          phase && !isCommunicating(&op) &&
          !op.hasTrait<::mlir::OpTrait::ConstantLike>())
        passBegins.try_emplace(phase, &op);
    SmallVector<std::pair<Operation *, Operation *>> parameterGathers;
    for (Operation *op : collectives)
      if (isa<AllGatherOp>(op) && isMadeFromArguments(block, op->getOperand(0)))
        if (Operation *reader = getFirstReader(block, op->getResult(0)))
          parameterGathers.push_back({reader, op});
    llvm::sort(parameterGathers, [](auto &a, auto &b) {
      return a.first->isBeforeInBlock(b.first);
    });
    DenseMap<Operation *, Operation *> prefetchAt;
    for (auto [i, entry] : llvm::enumerate(parameterGathers)) {
      auto [reader, gather] = entry;
      Operation *at = i ? parameterGathers[i - 1].first : &block.front();
      if (Operation *begins =
              passBegins.lookup(gather->getAttr(DpcDialect::kPhaseAttrName)))
        if (at->isBeforeInBlock(begins))
          at = begins;
      prefetchAt[gather] = at->isBeforeInBlock(reader) ? at : reader;
    }
    // Each other starts right after what it reads; several after the same
    // op keep their order.
    SmallVector<std::pair<Operation *, WaitOp>> returnedScatters;
    DenseMap<Operation *, Operation *> lastStarted;
    for (Operation *op : collectives) {
      if (Operation *reader = prefetchAt.lookup(op)) {
        moveWithOperands(op, reader);
      } else {
        Operation *after = nullptr;
        Value input = op->getOperand(0);
        if (Operation *def = input.getDefiningOp())
          after = block.findAncestorOpInBlock(*def);
        Operation *&last = lastStarted[after];
        Operation *anchor = last ? last : after;
        if (anchor)
          op->moveAfter(anchor);
        else
          op->moveBefore(&block.front());
        last = op;
      }

      Value result = op->getResult(0);
      Operation *reader = getFirstReader(block, result);
      if (!reader)
        continue;
      OpBuilder builder(reader);
      auto wait = WaitOp::create(builder, op->getLoc(), result);
      for (StringRef name :
           {DpcDialect::kStageAttrName, DpcDialect::kPhaseAttrName})
        if (Attribute attr = op->getAttr(name))
          wait->setAttr(name, attr);
      result.replaceAllUsesExcept(wait, wait);
      op->setAttr("async", builder.getUnitAttr());
      if (isa<ReduceScatterOp>(op) && reader == block.getTerminator())
        returnedScatters.push_back({op, wait});
    }
    // A reduce-scatter that the block only returns (a gradient reduced into
    // its ZeRO shard, or into its weight's shard over tp) would be waited
    // for at the block's end, holding its whole operand until then: every
    // gradient whole at once. Each is waited for right after the next one
    // starts instead. The communication thread runs collectives one at a
    // time, in order, so the wait ends when it would have anyway had the
    // next one been waited for; at most two whole operands are held.
    llvm::sort(returnedScatters, [](auto &a, auto &b) {
      return a.first->isBeforeInBlock(b.first);
    });
    for (unsigned i = 0; i + 1 < returnedScatters.size(); ++i)
      returnedScatters[i].second->moveAfter(returnedScatters[i + 1].first);
  }
};

} // namespace
