//===- Fusion.cpp - What the CPU backend computes inside other ops --------===//

#include "dpc/Target/CPU/Fusion.h"
#include "ElementwiseFormulas.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

using namespace mlir;
using namespace mlir::dpc;

bool mlir::dpc::isMatrixTranspose(Operation *op) {
  auto transpose = dyn_cast<TransposeOp>(op);
  if (!transpose)
    return false;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  int64_t rank = permutation.size();
  if (rank < 2)
    return false;
  for (int64_t d = 0; d < rank - 2; ++d)
    if (permutation[d] != d)
      return false;
  return permutation[rank - 2] == rank - 1 && permutation[rank - 1] == rank - 2;
}

bool mlir::dpc::isElementReduction(Operation *op) {
  return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op);
}

static ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Whether every value the elementwise chain ending in `op` reads from
/// memory has the chain's shape or one element.
static bool readsAtItsOwnIndex(Operation *op,
                               const llvm::DenseSet<Operation *> &fused) {
  ArrayRef<int64_t> shape = getShape(op->getResult(0));
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    Operation *def = operand.getDefiningOp();
    if (def && fused.contains(def))
      return readsAtItsOwnIndex(def, fused);
    auto type = cast<RankedTensorType>(operand.getType());
    return type.getShape() == shape || type.getNumElements() == 1;
  });
}

llvm::DenseSet<Operation *> mlir::dpc::getFusedOps(func::FuncOp func) {
  llvm::DenseSet<Operation *> fused;
  for (Operation &op : func.getBody().front()) {
    // A transpose that only GEMMs read is their operand's layout.
    if (isMatrixTranspose(&op) && !op.use_empty() &&
        llvm::all_of(op.getUsers(),
                     [](Operation *user) { return isa<MatmulOp>(user); })) {
      fused.insert(&op);
      continue;
    }
    if (!hasScalarFormula(&op) || !op.hasOneUse() || op.getNumResults() != 1)
      continue;
    Operation *user = *op.getUsers().begin();
    if (user->getBlock() != op.getBlock())
      continue;
    // A reduction reads it element by element at flat indices, in its own
    // walk: no operand of the chain may be broadcast, which would need the
    // index of each dimension at every element.
    if (isElementReduction(user)) {
      if (readsAtItsOwnIndex(&op, fused))
        fused.insert(&op);
      continue;
    }
    // Computed at each element of the user's loop, it must have the user's
    // shape (its own operands then broadcast to that shape as they did).
    if (!hasScalarFormula(user) ||
        getShape(op.getResult(0)) != getShape(user->getResult(0)))
      continue;
    fused.insert(&op);
  }
  return fused;
}
