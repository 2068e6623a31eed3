//===- ShardingRule.cpp - Factor form of an op's sharding rule ------------===//

#include "dpc/Interfaces/ShardingRule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::dpc;

int64_t ShardingRule::addFactor(int64_t size, FactorKind kind,
                                ReductionKind reduction) {
  factorSizes.push_back(size);
  factorKinds.push_back(kind);
  factorReductions.push_back(reduction);
  return factorSizes.size() - 1;
}

void ShardingRule::addOperand(llvm::ArrayRef<int64_t> factors) {
  operandFactors.emplace_back(factors.begin(), factors.end());
}

void ShardingRule::addResult(llvm::ArrayRef<int64_t> factors) {
  resultFactors.emplace_back(factors.begin(), factors.end());
}

/// Factors are named a, b, ..., z, then f26, f27, ...
static std::string getFactorName(int64_t factor) {
  if (factor < 26)
    return std::string(1, static_cast<char>('a' + factor));
  return "f" + std::to_string(factor);
}

static void printTensors(llvm::raw_ostream &os,
                         llvm::ArrayRef<llvm::SmallVector<int64_t>> tensors) {
  os << "(";
  llvm::interleave(
      tensors, os,
      [&](llvm::ArrayRef<int64_t> factors) {
        os << "[";
        llvm::interleave(
            factors, os,
            [&](int64_t factor) {
              os << (factor == ShardingRule::kNoFactor ? std::string("_")
                                                       : getFactorName(factor));
            },
            ",");
        os << "]";
      },
      ",");
  os << ")";
}

bool ShardingRule::isPointwise() const {
  for (FactorKind kind : factorKinds)
    if (kind != FactorKind::Parallel)
      return false;
  return llvm::all_of(resultFactors, [&](llvm::ArrayRef<int64_t> factors) {
    return int64_t(factors.size()) == getNumFactors() &&
           !llvm::is_contained(factors, kNoFactor);
  });
}

std::string ShardingRule::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  printTensors(os, operandFactors);
  os << "->";
  printTensors(os, resultFactors);
  os << " {";
  for (int64_t factor = 0; factor < getNumFactors(); ++factor) {
    if (factor > 0)
      os << ", ";
    os << getFactorName(factor) << "=" << factorSizes[factor];
    if (factorKinds[factor] == FactorKind::Reduction) {
      os << " reduction";
      if (factorReductions[factor] != ReductionKind::sum)
        os << "(" << stringifyReductionKind(factorReductions[factor]) << ")";
    } else if (factorKinds[factor] == FactorKind::NeedReplication)
      os << " whole";
  }
  os << "}";
  return text;
}
