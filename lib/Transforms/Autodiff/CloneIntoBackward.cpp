//===- CloneIntoBackward.cpp - Forward ops run again for the backward -----===//

#include "dpc/Transforms/Autodiff/CloneIntoBackward.h"

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

using namespace mlir;
using namespace mlir::dpc;

static bool isBackward(Operation *op) {
  auto phase = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
  return phase && phase.getValue() == Phase::backward;
}

void mlir::dpc::cloneIntoBackward(
    Block &block, ArrayRef<Operation *> candidates,
    llvm::function_ref<bool(Operation *)> isRecomputed) {
  auto recomputedDef = [&](Value value) -> Operation * {
    Operation *def = value.getDefiningOp();
    return def && isRecomputed(def) ? def : nullptr;
  };
  // Each clone goes before the first backward op that needs it, directly
  // or through another clone.
  llvm::DenseMap<Operation *, Operation *> insertBefore;
  std::function<void(Operation *, Operation *)> need = [&](Operation *def,
                                                           Operation *reader) {
    Operation *&at = insertBefore[def];
    if (at && at->isBeforeInBlock(reader))
      return;
    at = reader;
    for (Value operand : def->getOperands())
      if (Operation *operandDef = recomputedDef(operand))
        need(operandDef, reader);
  };
  for (Operation &op : block)
    if (isBackward(&op))
      for (Value operand : op.getOperands())
        if (Operation *def = recomputedDef(operand))
          need(def, &op);

  auto backward =
      PhaseAttr::get(block.getParentOp()->getContext(), Phase::backward);
  IRMapping clones;
  llvm::DenseSet<Operation *> cloneOps;
  OpBuilder builder(backward.getContext());
  for (Operation *op : candidates) {
    Operation *at = insertBefore.lookup(op);
    if (!at)
      continue;
    builder.setInsertionPoint(at);
    Operation *clone = builder.clone(*op, clones);
    clone->setAttr(DpcDialect::kPhaseAttrName, backward);
    cloneOps.insert(clone);
    for (auto [original, copy] :
         llvm::zip(op->getResults(), clone->getResults()))
      original.replaceUsesWithIf(copy, [&](OpOperand &use) {
        return isBackward(use.getOwner()) && !cloneOps.contains(use.getOwner());
      });
  }
}
