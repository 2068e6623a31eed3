//===- ReduceInLastMicroBatch.cpp - -dpc-reduce-in-last-micro-batch -------===//
//
// A step of several micro-batches accumulates each gradient as a pending
// sum and reduces it once. That reduction needs every micro-batch's
// gradient, not the end of the last backward pass: once the last
// micro-batch's gradient of a layer is made, the layer's sum is final.
// The step's last micro-batch is inlined, and each reduction (with the
// accumulation feeding it) moves up to where its operands are made, so
// that the gradients of the last layers are reduced while the first
// layers' gradients are computed, as with one micro-batch.
//
//===----------------------------------------------------------------------===//

#include "Scheduling.h"

#include "dpc/Transforms/Passes.h"

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_REDUCEINLASTMICROBATCH
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// Whether `callee` is one block ending in its return, as a step's
/// forward-backward is: what inlineCall copies.
bool isInlinable(func::FuncOp callee) {
  return !callee.isExternal() && callee.getBody().hasOneBlock() &&
         isa<func::ReturnOp>(callee.getBody().front().getTerminator());
}

/// Inlines `call`, the last of several calls to its callee (the last
/// micro-batch); the callee stays for the others.
void inlineCall(func::CallOp call, func::FuncOp callee) {
  IRMapping map;
  map.map(callee.getArguments(), call.getOperands());
  OpBuilder builder(call);
  Block &body = callee.getBody().front();
  for (Operation &op : body.without_terminator())
    builder.clone(op, map);
  for (auto [result, value] :
       llvm::zip_equal(call.getResults(), body.getTerminator()->getOperands()))
    result.replaceAllUsesWith(map.lookupOrDefault(value));
  call.erase();
}

/// Whether `op` is forward or backward work of a micro-batch: the
/// reductions move past the accumulation of the step, never through it.
bool isPassWork(Operation *op) {
  auto phase = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
  return phase && phase.getValue() != Phase::optimizer;
}

/// Whether `op` communicates between pipeline stages (a send, a receive,
/// a collective over the stage axis).
bool isBetweenStages(Operation *op) {
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  return (isCommunicating(op) || isa<SendOp, RecvOp>(op)) && axes &&
         llvm::any_of(axes, [](Attribute axis) {
           return cast<StringAttr>(axis).getValue() == kStageAxisName;
         });
}

/// A reduction over one stage's devices.
bool isStageReduction(Operation *op) {
  return isa<AllReduceOp, ReduceScatterOp>(op) && !isBetweenStages(op);
}

/// The ops of `block` that make `reduction`'s operand and belong to the
/// step rather than a pass (the accumulation, its casts and reshapes), or
/// failure when they read a collective's result: a reduction of reduced
/// values (a gradient norm) stays after what it waits for.
FailureOr<SetVector<Operation *>> getAccumulation(Block &block,
                                                  Operation *reduction) {
  SetVector<Operation *> chain;
  SmallVector<Operation *> worklist{reduction};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != &block)
        continue;
      if (isCommunicating(def) || isa<WaitOp>(def))
        return failure();
      if (isPassWork(def) || isa<func::CallOp>(def) || !isPure(def) ||
          def->getNumRegions() != 0)
        continue;
      if (chain.insert(def))
        worklist.push_back(def);
    }
  }
  return chain;
}

/// Moves each stage reduction of `block`, with its accumulation, to just
/// after the last of the values it needs is made, but not ahead of
/// communication between stages: the communication thread runs them in
/// program order, and a gradient bucket ahead of a send would hold up the
/// next stage. Ops moved after the same op keep their order, so that every
/// rank of a group still issues its collectives in one order.
void reduceEarly(Block &block) {
  llvm::SmallPtrSet<Operation *, 32> moving;
  for (Operation &op : block) {
    if (!isStageReduction(&op) || isPassWork(&op) || op.hasAttr("async"))
      continue;
    FailureOr<SetVector<Operation *>> chain = getAccumulation(block, &op);
    if (failed(chain))
      continue;
    moving.insert(chain->begin(), chain->end());
    moving.insert(&op);
  }
  SmallVector<std::pair<Operation *, Operation *>> order;
  Operation *betweenStages = nullptr;
  for (Operation &op : block) {
    if (moving.contains(&op))
      order.push_back({&op, betweenStages});
    if (isBetweenStages(&op))
      betweenStages = &op;
  }
  DenseMap<Operation *, Operation *> lastMoved;
  for (auto [op, after] : order) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (Operation *ancestor = block.findAncestorOpInBlock(*def))
          if (!after || after->isBeforeInBlock(ancestor))
            after = ancestor;
    Operation *&last = lastMoved[after];
    if (Operation *anchor = last ? last : after)
      op->moveAfter(anchor);
    else
      op->moveBefore(&block.front());
    last = op;
  }
}

struct ReduceInLastMicroBatchPass
    : public dpc::impl::ReduceInLastMicroBatchBase<ReduceInLastMicroBatchPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      // The last call of a function called more than once: the last
      // micro-batch.
      llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>> calls;
      func.walk([&](func::CallOp call) {
        if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
          if (isInlinable(callee) && callee != func)
            calls[callee].push_back(call);
      });
      for (auto &[callee, sites] : calls)
        if (sites.size() > 1)
          inlineCall(sites.back(), callee);
      func.walk([&](Block *block) { reduceEarly(*block); });
    }
  }
};

} // namespace
