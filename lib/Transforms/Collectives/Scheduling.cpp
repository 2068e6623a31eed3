//===- Scheduling.cpp - Moving ops around collectives ---------------------===//

#include "Scheduling.h"

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
  // reader's final place.
  for (Operation *op : llvm::reverse(consumers)) {
    Operation *first = nullptr;
    for (Value result : op->getResults())
      if (Operation *reader = getFirstReader(block, result))
        if (!first || reader->isBeforeInBlock(first))
          first = reader;
    if (first && op->getNextNode() != first)
      op->moveBefore(first);
  }
}
