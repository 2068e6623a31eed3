//===- InsertReshards.cpp - The -dpc-insert-reshards pass -----------------===//
//
// Makes every change of layout in a planned step an op: where an operand
// lies otherwise than its consumer expects (a strategy's operand layout, a
// callee's argument, a function's result), a dpc.reshard to the expected
// layout goes before the consumer (after the producer, for a function's
// result); where a call's result is declared otherwise than its callee
// returns it (the loss, a pending mean), one goes after the call.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Passes.h"
#include "dpc/Transforms/Planning/ShardingFlow.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_INSERTRESHARDS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// Places the new reshard where `consumer` runs.
void copyPlacement(Operation *consumer, Operation *reshard) {
  for (StringRef name :
       {DpcDialect::kStageAttrName, DpcDialect::kPhaseAttrName})
    if (Attribute attr = consumer->getAttr(name))
      reshard->setAttr(name, attr);
}

/// Whether `consumer` reads `producer`'s result on another pipeline stage
/// in layout `want`, whose block is no larger than the block of `have`.
bool isSentSmaller(Operation *producer, Operation *consumer, ShardingAttr have,
                   ShardingAttr want, MeshOp mesh) {
  auto from = producer->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName);
  auto to = consumer->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName);
  auto type = producer->getNumResults() == 1
                  ? dyn_cast<RankedTensorType>(producer->getResult(0).getType())
                  : RankedTensorType();
  if (!from || !to || from == to || !type || !mesh)
    return false;
  return getLocalType(want, type, mesh).getNumElements() <=
         getLocalType(have, type, mesh).getNumElements();
}

bool isSameLayout(ShardingAttr a, ShardingAttr b, Operation *scope) {
  if (a == b)
    return true;
  MeshOp mesh = lookupMesh(a, scope);
  return mesh && a.getMesh() == b.getMesh() &&
         getCanonicalSharding(a, mesh) == getCanonicalSharding(b, mesh);
}

struct InsertReshardsPass
    : public dpc::impl::InsertReshardsBase<InsertReshardsPass> {
  void runOnOperation() override {
    // One reshard per value, target layout, stage (and pass, for a
    // parameter) within a block.
    DenseMap<std::tuple<Value, Attribute, Attribute, Attribute>, ReshardOp>
        made;
    WalkResult walk = getOperation().walk([&](Operation *op) -> WalkResult {
      if (isa<ReshardOp>(op))
        return WalkResult::advance();
      if (auto call = dyn_cast<CallOpInterface>(op))
        splitCallResults(call);
      SmallVector<ShardingAttr> expected = getExpectedOperandShardings(op);
      for (auto [i, want] : llvm::enumerate(expected)) {
        if (!want)
          continue;
        OpOperand &operand = op->getOpOperand(i);
        ShardingAttr have = getSharding(operand.get());
        if (!have) {
          op->emitOpError("operand #")
              << i << " has no sharding to reshard from; plan the step first";
          return WalkResult::interrupt();
        }
        if (isSameLayout(have, want, op))
          continue;
        // Shared by the users on one stage that want the same layout; a
        // parameter's, only within one pass (ZeRO-3 gathers it for the
        // forward and again for the backward, keeping neither whole).
        MeshOp mesh = lookupMesh(want, op);
        auto arg = dyn_cast<BlockArgument>(operand.get());
        auto func =
            arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
                : FunctionOpInterface();
        bool isParameter = func && func.getArgAttr(arg.getArgNumber(),
                                                   DpcDialect::kParamAttrName);
        // A value returned in another layout (a gradient reduced inside
        // @forward_backward) is resharded where it is made, so that its
        // collective starts as early as it can and buckets form in the
        // order the values are made. So is a value another pipeline stage
        // reads in a layout no larger (a sum pending over tp, such as the
        // output projection's term of a table tied across stages): the
        // stage sends its block.
        Operation *producer = operand.get().getDefiningOp();
        bool atProducer = producer && producer->getBlock() == op->getBlock() &&
                          (op->hasTrait<mlir::OpTrait::ReturnLike>() ||
                           isSentSmaller(producer, op, have, want, mesh));
        Operation *placement = atProducer ? producer : op;
        ReshardOp &reshard =
            made[{operand.get(), getCanonicalSharding(want, mesh),
                  placement->getAttr(DpcDialect::kStageAttrName),
                  isParameter ? op->getAttr(DpcDialect::kPhaseAttrName)
                              : Attribute()}];
        if (!reshard || reshard->getBlock() != op->getBlock()) {
          OpBuilder builder(op);
          if (atProducer)
            builder.setInsertionPointAfter(producer);
          reshard =
              ReshardOp::create(builder, op->getLoc(), operand.get(), want);
          copyPlacement(atProducer ? producer : op, reshard);
        }
        operand.set(reshard);
      }
      op->removeAttr(DpcDialect::kOperandShardingsAttrName);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }

  /// A call result declared otherwise than the callee returns it: the
  /// call yields the callee's layout, a reshard after it the declared one.
  void splitCallResults(CallOpInterface call) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
    SmallVector<ShardingAttr> declared = getResultShardings(call);
    if (!callee || declared.size() != call->getNumResults())
      return;
    SmallVector<Attribute> yielded(declared.begin(), declared.end());
    OpBuilder builder(call->getContext());
    builder.setInsertionPointAfter(call);
    for (auto [i, result] : llvm::enumerate(call->getResults())) {
      auto returned = callee.getResultAttrOfType<ShardingAttr>(
          i, DpcDialect::kShardingAttrName);
      if (!returned || isSameLayout(returned, declared[i], call))
        continue;
      yielded[i] = returned;
      auto reshard =
          ReshardOp::create(builder, call->getLoc(), result, declared[i]);
      copyPlacement(call, reshard);
      result.replaceAllUsesExcept(reshard, reshard);
    }
    call->setAttr(DpcDialect::kShardingAttrName, builder.getArrayAttr(yielded));
  }
};

} // namespace
