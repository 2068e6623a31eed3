//===- Scheduling.cpp - Moving ops around collectives ---------------------===//

#include "Scheduling.h"

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::dpc;

bool mlir::dpc::isCommunicating(Operation *op) {
  return op->hasTrait<OpTrait::Communicates>();
}

Operation *mlir::dpc::getFirstReader(Block &block, Value value) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *ancestor = block.findAncestorOpInBlock(*user);
    if (ancestor && (!first || ancestor->isBeforeInBlock(first)))
      first = ancestor;
  }
  return first;
}

bool mlir::dpc::isMadeFromArguments(Block &block, Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return argument.getOwner() == &block;
  Operation *def = value.getDefiningOp();
  return def->getBlock() == &block && isPure(def) &&
         def->getNumRegions() == 0 && def->getNumResults() == 1 &&
         value.hasOneUse() && def->getNumOperands() > 0 &&
         llvm::all_of(def->getOperands(), [&](Value operand) {
           return isMadeFromArguments(block, operand);
         });
}

void mlir::dpc::moveWithOperands(Operation *op, Operation *point) {
  op->moveBefore(point);
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp();
        def && def->getBlock() == op->getBlock())
      moveWithOperands(def, op);
}

/// Whether `value` is a tensor of more than one element: scalars cost
/// nothing to keep.
static bool holdsMemory(Value value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  return type && (!type.hasStaticShape() || type.getNumElements() > 1);
}

void mlir::dpc::sinkConsumers(Block &block) {
  SmallVector<Operation *> consumers;
  llvm::SmallPtrSet<Operation *, 16> downstream;
  for (Operation &op : block) {
    bool fed = llvm::any_of(op.getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && (isCommunicating(def) || isa<WaitOp>(def) ||
                     downstream.contains(def));
    });
    if (fed && isPure(&op) && !op.hasTrait<::mlir::OpTrait::IsTerminator>()) {
      downstream.insert(&op);
      consumers.push_back(&op);
    }
  }
  // Readers first, so that each op then goes right before its first
  // reader's final place, unless that would keep another of its operands
  // alive longer: a weight gradient's contraction stays where its
  // activation gradient dies, not moved to the gradients' bucket with
  // every activation gradient held until then.
  for (Operation *op : llvm::reverse(consumers)) {
    Operation *first = nullptr;
    for (Value result : op->getResults())
      if (Operation *reader = getFirstReader(block, result))
        if (!first || reader->isBeforeInBlock(first))
          first = reader;
    if (!first || op->getNextNode() == first)
      continue;
    // The latest op, before `first`, that reads an operand not made by a
    // collective; this op itself when one has no other reader.
    Operation *limit = nullptr;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != &block || isCommunicating(def) ||
          isa<WaitOp>(def) || !holdsMemory(operand))
        continue;
      Operation *last = op;
      for (Operation *user : operand.getUsers())
        if (Operation *at = block.findAncestorOpInBlock(*user);
            at && at != op && last->isBeforeInBlock(at))
          last = at;
      if (!limit || limit->isBeforeInBlock(last))
        limit = last;
    }
    if (limit && limit->isBeforeInBlock(first)) {
      if (limit != op && op->isBeforeInBlock(limit))
        op->moveAfter(limit);
      continue;
    }
    op->moveBefore(first);
  }
}

static bool isBackward(Operation *op) {
  auto phase = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
  return phase && phase.getValue() == Phase::backward;
}

void mlir::dpc::sinkRecomputation(Block &block) {
  llvm::SmallPtrSet<Operation *, 16> movable;
  SmallVector<Operation *> order;
  for (Operation &op : block)
    if (isBackward(&op) && isPure(&op) && op.getNumRegions() == 0 &&
        op.getNumOperands() > 0 && !isCommunicating(&op) &&
        llvm::all_of(op.getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return !def || !isBackward(def) || movable.contains(def);
        })) {
      movable.insert(&op);
      order.push_back(&op);
    }
  for (Operation *op : llvm::reverse(order)) {
    Operation *first = nullptr;
    for (Value result : op->getResults())
      if (Operation *reader = getFirstReader(block, result))
        if (!first || reader->isBeforeInBlock(first))
          first = reader;
    if (first && op->getNextNode() != first)
      op->moveBefore(first);
  }
}
