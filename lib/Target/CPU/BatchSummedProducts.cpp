//===- BatchSummedProducts.cpp - Batched products summed as one -----------===//

#include "dpc/Target/CPU/BatchSummedProducts.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Target/CPU/Fusion.h"

using namespace mlir;
using namespace mlir::dpc;

/// `value` [batch..., rows, columns] as [batch elements * rows, columns].
static Value mergeRows(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = 1;
  for (int64_t size : shape.drop_back())
    rows *= size;
  return ReshapeOp::create(builder, loc, type.clone({rows, shape.back()}),
                           value);
}

/// The product `sum` reduces over all of its batch dimensions, if it is
/// one this rewrite applies to.
static MatmulOp getBatchSummedProduct(ReduceSumOp sum) {
  auto product = sum.getInput().getDefiningOp<MatmulOp>();
  if (!product || !product->hasOneUse() || sum.getKeepDims())
    return {};
  auto lhs = cast<RankedTensorType>(product.getLhs().getType());
  auto rhs = cast<RankedTensorType>(product.getRhs().getType());
  int64_t rank = lhs.getRank();
  if (rank < 3 || rhs.getRank() != rank ||
      lhs.getShape().drop_back(2) != rhs.getShape().drop_back(2) ||
      !llvm::equal(sum.getDims(), llvm::seq<int64_t>(0, rank - 2)))
    return {};
  Operation *transpose = product.getLhs().getDefiningOp();
  if (!transpose || !isMatrixTranspose(transpose))
    return {};
  return product;
}

void mlir::dpc::sumBatchedProductsInOneProduct(func::FuncOp func) {
  SmallVector<ReduceSumOp> sums;
  for (Operation &op : func.getBody().front())
    if (auto sum = dyn_cast<ReduceSumOp>(op); sum && getBatchSummedProduct(sum))
      sums.push_back(sum);
  for (ReduceSumOp sum : sums) {
    MatmulOp product = getBatchSummedProduct(sum);
    Operation *transpose = product.getLhs().getDefiningOp();
    OpBuilder builder(sum);
    Location loc = product.getLoc();
    Value rows = mergeRows(builder, loc, transpose->getOperand(0));
    auto rowsType = cast<RankedTensorType>(rows.getType());
    Value lhs = TransposeOp::create(
        builder, loc,
        rowsType.clone({rowsType.getDimSize(1), rowsType.getDimSize(0)}), rows,
        builder.getDenseI64ArrayAttr({1, 0}));
    Value rhs = mergeRows(builder, loc, product.getRhs());
    Value summed =
        MatmulOp::create(builder, loc, sum.getResult().getType(), lhs, rhs);
    sum.getResult().replaceAllUsesWith(summed);
    sum->erase();
    product->erase();
    if (transpose->use_empty())
      transpose->erase();
  }
}
