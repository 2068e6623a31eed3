//===- RecomputeLayers.cpp - A plan's recomputation, built ----------------===//
//
// Under a plan with recomputation the backward pass keeps only the values
// the plan checkpoints (each layer's input) and recomputes the other
// forward values it reads just before it needs them.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_RECOMPUTELAYERS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

static bool hasPhase(Operation *op, Phase phase) {
  auto attr = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
  return attr && attr.getValue() == phase;
}

static void recomputeIn(func::FuncOp func) {
  Block &block = func.getBody().front();
  // Values made once per step from parameters and constants alone.
  llvm::DenseSet<Value> perStep;
  auto isPerStep = [&](Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return !func.getArgAttr(arg.getArgNumber(), DpcDialect::kInputAttrName);
    return matchPattern(value, m_Constant()) || perStep.contains(value);
  };
  // The forward ops run again: in forward order, each pure forward op on
  // the batch that the plan does not checkpoint.
  llvm::DenseSet<Operation *> recomputed;
  SmallVector<Operation *> candidates;
  for (Operation &op : block) {
    if (llvm::all_of(op.getOperands(), isPerStep)) {
      perStep.insert(op.result_begin(), op.result_end());
      continue;
    }
    if (!hasPhase(&op, Phase::forward) || op.getNumRegions() != 0 ||
        !isMemoryEffectFree(&op) ||
        op.hasAttr(DpcDialect::kCheckpointAttrName))
      continue;
    recomputed.insert(&op);
    candidates.push_back(&op);
  }

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
      if (Operation *operandDef = operand.getDefiningOp();
          operandDef && recomputed.contains(operandDef))
        need(operandDef, reader);
  };
  for (Operation &op : block)
    if (hasPhase(&op, Phase::backward))
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && recomputed.contains(def))
          need(def, &op);

  auto backward = PhaseAttr::get(func.getContext(), Phase::backward);
  IRMapping clones;
  llvm::DenseSet<Operation *> cloneOps;
  OpBuilder builder(func.getContext());
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
        Operation *user = use.getOwner();
        return hasPhase(user, Phase::backward) && !cloneOps.contains(user);
      });
  }
}

namespace {
struct RecomputeLayersPass
    : public dpc::impl::RecomputeLayersBase<RecomputeLayersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto plan = module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
    auto recompute = plan ? plan.getAs<BoolAttr>("recompute") : BoolAttr();
    if (!recompute || !recompute.getValue())
      return;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        recomputeIn(func);
  }
};
} // namespace
