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

static ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
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
    // Computed at each element of the user's loop, it must have the user's
    // shape (its own operands then broadcast to that shape as they did).
    if (user->getBlock() != op.getBlock() || !hasScalarFormula(user) ||
        getShape(op.getResult(0)) != getShape(user->getResult(0)))
      continue;
    fused.insert(&op);
  }
  return fused;
}
