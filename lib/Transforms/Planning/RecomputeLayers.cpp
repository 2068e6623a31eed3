//===- RecomputeLayers.cpp - A plan's recomputation, built ----------------===//
//
// Under a plan with recomputation the backward pass keeps only the values
// the plan checkpoints (each layer's input) and recomputes the other
// forward values it reads just before it needs them; under selective
// recomputation it recomputes the values of the ops the plan marks (each
// attention's core).
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Transforms/Autodiff/CloneIntoBackward.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

  cloneIntoBackward(block, candidates,
                    [&](Operation *op) { return recomputed.contains(op); });
}

/// Selective recomputation: the forward ops the plan marks (an attention's
/// core) run again in the backward pass.
static void recomputeMarkedIn(func::FuncOp func) {
  Block &block = func.getBody().front();
  SmallVector<Operation *> marked;
  for (Operation &op : block)
    if (hasPhase(&op, Phase::forward) &&
        op.hasAttr(DpcDialect::kRecomputeAttrName) && isMemoryEffectFree(&op))
      marked.push_back(&op);
  llvm::DenseSet<Operation *> recomputed(marked.begin(), marked.end());
  cloneIntoBackward(block, marked,
                    [&](Operation *op) { return recomputed.contains(op); });
  // The mark is the forward op's; its clones are what it asked for.
  for (Operation &op : block)
    if (hasPhase(&op, Phase::backward))
      op.removeAttr(DpcDialect::kRecomputeAttrName);
}

namespace {
struct RecomputeLayersPass
    : public dpc::impl::RecomputeLayersBase<RecomputeLayersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto plan = module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
    // Each optional; a field of another kind is refused, not read as off.
    auto flag = [&](StringRef name, BoolAttr &value) {
      Attribute field = plan ? plan.get(name) : Attribute();
      value = dyn_cast_or_null<BoolAttr>(field);
      if (field && !value)
        emitError(module.getLoc(), "dpc.plan's ")
            << name << " (" << field << ") is not true or false";
      return !field || value;
    };
    BoolAttr recompute, attention;
    if (!flag("recompute", recompute) ||
        !flag("recompute_attention", attention))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (recompute && recompute.getValue())
        recomputeIn(func);
      else if (attention && attention.getValue())
        recomputeMarkedIn(func);
    }
  }
};
} // namespace
