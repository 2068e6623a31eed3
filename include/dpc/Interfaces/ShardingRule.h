//===- ShardingRule.h - Factor form of an op's sharding rule ----*- C++ -*-===//
//
// A sharding rule names the loops (factors) of an op and says which factor
// indexes each tensor dimension. It is the single description of an op's
// legal splits that the planner, cost model and partitioner all read.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_SHARDINGRULE_H
#define DPC_INTERFACES_SHARDINGRULE_H

#include "dpc/Interfaces/ReductionKind.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <string>

namespace mlir::dpc {

/// How results depend on a factor.
enum class FactorKind {
  /// Every result element depends on one value of the factor.
  Parallel,
  /// The factor is summed (or max-reduced) away: splitting it leaves a
  /// pending partial result.
  Reduction,
  /// The factor indexes a dimension that must stay whole (a softmax axis,
  /// a convolution window): it may not be split.
  NeedReplication,
};

/// The all-reduces an op's own `partition` adds when one factor of its rule
/// is split: a synchronized batch norm's statistics. Counted per execution,
/// its backward pass included.
struct SplitCollectives {
  int64_t allReduces = 0;
  /// The factors that index each all-reduced tensor.
  llvm::SmallVector<int64_t, 1> factors;
};

/// The factor form of a sharding rule.
class ShardingRule {
public:
  /// Dimension mapping for a dimension not indexed by any factor (for
  /// example a broadcast dimension of size one).
  static constexpr int64_t kNoFactor = -1;

  /// Adds a factor of the given size and kind; returns its index. A
  /// reduction factor says how the partial results of its split combine.
  int64_t addFactor(int64_t size, FactorKind kind,
                    ReductionKind reduction = ReductionKind::sum);

  /// Appends the factor list of the next operand / result.
  void addOperand(llvm::ArrayRef<int64_t> factors);
  void addResult(llvm::ArrayRef<int64_t> factors);

  int64_t getNumFactors() const { return factorSizes.size(); }
  int64_t getFactorSize(int64_t factor) const { return factorSizes[factor]; }
  FactorKind getFactorKind(int64_t factor) const { return factorKinds[factor]; }
  /// How partial results of a split reduction factor combine.
  ReductionKind getFactorReduction(int64_t factor) const {
    return factorReductions[factor];
  }
  llvm::ArrayRef<int64_t> getOperandFactors(unsigned operand) const {
    return operandFactors[operand];
  }
  llvm::ArrayRef<int64_t> getResultFactors(unsigned result) const {
    return resultFactors[result];
  }
  unsigned getNumOperands() const { return operandFactors.size(); }
  unsigned getNumResults() const { return resultFactors.size(); }

  /// Whether every factor is parallel and indexes every result: each
  /// result element is computed from the operand elements at its own index
  /// (elementwise ops, broadcasts, transposes, casts).
  bool isPointwise() const;

  /// Prints the rule as `([i,k],[k,j])->([i,j]) {i=4, j=8, k=16 reduction}`,
  /// naming factors i, j, k, ... in order of creation; a reduction other
  /// than a sum names its kind: `reduction(mean)`.
  std::string str() const;

private:
  llvm::SmallVector<int64_t> factorSizes;
  llvm::SmallVector<FactorKind> factorKinds;
  llvm::SmallVector<ReductionKind> factorReductions;
  llvm::SmallVector<llvm::SmallVector<int64_t>> operandFactors;
  llvm::SmallVector<llvm::SmallVector<int64_t>> resultFactors;
};

} // namespace mlir::dpc

#endif // DPC_INTERFACES_SHARDINGRULE_H
