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
  bool hasReduction = false, hasWhole = false;
  for (int64_t f = 0; f < rule.getNumFactors(); ++f) {
    FactorKind kind = rule.getFactorKind(f);
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
  if (rule.isPointwise())
    return FusionKind::Pointwise;
  if (hasWhole && !hasReduction && op->getNumOperands() &&
      op->getNumResults() &&
      op->getResult(0).getType() == op->getOperand(0).getType())
    return FusionKind::RowNormalization;
  return FusionKind::Other;
}

/// Users that can take a value on the fly: all but contractions.
bool takesOnTheFly(FusionKind user) { return user != FusionKind::Contraction; }

using KindMap = llvm::DenseMap<Operation *, FusionKind>;

/// The single factor of `rule` that must stay whole, or -1.
int64_t getWholeFactor(const ShardingRule &rule) {
  int64_t whole = -1;
  for (int64_t f = 0; f < rule.getNumFactors(); ++f)
    if (rule.getFactorKind(f) == FactorKind::NeedReplication) {
      if (whole >= 0)
        return -1;
      whole = f;
    }
  return whole;
}

/// Whether `op`'s result `0` has operand `operand`'s dimensions in order.
bool keepsDimensions(Operation *op, unsigned operand) {
  ShardingRule rule = cast<ShardableOpInterface>(op).getShardingRule();
  return rule.getNumResults() == 1 &&
         rule.getOperandFactors(operand) == rule.getResultFactors(0);
}

/// Whether `value` is small beside a `reference`-sized tensor: a mask, a
/// bias or a scale that a fused kernel loads again cheaply.
bool isSideInput(Value value, Value reference) {
  auto type = dyn_cast<ShapedType>(value.getType());
  return type && type.hasStaticShape() &&
         type.getNumElements() * 2 <=
             cast<ShapedType>(reference.getType()).getNumElements();
}

/// The contraction `value` is computed from through dimension-preserving
/// pointwise ops, each of whose other operands is a side input (the scale
/// and mask of attention scores, never a residual stream); collects the
/// values on the way.
Operation *getSourceContraction(Value value, const KindMap &kinds,
                                SmallVectorImpl<Value> &chain) {
  for (;;) {
    Operation *def = value.getDefiningOp();
    if (!def || !kinds.contains(def))
      return nullptr;
    chain.push_back(value);
    FusionKind kind = kinds.lookup(def);
    if (kind == FusionKind::Contraction)
      return def->getNumResults() == 1 ? def : nullptr;
    if (kind != FusionKind::Pointwise || def->getNumResults() != 1)
      return nullptr;
    std::optional<unsigned> main;
    for (auto [i, operand] : llvm::enumerate(def->getOperands())) {
      if (isSideInput(operand, value))
        continue;
      if (main || !keepsDimensions(def, i))
        return nullptr;
      main = i;
    }
    if (!main)
      return nullptr;
    value = def->getOperand(*main);
  }
}

/// Whether every use of `value`, through dimension-preserving pointwise
/// ops, is a contraction that sums over dimension `dim`; collects the
/// values on the way.
bool feedsContractionsOver(Value value, int64_t dim, const KindMap &kinds,
                           SmallVectorImpl<Value> &chain) {
  bool any = false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    // Out of scope: the backward pass, whose reads the fused kernel's own
    // backward replaces; but a returned value must be written.
    if (user->hasTrait<OpTrait::IsTerminator>())
      return false;
    if (!kinds.contains(user))
      continue;
    any = true;
    ShardingRule rule = cast<ShardableOpInterface>(user).getShardingRule();
    int64_t factor = rule.getOperandFactors(use.getOperandNumber())[dim];
    if (kinds.lookup(user) == FusionKind::Contraction) {
      if (factor < 0 || rule.getFactorKind(factor) != FactorKind::Reduction)
        return false;
      continue;
    }
    if (kinds.lookup(user) != FusionKind::Pointwise ||
        !keepsDimensions(user, use.getOperandNumber()))
      return false;
    chain.push_back(user->getResult(0));
    if (!feedsContractionsOver(user->getResult(0), dim, kinds, chain))
      return false;
  }
  return any;
}

/// FlashAttention's online softmax: a row normalization of a contraction's
/// output (through its scale and mask) along a dimension that only the
/// contraction's second operand indexes (the keys), consumed by
/// contractions that sum over that dimension (the values). The scores and
/// probabilities never reach memory; the backward pass recomputes them,
/// running the first contraction again.
void matchOnlineNormalization(Operation *op, const KindMap &kinds,
                              llvm::DenseSet<Value> &recomputed,
                              llvm::DenseSet<Operation *> &recomputedOps) {
  ShardingRule rule = cast<ShardableOpInterface>(op).getShardingRule();
  int64_t whole = getWholeFactor(rule);
  if (whole < 0 || op->getNumResults() != 1)
    return;
  auto dimension = llvm::find(rule.getOperandFactors(0), whole);
  if (dimension == rule.getOperandFactors(0).end())
    return;
  int64_t dim = dimension - rule.getOperandFactors(0).begin();
  SmallVector<Value> chain;
  Operation *source = getSourceContraction(op->getOperand(0), kinds, chain);
  if (!source || source->getNumOperands() != 2)
    return;
  ShardingRule sourceRule =
      cast<ShardableOpInterface>(source).getShardingRule();
  ArrayRef<int64_t> resultFactors = sourceRule.getResultFactors(0);
  if (dim >= int64_t(resultFactors.size()))
    return;
  int64_t keys = resultFactors[dim];
  if (keys < 0 || sourceRule.getFactorKind(keys) != FactorKind::Parallel ||
      llvm::is_contained(sourceRule.getOperandFactors(0), keys) ||
      !llvm::is_contained(sourceRule.getOperandFactors(1), keys))
    return;
  if (!feedsContractionsOver(op->getResult(0), dim, kinds, chain))
    return;
  recomputed.insert(chain.begin(), chain.end());
  recomputed.insert(op->getResult(0));
  recomputedOps.insert(source);
}
} // namespace

FusedTraffic::FusedTraffic(Block &block,
                           llvm::function_ref<bool(Operation *)> inScope,
                           llvm::function_ref<bool(Value)> mustStore,
                           bool fusedAttention) {
  llvm::DenseMap<Operation *, FusionKind> kinds;
  for (Operation &op : block)
    if (inScope(&op))
      kinds[&op] = classify(&op);
  auto kindOf = [&](Operation *op) {
    return kinds.lookup_or(op, FusionKind::Other);
  };
  for (auto &[op, kind] : kinds)
    if (kind == FusionKind::RowNormalization)
      matchOnlineNormalization(op, kinds, attentionCore, scoreContractions);
  if (fusedAttention) {
    recomputed = attentionCore;
    recomputedOps = scoreContractions;
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
