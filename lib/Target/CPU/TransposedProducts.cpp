//===- TransposedProducts.cpp - Products computed transposed --------------===//

#include "dpc/Target/CPU/TransposedProducts.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Target/CPU/Fusion.h"

using namespace mlir;
using namespace mlir::dpc;

/// `value` with its last two dimensions swapped: the operand of a matrix
/// transpose, or a new transpose at the builder's insertion point.
static Value transposeMatrix(OpBuilder &builder, Location loc, Value value) {
  if (Operation *def = value.getDefiningOp(); def && isMatrixTranspose(def))
    return def->getOperand(0);
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> permutation, shape;
  for (int64_t d = 0; d < rank; ++d)
    permutation.push_back(d < rank - 2 ? d : 2 * rank - 3 - d);
  for (int64_t d : permutation)
    shape.push_back(type.getDimSize(d));
  return TransposeOp::create(builder, loc, type.clone(shape), value,
                             builder.getDenseI64ArrayAttr(permutation));
}

void mlir::dpc::computeTransposedProducts(func::FuncOp func) {
  SmallVector<Operation *> transposes;
  for (Operation &op : func.getBody().front())
    if (isMatrixTranspose(&op))
      transposes.push_back(&op);
  for (Operation *transpose : transposes) {
    // A transpose of a transpose is its operand's operand.
    if (Operation *inner = transpose->getOperand(0).getDefiningOp();
        inner && isMatrixTranspose(inner)) {
      transpose->getResult(0).replaceAllUsesWith(inner->getOperand(0));
      transpose->erase();
      continue;
    }
    auto product = transpose->getOperand(0).getDefiningOp<MatmulOp>();
    if (!product || !product->hasOneUse() ||
        llvm::any_of(product->getOperands(), [](Value operand) {
          return cast<RankedTensorType>(operand.getType()).getRank() < 2;
        }))
      continue;
    OpBuilder builder(transpose);
    Location loc = product.getLoc();
    Value lhs = transposeMatrix(builder, loc, product->getOperand(1));
    Value rhs = transposeMatrix(builder, loc, product->getOperand(0));
    Value swapped = MatmulOp::create(
        builder, loc, transpose->getResult(0).getType(), lhs, rhs);
    transpose->getResult(0).replaceAllUsesWith(swapped);
    transpose->erase();
    product->erase();
  }
  // Transposes now read by nothing.
  SmallVector<Operation *> dead;
  for (Operation &op : func.getBody().front())
    if (isa<TransposeOp>(op) && op.use_empty())
      dead.push_back(&op);
  for (Operation *op : llvm::reverse(dead))
    op->erase();
}
