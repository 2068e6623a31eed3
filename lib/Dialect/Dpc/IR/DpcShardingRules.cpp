//===- DpcShardingRules.cpp - Sharding rules of the dpc ops ---------------===//
//
// The factor form of each op's legal splits (ShardingRule.h). Ops whose
// rule is elementwise share getElementwiseShardingRule.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

using namespace mlir;
using namespace mlir::dpc;

static ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Maps `operand`'s dimensions, aligned from the right, onto the factors of
/// `resultShape`; broadcast dimensions map to no factor.
static SmallVector<int64_t>
mapBroadcastOperand(ArrayRef<int64_t> operandShape,
                    ArrayRef<int64_t> resultShape,
                    ArrayRef<int64_t> resultFactors) {
  SmallVector<int64_t> factors;
  size_t offset = resultShape.size() - operandShape.size();
  for (auto [i, size] : llvm::enumerate(operandShape))
    factors.push_back(size == resultShape[offset + i]
                          ? resultFactors[offset + i]
                          : ShardingRule::kNoFactor);
  return factors;
}

ShardingRule mlir::dpc::getElementwiseShardingRule(Operation *op) {
  ShardingRule rule;
  ArrayRef<int64_t> resultShape = getShape(op->getResult(0));
  SmallVector<int64_t> factors;
  for (int64_t size : resultShape)
    factors.push_back(rule.addFactor(size, FactorKind::Parallel));
  for (Value operand : op->getOperands())
    rule.addOperand(
        mapBroadcastOperand(getShape(operand), resultShape, factors));
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    rule.addResult(factors);
  return rule;
}

ShardingRule mlir::dpc::getReductionShardingRule(Operation *op,
                                                 ArrayRef<int64_t> dims) {
  ShardingRule rule;
  ArrayRef<int64_t> inputShape = getShape(op->getOperand(0));
  ArrayRef<int64_t> resultShape = getShape(op->getResult(0));
  bool keepDims = resultShape.size() == inputShape.size();
  SmallVector<int64_t> inputFactors, resultFactors;
  for (auto [dim, size] : llvm::enumerate(inputShape)) {
    bool reduced = llvm::is_contained(dims, static_cast<int64_t>(dim));
    int64_t factor = rule.addFactor(size, reduced ? FactorKind::Reduction
                                                  : FactorKind::Parallel);
    inputFactors.push_back(factor);
    if (!reduced)
      resultFactors.push_back(factor);
    else if (keepDims)
      resultFactors.push_back(ShardingRule::kNoFactor);
  }
  rule.addOperand(inputFactors);
  rule.addResult(resultFactors);
  return rule;
}

ShardingRule MatmulOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> lhs = getShape(getLhs()), rhs = getShape(getRhs());
  ArrayRef<int64_t> result = getShape(getResult());
  SmallVector<int64_t> resultFactors;
  for (int64_t size : result)
    resultFactors.push_back(rule.addFactor(size, FactorKind::Parallel));
  int64_t k = rule.addFactor(lhs.back(), FactorKind::Reduction);
  ArrayRef<int64_t> batch = result.drop_back(2);
  ArrayRef<int64_t> batchFactors = ArrayRef(resultFactors).drop_back(2);
  int64_t i = resultFactors[result.size() - 2], j = resultFactors.back();

  SmallVector<int64_t> lhsFactors =
      mapBroadcastOperand(lhs.drop_back(2), batch, batchFactors);
  lhsFactors.append({i, k});
  SmallVector<int64_t> rhsFactors =
      mapBroadcastOperand(rhs.drop_back(2), batch, batchFactors);
  rhsFactors.append({k, j});
  rule.addOperand(lhsFactors);
  rule.addOperand(rhsFactors);
  rule.addResult(resultFactors);
  return rule;
}

ShardingRule TransposeOp::getShardingRule() {
  ShardingRule rule;
  SmallVector<int64_t> inputFactors;
  for (int64_t size : getShape(getInput()))
    inputFactors.push_back(rule.addFactor(size, FactorKind::Parallel));
  SmallVector<int64_t> resultFactors;
  for (int64_t dim : getPermutation())
    resultFactors.push_back(inputFactors[dim]);
  rule.addOperand(inputFactors);
  rule.addResult(resultFactors);
  return rule;
}

/// The rule of an op that normalizes over the dimensions from `firstWhole`
/// on: those must stay whole; the leading ones are parallel. Operands after
/// the first index the trailing dimensions only.
static ShardingRule getNormalizationRule(Operation *op, int64_t firstWhole,
                                         int64_t lastWhole) {
  ShardingRule rule;
  SmallVector<int64_t> factors;
  for (auto [dim, size] : llvm::enumerate(getShape(op->getOperand(0)))) {
    int64_t d = dim;
    bool whole = d >= firstWhole && d <= lastWhole;
    factors.push_back(rule.addFactor(size, whole ? FactorKind::NeedReplication
                                                 : FactorKind::Parallel));
  }
  rule.addOperand(factors);
  for (Value operand : op->getOperands().drop_front())
    rule.addOperand(ArrayRef(factors).take_back(getShape(operand).size()));
  rule.addResult(factors);
  return rule;
}

ShardingRule SoftmaxOp::getShardingRule() {
  return getNormalizationRule(*this, getAxis(), getAxis());
}

ShardingRule LogSoftmaxOp::getShardingRule() {
  return getNormalizationRule(*this, getAxis(), getAxis());
}

ShardingRule LayerNormOp::getShardingRule() {
  return getNormalizationRule(*this, getAxis(),
                              getInput().getType().getRank() - 1);
}
