//===- RecomputePointwise.cpp - Pointwise values rebuilt, not stored ------===//
//
// A pointwise forward value that the backward pass reads is recomputed in
// the backward pass from values it holds anyway, so the step stores the
// inputs of a pointwise chain (a GeLU's input) and not every intermediate.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Interfaces/ShardableOpInterface.h"
#include "dpc/Transforms/Autodiff/CloneIntoBackward.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_RECOMPUTEPOINTWISE
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

static std::optional<Phase> getPhase(Operation *op) {
  if (auto phase = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName))
    return phase.getValue();
  return std::nullopt;
}

/// Whether `op` can be run again in the backward pass with the same result.
static bool isRecomputable(Operation *op) {
  auto shardable = dyn_cast<ShardableOpInterface>(op);
  return shardable && op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         getPhase(op) == Phase::forward &&
         shardable.getShardingRule().isPointwise();
}

static void recomputeIn(func::FuncOp func) {
  Block &block = func.getBody().front();
  auto isBackward = [](Operation *op) {
    return getPhase(op) == Phase::backward;
  };
  auto isStored = [&](Value value) {
    return llvm::any_of(value.getUsers(), isBackward);
  };
  // In forward order: an op is recomputed when each operand is held for the
  // backward pass or recomputed itself. Values computed once per step from
  // parameters and constants alone (a weight's cast, a mask) are left
  // where the forward pass made them: they are not per-sample activations,
  // and the pipeline places them with the stage that first reads them.
  llvm::DenseSet<Value> recomputed, perStep, keptInstead;
  auto isInput = [&](Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg &&
           func.getArgAttr(arg.getArgNumber(), DpcDialect::kInputAttrName);
  };
  auto isPerStep = [&](Value value) {
    return (isa<BlockArgument>(value) && !isInput(value)) ||
           matchPattern(value, m_Constant()) || perStep.contains(value);
  };
  auto isHeld = [&](Value value) {
    return isa<BlockArgument>(value) || isPerStep(value) ||
           recomputed.contains(value) || keptInstead.contains(value) ||
           isStored(value);
  };
  auto bytesOf = [](ValueRange values) {
    int64_t bytes = 0;
    for (Value value : values)
      bytes += getSizeInBytes(value.getType());
    return bytes;
  };
  SmallVector<Operation *> candidates;
  for (Operation &op : block) {
    if (llvm::all_of(op.getOperands(), isPerStep)) {
      perStep.insert(op.result_begin(), op.result_end());
      continue;
    }
    if (!isRecomputable(&op))
      continue;
    // Where operands are not held, keeping them instead of the stored
    // results may still be cheaper: a bf16 value rather than its f32 cast
    // for a layer norm.
    llvm::SetVector<Value> missing;
    for (Value operand : op.getOperands())
      if (!isHeld(operand))
        missing.insert(operand);
    if (!missing.empty()) {
      SmallVector<Value> storedResults(llvm::make_filter_range(
          op.getResults(), [&](Value result) { return isStored(result); }));
      if (bytesOf(missing.getArrayRef()) >= bytesOf(storedResults))
        continue;
      keptInstead.insert(missing.begin(), missing.end());
    }
    candidates.push_back(&op);
    recomputed.insert(op.result_begin(), op.result_end());
  }
  if (candidates.empty())
    return;

  cloneIntoBackward(block, candidates, [&](Operation *op) {
    return op->getNumResults() && recomputed.contains(op->getResult(0));
  });
}

namespace {
struct RecomputePointwisePass
    : public dpc::impl::RecomputePointwiseBase<RecomputePointwisePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        recomputeIn(func);
  }
};
} // namespace
