//===- FusedTraffic.cpp - Which values stay out of memory -----------------===//

#include "dpc/Analysis/CostModel/FusedTraffic.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Interfaces/ShardableOpInterface.h"

#include "mlir/IR/Block.h"

#include <functional>

using namespace mlir;
using namespace mlir::dpc;

namespace {
enum class FusionKind { Pointwise, Contraction, RowNormalization, Other };

FusionKind classify(Operation *op) {
  auto shardable = dyn_cast<ShardableOpInterface>(op);
  if (!shardable)
    return FusionKind::Other;
  ShardingRule rule = shardable.getShardingRule();
  bool allParallel = true, hasReduction = false, hasWhole = false;
  for (int64_t f = 0; f < rule.getNumFactors(); ++f) {
    FactorKind kind = rule.getFactorKind(f);
    allParallel &= kind == FactorKind::Parallel;
    hasWhole |= kind == FactorKind::NeedReplication;
    if (kind != FactorKind::Reduction)
      continue;
    hasReduction = true;
    unsigned operands = 0;
    for (unsigned i = 0; i < rule.getNumOperands(); ++i)
      operands += llvm::is_contained(rule.getOperandFactors(i), f);
    if (operands >= 2)
      return FusionKind::Contraction;
  }
  if (allParallel) {
    bool covers = true;
    for (unsigned j = 0; j < rule.getNumResults(); ++j)
      covers &= int64_t(rule.getResultFactors(j).size()) ==
                    rule.getNumFactors() &&
                !llvm::is_contained(rule.getResultFactors(j),
                                    ShardingRule::kNoFactor);
    if (covers)
      return FusionKind::Pointwise;
  }
  if (hasWhole && !hasReduction && op->getNumOperands() &&
      op->getNumResults() &&
      op->getResult(0).getType() == op->getOperand(0).getType())
    return FusionKind::RowNormalization;
  return FusionKind::Other;
}

} // namespace

bool FusedTraffic::isPointwise(Operation *op) {
  return classify(op) == FusionKind::Pointwise;
}

namespace {
/// Users that can take a value on the fly: all but contractions.
bool takesOnTheFly(FusionKind user) { return user != FusionKind::Contraction; }
} // namespace

FusedTraffic::FusedTraffic(Block &block,
                           llvm::function_ref<bool(Operation *)> inScope,
                           llvm::function_ref<bool(Value)> mustStore) {
  llvm::DenseMap<Operation *, FusionKind> kinds;
  for (Operation &op : block)
    if (inScope(&op))
      kinds[&op] = classify(&op);
  auto kindOf = [&](Operation *op) {
    return kinds.lookup_or(op, FusionKind::Other);
  };
  auto usersInScope = [&](Value value) {
    return llvm::make_filter_range(value.getUsers(), [&](Operation *user) {
      return kinds.contains(user);
    });
  };
  // The pointwise values between a contraction and `value`, if `value`
  // comes (through pointwise ops) from one.
  std::function<bool(Value, SmallVectorImpl<Value> &)> comesFromContraction =
      [&](Value value, SmallVectorImpl<Value> &chain) {
        Operation *def = value.getDefiningOp();
        if (!def || !kinds.contains(def))
          return false;
        FusionKind kind = kindOf(def);
        if (kind == FusionKind::Contraction) {
          chain.push_back(value);
          return true;
        }
        if (kind != FusionKind::Pointwise)
          return false;
        bool found = false;
        for (Value operand : def->getOperands())
          found |= comesFromContraction(operand, chain);
        if (found)
          chain.push_back(value);
        return found;
      };
  // True if every forward path from `value` through pointwise ops ends in
  // a contraction; collects the values on the way.
  std::function<bool(Value, SmallVectorImpl<Value> &)> feedsContractions =
      [&](Value value, SmallVectorImpl<Value> &chain) {
        bool any = false;
        for (Operation *user : usersInScope(value)) {
          any = true;
          FusionKind kind = kindOf(user);
          if (kind == FusionKind::Contraction)
            continue;
          if (kind != FusionKind::Pointwise)
            return false;
          for (Value result : user->getResults()) {
            chain.push_back(result);
            if (!feedsContractions(result, chain))
              return false;
          }
        }
        return any;
      };

  for (auto &[op, kind] : kinds) {
    if (kind != FusionKind::RowNormalization)
      continue;
    SmallVector<Value> before, after;
    if (!comesFromContraction(op->getOperand(0), before) ||
        !feedsContractions(op->getResult(0), after))
      continue;
    for (Value value : llvm::concat<Value>(before, after))
      recomputed.insert(value);
    recomputed.insert(op->getResult(0));
  }
  for (Value value : recomputed)
    inRegisters.insert(value);

  for (Operation &op : block) {
    if (!kinds.contains(&op))
      continue;
    FusionKind kind = kindOf(&op);
    bool fusedProducer =
        kind == FusionKind::Pointwise || kind == FusionKind::Contraction;
    for (Value result : op.getResults()) {
      if (!fusedProducer || mustStore(result) || result.use_empty())
        continue;
      bool usersFuse = llvm::all_of(result.getUsers(), [&](Operation *user) {
        return kinds.contains(user) &&
               !user->hasTrait<OpTrait::IsTerminator>() &&
               takesOnTheFly(kindOf(user));
      });
      if (usersFuse)
        inRegisters.insert(result);
    }
  }
  for (Operation &op : block) {
    if (!isa<CostOpInterface>(&op) || !kinds.contains(&op))
      continue;
    double total = 0.0;
    for (Value operand : op.getOperands())
      if (isMaterialized(operand))
        total += getSizeInBytes(operand.getType());
    for (Value result : op.getResults())
      if (isMaterialized(result))
        total += getSizeInBytes(result.getType());
    bytes[&op] = total;
  }
}
