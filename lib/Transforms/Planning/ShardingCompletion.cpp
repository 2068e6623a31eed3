//===- ShardingCompletion.cpp - Shardings the plan implies ---------------===//

#include "dpc/Transforms/Planning/ShardingCompletion.h"
#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Interfaces/ShardableOpInterface.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/Transforms/Planning/ShardingSpace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"

#include <limits>

using namespace mlir;
using namespace mlir::dpc;

static bool isConstant(Value value) {
  return value.getDefiningOp() && matchPattern(value, m_Constant());
}

namespace {

/// The shardings and stages known so far, and how to extend them.
class Completion {
public:
  Completion(const PlanLayout &plan, const Cluster &cluster)
      : plan(plan), cluster(cluster),
        mesh(plan.pipelineParallel, plan.dataParallel, plan.tensorParallel,
             cluster, plan.dataInner) {}

  /// Lets sums stay pending through the ops that keep them, to be
  /// reduced once where a value must be whole.
  void setKeepPendingSums(bool keep) { keepPendingSums = keep; }
  /// Makes the function return each wanted value as it is wanted, so that
  /// its pending sums are reduced inside it, where they are made, and the
  /// reduction overlaps the rest of its backward pass.
  void setReturnAsWanted(bool asWanted) { returnAsWanted = asWanted; }

  /// Reads what annotatePlan wrote on `graph`'s function: its arguments
  /// and forward ops.
  void readPlanned(const TrainingGraph &graph);
  /// Chooses a sharding for every op of `func` that has none yet, in
  /// program order.
  void complete(func::FuncOp func);
  /// Writes the sharding (and stage) of every value of `func`.
  void write(func::FuncOp func);

  /// Seeds `value`.
  void set(Value value, const TensorSharding &sharding,
           std::optional<int64_t> stage) {
    TensorSharding &stored = shardings[value] = sharding;
    // A sum pending over one device is complete.
    for (StageAxis axis : {kDataAxis, kTensorAxis})
      if (mesh.getAxisSize(axis) == 1)
        stored.clearPartial(axis);
    if (stage)
      addStage(value, *stage);
  }
  const TensorSharding *lookup(Value value) const {
    auto it = shardings.find(value);
    return it == shardings.end() ? nullptr : &it->second;
  }
  /// The layout in which the function returns `value`.
  const TensorSharding *lookupReturned(Value value) const {
    if (auto it = wanted.find(value); returnAsWanted && it != wanted.end())
      return &it->second;
    return lookup(value);
  }
  /// The first stage that holds `value`.
  std::optional<int64_t> getStage(Value value) const {
    auto it = stages.find(value);
    if (it == stages.end() || it->second.empty())
      return std::nullopt;
    return it->second.front();
  }
  /// Asks that `value` be made with the dimensions of `sharding` (a
  /// gradient, laid out as its parameter).
  void want(Value value, const TensorSharding &sharding,
            std::optional<int64_t> stage) {
    wanted[value] = sharding;
    if (stage)
      wantedStages[value] = *stage;
  }
  /// `sharding` split over the data axis along its first whole dimension
  /// that the data-parallel degree divides (ZeRO's partition), if any.
  TensorSharding splitOverData(TensorSharding sharding, Type type) const;

private:
  struct Choice {
    SmallVector<TensorSharding, 3> operands, results;
    /// Seconds of resharding the operands, operands not taken as they
    /// lie, and seconds of compute per device.
    double reshardTime = std::numeric_limits<double>::infinity();
    int mismatches = 0;
    /// Results laid out otherwise than they must leave the function.
    int wrongResults = std::numeric_limits<int>::max();
    double computeTime = 0.0;
  };
  void choose(Operation *op);
  /// The stage that already holds the most operand bytes (the earliest of
  /// equals): a backward op runs where the forward values it reads are,
  /// and a gradient crosses to the stage before. Ops on constants and
  /// hyperparameters alone run on every stage (none).
  std::optional<int64_t> pickStage(Operation *op) const;
  /// The axes of the sum every operand of `op` holds pending alike, where
  /// `op` keeps them (Dpc_KeepsPendingSums) and sums are kept pending or
  /// `op` shrinks them.
  std::optional<unsigned> getKeptPendingSum(Operation *op) const;
  /// Wants the operands of a pointwise op laid out as its wanted result is,
  /// where the op is their only reader, back from the wanted gradients.
  void wantOperandsOfWanted(ArrayRef<Operation *> ops);
  /// Prices `choice` for `op`; `readerLayouts` holds, per result, the
  /// layouts its pointwise readers will move it into (getImpliedByReader).
  void evaluate(Operation *op, Choice &choice,
                ArrayRef<SmallVector<TensorSharding, 1>> readerLayouts) const;
  /// The layout the reader of `use` takes it in when the reader is
  /// pointwise and another of its operands already lies split: that
  /// operand's layout, through the reader's rule.
  std::optional<TensorSharding> getImpliedByReader(OpOperand &use) const;
  /// How `value` lies, or, not laid out yet, how a pointwise op would make
  /// it from operands that lie split (up to `depth` ops back).
  std::optional<TensorSharding> getNaturalLayout(Value value, int depth) const;
  /// Whether `value` is a constant or computed from constants alone (an
  /// iota reshaped, a mask): every rank can make it whole, and any layout
  /// of it is a free slice of that.
  bool isConstantLike(Value value) const {
    return isConstant(value) || constantLike.contains(value);
  }
  /// `sharding` without the axes of one device, which split nothing.
  TensorSharding onMesh(TensorSharding sharding) const {
    for (StageAxis axis : {kDataAxis, kTensorAxis})
      if (mesh.getAxisSize(axis) == 1) {
        for (unsigned &axes : sharding.dims)
          axes &= ~unsigned(axis);
        sharding.clearPartial(axis);
      }
    return sharding;
  }
  /// Records that `stage` holds `value`.
  void addStage(Value value, int64_t stage) {
    SmallVector<int64_t, 2> &held = stages[value];
    auto it = llvm::lower_bound(held, stage);
    if (it == held.end() || *it != stage)
      held.insert(it, stage);
  }

  const PlanLayout &plan;
  const Cluster &cluster;
  StageMesh mesh;
  bool keepPendingSums = false;
  bool returnAsWanted = false;
  llvm::DenseMap<Value, TensorSharding> shardings;
  /// The stages that hold each value, ascending: where it is made and,
  /// for a forward value, every stage whose forward ops read it (it was
  /// sent there).
  llvm::DenseMap<Value, SmallVector<int64_t, 2>> stages;
  llvm::DenseSet<Operation *> planned;
  llvm::DenseSet<Value> constantLike;
  llvm::DenseMap<Value, TensorSharding> wanted;
  /// The stage a value must leave from (a gradient: its parameter's).
  llvm::DenseMap<Value, int64_t> wantedStages;
  /// The stage each completed op runs on (none: every stage).
  llvm::DenseMap<Operation *, std::optional<int64_t>> opStages;
  /// The layouts each completed op takes its operands in.
  llvm::DenseMap<Operation *, SmallVector<TensorSharding, 3>> opOperands;
};

} // namespace

static TensorSharding replicatedLike(Value value) {
  return TensorSharding::replicated(
      cast<ShapedType>(value.getType()).getRank());
}

/// What the plan wrote for `value` (ShardingConstraints already checked
/// that the planner can read it).
static TensorSharding readOrReplicate(Attribute attr, Value value) {
  std::string error;
  if (auto sharding = dyn_cast_or_null<ShardingAttr>(attr))
    if (FailureOr<TensorSharding> planned = getTensorSharding(sharding, error);
        succeeded(planned))
      return *planned;
  return replicatedLike(value);
}

void Completion::readPlanned(const TrainingGraph &graph) {
  func::FuncOp func = graph.getFunction();
  for (BlockArgument arg : func.getArguments())
    shardings[arg] = readOrReplicate(
        func.getArgAttr(arg.getArgNumber(), DpcDialect::kShardingAttrName),
        arg);
  for (Operation *op : graph.getForwardOps()) {
    auto attrs = op->getAttrOfType<ArrayAttr>(DpcDialect::kShardingAttrName);
    auto stage = op->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName);
    if (!attrs || !stage || attrs.size() != op->getNumResults())
      continue;
    planned.insert(op);
    for (auto [attr, result] : llvm::zip_equal(attrs, op->getResults())) {
      shardings[result] = readOrReplicate(attr, result);
      addStage(result, stage.getInt());
    }
  }
  // A value the forward pass reads on another stage was sent there.
  for (Operation *op : graph.getForwardOps())
    if (auto stage = op->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName))
      for (Value operand : op->getOperands())
        addStage(operand, stage.getInt());
}

TensorSharding Completion::splitOverData(TensorSharding sharding,
                                         Type type) const {
  int64_t d = plan.dataParallel;
  if (d == 1 || sharding.getSplitDim(kDataAxis) >= 0)
    return sharding;
  ArrayRef<int64_t> shape = cast<ShapedType>(type).getShape();
  // A dimension the tensor axis does not split first, else the one it
  // does, the data axis minor: either way the gradient, split over tp and
  // pending over dp, is reduce-scattered over dp within each tp block (as
  // Megatron-LM's distributed optimizer shards each tensor-parallel rank's
  // own parameters).
  for (bool alsoSplit : {false, true})
    for (auto [dim, axes] : llvm::enumerate(sharding.dims)) {
      if (!alsoSplit && axes)
        continue;
      int64_t local =
          shape[dim] / (axes & kTensorAxis ? plan.tensorParallel : 1);
      if (local % d == 0) {
        sharding.dataMinor = axes != 0;
        axes |= kDataAxis;
        return sharding;
      }
    }
  return sharding;
}

/// Whether `result` lies as `wanted` does, or becomes it by finishing its
/// pending sums alone: a sum pending over an axis that `wanted` splits a
/// dimension along is reduce-scattered into it (a weight's gradient under
/// ZeRO), one over an axis `wanted` does not use is all-reduced.
static bool isReducedInto(const TensorSharding &result,
                          const TensorSharding &wanted) {
  for (auto [have, want] : llvm::zip_equal(result.dims, wanted.dims))
    if (have != (want & ~result.partial))
      return false;
  return true;
}

/// Prices `choice` for `op`: the resharding of every operand from where it
/// lies, and the op's compute on its share.
void Completion::evaluate(
    Operation *op, Choice &choice,
    ArrayRef<SmallVector<TensorSharding, 1>> readerLayouts) const {
  double reshardTime = 0.0;
  int mismatches = 0;
  for (auto [operand, wanted] :
       llvm::zip_equal(op->getOperands(), choice.operands)) {
    const TensorSharding *have = lookup(operand);
    if (!have)
      continue;
    // A constant is sliced for free, but counts as taken otherwise than it
    // lies: splitting an op only because a constant can be split makes a
    // split value that must be gathered later.
    if (!(onMesh(*have) == onMesh(wanted)))
      ++mismatches;
    if (isConstantLike(operand))
      continue;
    double bytes = getSizeInBytes(operand.getType());
    reshardTime += getReshardingTime(bytes, *have, wanted, mesh);
    // A sum reduce-scattered now is gathered later, where the value must
    // be whole, and each collective call has its own start-up: both are
    // priced here, so that a small sum (a normalization's statistics) is
    // all-reduced in one call rather than reduce-scattered and gathered in
    // two. Where the result is wanted split (ZeRO's gradient shards), the
    // wanted layout decides first.
    for (StageAxis axis : {kDataAxis, kTensorAxis}) {
      if (!(have->partial & axis) || (wanted.partial & axis) ||
          wanted.getSplitDim(axis) < 0)
        continue;
      TensorSharding whole = wanted;
      whole.dims[wanted.getSplitDim(axis)] &= ~unsigned(axis);
      reshardTime += getReshardingTime(bytes, wanted, whole, mesh, axis) +
                     cluster.intraNode.latency;
    }
  }
  // A result split over an axis that splits none of the operands is a
  // slice made from whole values: left whole, each reader takes the slice
  // it needs for free (made here, it may be the wrong one, and be moved).
  for (StageAxis axis : {kDataAxis, kTensorAxis}) {
    if (mesh.getAxisSize(axis) == 1 ||
        llvm::any_of(op->getOperands(), [&](Value operand) {
          const TensorSharding *have = lookup(operand);
          return have &&
                 (have->getSplitDim(axis) >= 0 || (have->partial & axis));
        }))
      continue;
    if (llvm::any_of(choice.results, [&](const TensorSharding &result) {
          return result.getSplitDim(axis) >= 0;
        }))
      ++mismatches;
  }
  int64_t shards = 1;
  for (const TensorSharding &result : choice.results)
    shards = std::max(shards, result.getShards(mesh));
  // What becomes of each result where it is read is priced here, where it
  // is made. A pointwise reader that combines it with a value already laid
  // out (an activation's derivative, from the stored activation) moves it
  // into that value's layout: so a contraction does not split a factor the
  // reader moves back (an input gradient made by columns, all-to-all'ed to
  // the stored activation's batch split). Otherwise a sum left pending is
  // finished by the readers, at the cheapest by a reduce-scatter: so an
  // input gradient is not contracted over a split factor (its whole tensor
  // all-reduced) where gathering a weight would make it local. (A reader
  // that keeps the sum pending, a weight gradient's reduction over the
  // sequence, reduces fewer bytes later; a wanted result is priced below.)
  unsigned operandPartials = 0;
  for (const TensorSharding &operand : choice.operands)
    operandPartials |= operand.partial;
  for (auto [result, sharding, implied] :
       llvm::zip_equal(op->getResults(), choice.results, readerLayouts)) {
    double bytes = getSizeInBytes(result.getType());
    for (const TensorSharding &layout : implied)
      reshardTime += getReshardingTime(bytes, sharding, layout, mesh);
    unsigned made = sharding.partial & ~operandPartials;
    if (!implied.empty() || !made || wanted.contains(result) ||
        llvm::all_of(result.getUsers(), [](Operation *user) {
          return dpc::keepsPendingSums(user);
        }))
      continue;
    for (StageAxis axis : {kDataAxis, kTensorAxis})
      if ((made & axis) && mesh.getAxisSize(axis) > 1)
        reshardTime += getBestCollective(CollectiveKind::ReduceScatter, bytes,
                                         mesh.getGroup(axis), cluster)
                           .time;
  }
  choice.reshardTime = reshardTime;
  choice.mismatches = mismatches;
  choice.wrongResults = 0;
  for (auto [result, sharding] :
       llvm::zip_equal(op->getResults(), choice.results)) {
    auto it = wanted.find(result);
    if (it == wanted.end())
      continue;
    if (!isReducedInto(onMesh(sharding), onMesh(it->second)))
      ++choice.wrongResults;
    // Bringing the result to its layout over tp is part of the choice,
    // where it is done once per call: a weight gradient contracted over a
    // batch split over tp as well is reduce-scattered over tp, where moving
    // the (smaller) output gradient into the weight's layout first costs a
    // fraction of that. (Over dp, every candidate leaves the sum the plan
    // reduces in buckets; sums accumulated over micro-batches are reduced
    // once per step.)
    if (returnAsWanted)
      choice.reshardTime +=
          getReshardingTime(getSizeInBytes(result.getType()), sharding,
                            it->second, mesh, kTensorAxis);
  }
  choice.computeTime = getOpComputeEstimate(op, cluster, double(shards)).time;
}

/// `sharding` of a tensor whose dimensions a sharding rule indexes by
/// `from` carried to the tensor it indexes by `to`, along the factors they
/// share (a pointwise op's operands and result).
static TensorSharding carryAlongFactors(const TensorSharding &sharding,
                                        ArrayRef<int64_t> from,
                                        ArrayRef<int64_t> to) {
  TensorSharding carried = TensorSharding::replicated(to.size());
  carried.dataMinor = sharding.dataMinor;
  for (auto [dim, factor] : llvm::enumerate(to)) {
    auto it = llvm::find(from, factor);
    if (factor != ShardingRule::kNoFactor && it != from.end())
      carried.dims[dim] = sharding.dims[it - from.begin()];
  }
  return carried;
}

/// The sharding rule of `op` when it is pointwise and names every operand
/// (elementwise ops, broadcasts, transposes, casts).
static std::optional<ShardingRule> getPointwiseRule(Operation *op) {
  auto shardable = dyn_cast<ShardableOpInterface>(op);
  if (!shardable)
    return std::nullopt;
  ShardingRule rule = shardable.getShardingRule();
  if (!rule.isPointwise() || rule.getNumOperands() != op->getNumOperands())
    return std::nullopt;
  return rule;
}

static bool isSplit(const TensorSharding &sharding) {
  return llvm::any_of(sharding.dims, [](unsigned axes) { return axes != 0; });
}

std::optional<TensorSharding> Completion::getNaturalLayout(Value value,
                                                           int depth) const {
  if (const TensorSharding *have = lookup(value))
    return *have;
  Operation *def = value.getDefiningOp();
  if (!def || depth == 0 || def->getNumResults() != 1)
    return std::nullopt;
  std::optional<ShardingRule> rule = getPointwiseRule(def);
  if (!rule)
    return std::nullopt;
  for (auto [i, operand] : llvm::enumerate(def->getOperands())) {
    if (isConstantLike(operand))
      continue;
    std::optional<TensorSharding> layout = getNaturalLayout(operand, depth - 1);
    if (layout && isSplit(*layout))
      return carryAlongFactors(*layout, rule->getOperandFactors(i),
                               rule->getResultFactors(0));
  }
  return std::nullopt;
}

std::optional<TensorSharding>
Completion::getImpliedByReader(OpOperand &use) const {
  Operation *reader = use.getOwner();
  std::optional<ShardingRule> rule = getPointwiseRule(reader);
  if (!rule || reader->getNumResults() != 1 || lookup(reader->getResult(0)))
    return std::nullopt;
  for (auto [k, other] : llvm::enumerate(reader->getOperands())) {
    if (k == use.getOperandNumber() || isConstantLike(other))
      continue;
    // (Made from values already laid out by pointwise ops, not chosen yet:
    // the derivative of an activation, from the stored activation.)
    std::optional<TensorSharding> layout = getNaturalLayout(other, 4);
    if (layout && isSplit(*layout))
      return carryAlongFactors(*layout, rule->getOperandFactors(k),
                               rule->getOperandFactors(use.getOperandNumber()));
  }
  return std::nullopt;
}

/// Whether `a` beats `b`: less resharding, then operands kept as they lie
/// (a free slice now is a gather later, when the value must be whole
/// again), then less compute.
static bool isBetter(double reshardA, int mismatchesA, double computeA,
                     double reshardB, int mismatchesB, double computeB) {
  auto less = [](double x, double y) { return x < y * (1 - 1e-9) - 1e-15; };
  if (less(reshardA, reshardB) || less(reshardB, reshardA))
    return less(reshardA, reshardB);
  if (mismatchesA != mismatchesB)
    return mismatchesA < mismatchesB;
  return less(computeA, computeB);
}

void Completion::choose(Operation *op) {
  // Where the results' pointwise readers will move them: the same for
  // every candidate.
  SmallVector<SmallVector<TensorSharding, 1>> readerLayouts;
  for (Value result : op->getResults()) {
    SmallVector<TensorSharding, 1> &layouts = readerLayouts.emplace_back();
    for (OpOperand &use : result.getUses())
      if (std::optional<TensorSharding> implied = getImpliedByReader(use))
        layouts.push_back(std::move(*implied));
  }
  Choice best;
  auto consider = [&](Choice candidate) {
    evaluate(op, candidate, readerLayouts);
    if (candidate.wrongResults < best.wrongResults ||
        (candidate.wrongResults == best.wrongResults &&
         isBetter(candidate.reshardTime, candidate.mismatches,
                  candidate.computeTime, best.reshardTime, best.mismatches,
                  best.computeTime)))
      best = std::move(candidate);
  };

  // Made from constants alone: whole on every rank, so that each user
  // takes the layout it likes best by a free slice (split, it would be
  // gathered for a user that needs it whole).
  bool fromConstants = op->getNumOperands() > 0 && op->getNumRegions() == 0 &&
                       isMemoryEffectFree(op) &&
                       llvm::all_of(op->getOperands(), [&](Value operand) {
                         return isConstantLike(operand);
                       });
  auto shardable = dyn_cast<ShardableOpInterface>(op);
  if (fromConstants)
    constantLike.insert(op->result_begin(), op->result_end());
  if (fromConstants || !shardable) {
    // Made from constants, or no rule: the whole op on every device.
    Choice whole;
    for (Value operand : op->getOperands())
      whole.operands.push_back(replicatedLike(operand));
    for (Value result : op->getResults())
      whole.results.push_back(replicatedLike(result));
    consider(std::move(whole));
  } else {
    ShardingRule rule = shardable.getShardingRule();
    int64_t d = plan.dataParallel, t = plan.tensorParallel;
    std::optional<unsigned> pending = getKeptPendingSum(op);
    auto splittable = [&](int64_t factor, int64_t ways) {
      return rule.getFactorKind(factor) != FactorKind::NeedReplication &&
             rule.getFactorSize(factor) % ways == 0;
    };

    // The optimizer splits its work over an axis only where its state is
    // split (a tensor-parallel weight's, ZeRO's shards): otherwise every
    // device of the axis holds the whole state and runs the whole update,
    // and splitting it would only turn the gradient's all-reduce into a
    // reduce-scatter and gathers of each new state. (What the batch
    // splits, a micro-batch's slice of the inputs, stays split.)
    //
    // The backward pass, likewise, splits its work over an axis only where
    // an operand is split or partial over it, as the forward's dual is:
    // splitting a whole value by a free slice saves compute at this op and
    // costs a gather at a later one, which an op-by-op choice does not see
    // (and the planner, pricing the dual, does not charge).
    auto phase = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
    auto isWholeOver = [&](StageAxis axis) {
      if (!phase || phase.getValue() == Phase::forward)
        return false;
      // (A result wanted split over the axis, a weight gradient in its
      // weight's layout, is made split: made whole, it would be reduced
      // whole and sliced.)
      if (llvm::any_of(op->getResults(), [&](Value result) {
            auto it = wanted.find(result);
            return it != wanted.end() && it->second.getSplitDim(axis) >= 0;
          }))
        return false;
      if (phase.getValue() == Phase::optimizer)
        return !(axis == kDataAxis && plan.zeroStage > 0) &&
               llvm::none_of(op->getOperands(), [&](Value operand) {
                 const TensorSharding *have = lookup(operand);
                 return have && have->getSplitDim(axis) >= 0;
               });
      return llvm::none_of(op->getOperands(), [&](Value operand) {
        const TensorSharding *have = lookup(operand);
        return have && (have->getSplitDim(axis) >= 0 || (have->partial & axis));
      });
    };
    bool wholeOverData = isWholeOver(kDataAxis);
    bool wholeOverTensor = isWholeOver(kTensorAxis);
    for (int64_t dataFactor = -1; dataFactor < rule.getNumFactors();
         ++dataFactor) {
      if (dataFactor >= 0 &&
          (d == 1 || wholeOverData || !splittable(dataFactor, d)))
        continue;
      for (int64_t tensorFactor = -1; tensorFactor < rule.getNumFactors();
           ++tensorFactor) {
        // One factor may take both axes (the batch over dp+tp).
        if (tensorFactor >= 0 &&
            (t == 1 || wholeOverTensor ||
             !splittable(tensorFactor, tensorFactor == dataFactor ? d * t : t)))
          continue;
        Choice candidate;
        for (unsigned i = 0; i < rule.getNumOperands(); ++i)
          candidate.operands.push_back(getFactorSharding(
              rule, rule.getOperandFactors(i), dataFactor, tensorFactor,
              /*isResult=*/false));
        for (unsigned j = 0; j < rule.getNumResults(); ++j)
          candidate.results.push_back(getFactorSharding(
              rule, rule.getResultFactors(j), dataFactor, tensorFactor,
              /*isResult=*/true));
        // The same, on the terms of a sum left pending.
        if (pending) {
          Choice kept = candidate;
          bool splitsPendingAxis = false;
          for (auto [operand, sharding] :
               llvm::zip_equal(op->getOperands(), kept.operands)) {
            for (unsigned axes : sharding.dims)
              splitsPendingAxis |= (axes & *pending) != 0;
            if (!takesPendingSum(operand))
              continue;
            for (StageAxis axis : {kDataAxis, kTensorAxis})
              if (*pending & axis)
                sharding.setPartial(axis, ReductionKind::sum);
          }
          for (TensorSharding &sharding : kept.results)
            for (StageAxis axis : {kDataAxis, kTensorAxis})
              if (*pending & axis)
                sharding.setPartial(axis, ReductionKind::sum);
          if (!splitsPendingAxis)
            consider(std::move(kept));
        }
        // A factor over both axes, either major: ZeRO's shards of a
        // tensor-parallel weight split each tp block over dp.
        if (tensorFactor >= 0 && tensorFactor == dataFactor) {
          Choice dataMinor = candidate;
          for (auto *shardings : {&dataMinor.operands, &dataMinor.results})
            for (TensorSharding &sharding : *shardings)
              sharding.dataMinor = true;
          consider(std::move(dataMinor));
        }
        consider(std::move(candidate));
      }
    }
  }

  std::optional<int64_t> stage = pickStage(op);
  opStages[op] = stage;
  opOperands[op] = best.operands;
  for (auto [result, sharding] :
       llvm::zip_equal(op->getResults(), best.results))
    set(result, sharding, stage);
}

std::optional<unsigned> Completion::getKeptPendingSum(Operation *op) const {
  if (!dpc::keepsPendingSums(op) || op->getNumOperands() == 0)
    return std::nullopt;
  // Without accumulation, a sum stays pending only through an op that
  // shrinks it (a weight gradient's sum over the sequence: reduced after
  // it, fewer bytes are sent), or that makes a gradient from as many bytes
  // (an embedding table's, scattered from its rows: reduced with the other
  // gradients, not alone before).
  double pendingBytes = 0.0, resultBytes = 0.0;
  bool makesGradients = true;
  for (Value result : op->getResults()) {
    resultBytes += getSizeInBytes(result.getType());
    makesGradients &= wanted.contains(result);
  }
  // The sums every operand holds pending: one pending over more axes than
  // the others (a term already summed over the data axis and still over
  // the tensor axis) finishes its other sums first.
  std::optional<unsigned> pending;
  for (Value operand : op->getOperands()) {
    if (!takesPendingSum(operand))
      continue;
    pendingBytes += getSizeInBytes(operand.getType());
    const TensorSharding *sharding = lookup(operand);
    if (isConstantLike(operand) || !sharding)
      return std::nullopt;
    unsigned sums = 0;
    for (StageAxis axis : {kDataAxis, kTensorAxis})
      if ((sharding->partial & axis) &&
          sharding->getPartialKind(axis) == ReductionKind::sum)
        sums |= axis;
    pending = pending ? *pending & sums : sums;
  }
  if (!pending || !*pending)
    return std::nullopt;
  // A sum over tp is not sent to another stage pending: finished where it
  // is made, only a block of it crosses (a tied table's term from the stage
  // of the output projection, reduce-scattered over tp before it is sent;
  // its sum over dp is reduced with the other gradients where they are).
  // So an op does not keep it where its result is wanted on another stage,
  // nor where an operand comes from one.
  if (std::optional<int64_t> stage = pickStage(op)) {
    bool crosses = false;
    for (Value result : op->getResults())
      if (auto it = wantedStages.find(result);
          it != wantedStages.end() && it->second != *stage)
        crosses = true;
    for (Value operand : op->getOperands())
      if (auto it = stages.find(operand);
          takesPendingSum(operand) && it != stages.end() &&
          !llvm::is_contained(it->second, *stage))
        crosses = true;
    if (crosses)
      *pending &= ~unsigned(kTensorAxis);
    if (!*pending)
      return std::nullopt;
  }
  if (!keepPendingSums && !(resultBytes < pendingBytes) &&
      !(makesGradients && resultBytes <= pendingBytes))
    return std::nullopt;
  return pending;
}

void Completion::wantOperandsOfWanted(ArrayRef<Operation *> ops) {
  // A gradient made of several terms (an embedding table's, from its
  // lookup and from the output projection that shares it) is summed,
  // transposed and cast on its way out. Wanted split at the end alone, each
  // term would be reduced whole before the sum and sliced after it; wanted
  // split where it is made, each is reduce-scattered, or made split.
  llvm::DenseSet<Operation *> completed(ops.begin(), ops.end());
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1 || !isMemoryEffectFree(op))
      continue;
    auto it = wanted.find(op->getResult(0));
    std::optional<ShardingRule> rule = getPointwiseRule(op);
    if (it == wanted.end() || !rule)
      continue;
    // A copy: wanting an operand inserts into `wanted`, which may move it.
    TensorSharding want = it->second;
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      Operation *def = operand.getDefiningOp();
      if (!def || !completed.contains(def) || !operand.hasOneUse() ||
          isConstant(operand) || wanted.contains(operand))
        continue;
      wanted[operand] = carryAlongFactors(want, rule->getResultFactors(0),
                                          rule->getOperandFactors(i));
      if (auto stage = wantedStages.find(op->getResult(0));
          stage != wantedStages.end())
        wantedStages[operand] = int64_t(stage->second);
    }
  }
}

std::optional<int64_t> Completion::pickStage(Operation *op) const {
  std::optional<int64_t> stage;
  // Bytes of the operands each stage holds: the op runs where the least
  // has to be sent (a gradient's clipping runs with the gradient, not with
  // the scalar factor).
  llvm::SmallDenseMap<int64_t, double> held;
  for (Value operand : op->getOperands())
    if (!isConstantLike(operand))
      if (auto it = stages.find(operand); it != stages.end())
        for (int64_t s : it->second)
          held[s] += getSizeInBytes(operand.getType());
  // Among stages that hold as many bytes, the earliest.
  for (auto [s, bytes] : held)
    if (!stage || bytes > held.lookup(*stage) ||
        (bytes == held.lookup(*stage) && s < *stage))
      stage = s;
  return stage;
}

void Completion::complete(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (planned.contains(op) || op->getNumResults() == 0 ||
        op->hasTrait<mlir::OpTrait::IsTerminator>() || isa<func::CallOp>(op))
      return;
    if (!llvm::all_of(op->getResultTypes(), llvm::IsaPred<ShapedType>))
      return;
    ops.push_back(op);
  });
  wantOperandsOfWanted(ops);
  for (Operation *op : ops)
    choose(op);
  if (plan.pipelineParallel == 1)
    return;
  // Second pass over the stages: a value is also held where its users
  // run, so that an op on a gradient sent back across a stage boundary
  // (a bias gradient's reduction) runs on the stage before, with the
  // layer it belongs to.
  llvm::DenseMap<Value, SmallVector<int64_t, 2>> sentTo;
  // Where each value is made (and, for a forward value, read forward),
  // before the stages its backward readers run on are added.
  llvm::DenseMap<Value, SmallVector<int64_t, 2>> made = stages;
  for (Operation *op : ops)
    if (std::optional<int64_t> stage = opStages.lookup(op))
      for (Value operand : op->getOperands())
        if (!isConstantLike(operand)) {
          addStage(operand, *stage);
          sentTo[operand].push_back(*stage);
        }
  // Ops that only feed gradients of parameters on one stage (a weight
  // gradient's contraction, a bias gradient's reduction, their casts) run
  // on that stage, where the parameter and its optimizer state live; their
  // operands are sent there, unless that sends more than their results (the
  // input gradient of the next stage's first matmul, made from its weight
  // and output gradient, feeding an embedding table's gradient here).
  llvm::DenseMap<Operation *, int64_t> pinned;
  auto isHeldBy = [&](Value operand, int64_t stage, Operation *reader) {
    if (llvm::is_contained(made.lookup(operand), stage))
      return true;
    return llvm::any_of(operand.getUsers(), [&](Operation *user) {
      if (user == reader)
        return false;
      if (auto it = pinned.find(user); it != pinned.end())
        return it->second == stage;
      return opStages.lookup(user) == std::optional(stage);
    });
  };
  auto isWorthPinning = [&](Operation *op, int64_t stage) {
    // Unpinned, it runs on a later stage, whose backward pass runs first:
    // sending to an earlier stage follows the gradients' way.
    std::optional<int64_t> elsewhere = opStages.lookup(op);
    if (!elsewhere || *elsewhere <= stage)
      return true;
    double operandBytes = 0.0, resultBytes = 0.0;
    for (Value operand : op->getOperands())
      if (!isConstantLike(operand) && !isHeldBy(operand, stage, op))
        operandBytes += getSizeInBytes(operand.getType());
    // A result whose sum is pending over tp is reduce-scattered before it
    // is sent (insert-reshards), so a tp block of it crosses (the output
    // projection's term of a table tied across stages).
    for (Value result : op->getResults()) {
      const TensorSharding *sharding = lookup(result);
      resultBytes +=
          getSizeInBytes(result.getType()) /
          (sharding && (sharding->partial & kTensorAxis) ? plan.tensorParallel
                                                         : 1);
    }
    return operandBytes <= resultBytes;
  };
  for (Operation *op : llvm::reverse(ops)) {
    std::optional<int64_t> only;
    bool consistent = true;
    auto require = [&](std::optional<int64_t> s) {
      if (!s || (only && *only != *s))
        consistent = false;
      else
        only = s;
    };
    for (Value result : op->getResults())
      for (OpOperand &use : result.getUses()) {
        Operation *user = use.getOwner();
        if (user->hasTrait<mlir::OpTrait::IsTerminator>()) {
          auto it = wantedStages.find(result);
          require(it == wantedStages.end() ? std::nullopt
                                           : std::optional(it->second));
        } else {
          auto it = pinned.find(user);
          require(it == pinned.end() ? std::nullopt
                                     : std::optional(it->second));
        }
      }
    if (consistent && only && isWorthPinning(op, *only))
      pinned[op] = *only;
  }
  for (Operation *op : ops) {
    std::optional<int64_t> stage;
    if (auto it = pinned.find(op); it != pinned.end())
      stage = it->second;
    else
      stage = pickStage(op);
    opStages[op] = stage;
    for (Value result : op->getResults()) {
      stages.erase(result);
      if (stage)
        addStage(result, *stage);
      for (int64_t s : sentTo.lookup(result))
        addStage(result, s);
    }
  }
}

void Completion::write(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  Builder builder(context);
  func.walk([&](Operation *op) {
    if (op->getNumResults() == 0 || planned.contains(op))
      return;
    SmallVector<TensorSharding> results;
    for (Value result : op->getResults()) {
      const TensorSharding *sharding = lookup(result);
      if (!sharding)
        return;
      results.push_back(*sharding);
    }
    op->setAttr(DpcDialect::kShardingAttrName,
                getShardingArrayAttr(context, results));
    if (auto it = opOperands.find(op); it != opOperands.end())
      op->setAttr(DpcDialect::kOperandShardingsAttrName,
                  getShardingArrayAttr(context, it->second));
    if (std::optional<int64_t> stage = opStages.lookup(op))
      op->setAttr(DpcDialect::kStageAttrName,
                  builder.getI64IntegerAttr(*stage));
    else
      op->removeAttr(DpcDialect::kStageAttrName);
  });
  for (BlockArgument arg : func.getArguments())
    if (const TensorSharding *sharding = lookup(arg))
      func.setArgAttr(arg.getArgNumber(), DpcDialect::kShardingAttrName,
                      getShardingAttr(context, *sharding));
  Operation *terminator = func.getBody().back().getTerminator();
  for (auto [i, value] : llvm::enumerate(terminator->getOperands()))
    if (const TensorSharding *sharding = lookupReturned(value))
      func.setResultAttr(i, DpcDialect::kShardingAttrName,
                         getShardingAttr(context, *sharding));
}

FailureOr<PlanLayout> PlanLayout::read(ModuleOp module) {
  auto mesh = module.lookupSymbol<MeshOp>(kPlanMeshName);
  auto fields =
      module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
  if (!mesh || !fields)
    return emitError(module.getLoc(),
                     "the module has no plan (dpc.mesh @plan and "
                     "dpc.plan): run -dpc-plan first");
  PlanLayout layout;
  for (auto [field, name] :
       {std::pair(&layout.pipelineParallel, kStageAxisName),
        std::pair(&layout.dataParallel, kDataAxisName),
        std::pair(&layout.tensorParallel, kTensorAxisName)}) {
    std::optional<int64_t> size = mesh.getAxisSize(name);
    if (!size)
      return mesh.emitOpError("has no axis '") << name << "' of a plan";
    *field = *size;
  }
  // The axis listed last is the innermost.
  for (Attribute axis : mesh.getAxisNames())
    if (StringRef name = cast<StringAttr>(axis).getValue();
        name == kDataAxisName || name == kTensorAxisName)
      layout.dataInner = name == kDataAxisName;
  auto zero = fields.getAs<IntegerAttr>("zero_stage");
  auto cluster = fields.getAs<StringAttr>("cluster");
  if (!zero || !cluster)
    return emitError(module.getLoc(),
                     "dpc.plan lacks its zero_stage or cluster");
  layout.zeroStage = zero.getInt();
  layout.cluster = cluster.getValue().str();
  if (auto mesh = fields.getAs<StringAttr>("mesh"))
    layout.mesh = mesh.getValue().str();
  return layout;
}

static bool hasPhase(Operation *op, Phase phase) {
  auto attr = op->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
  return attr && attr.getValue() == phase;
}

/// Under ZeRO-3 a whole parameter lives only while one pass reads it. A
/// forward op that reads parameters alone (a weight's transpose or cast)
/// would keep its whole result stored for the backward pass; it is made
/// again there instead, from the parameter gathered again.
static void remakeParameterViewsForBackward(const TrainingGraph &graph) {
  Block &body = graph.getFunction().getBody().front();
  SmallVector<Operation *> views;
  for (Operation *op : graph.getForwardOps())
    if (graph.isParameterView(op))
      views.push_back(op);
  // The views the backward pass reads, and the views they are made from.
  llvm::DenseSet<Operation *> needed;
  for (Operation *view : llvm::reverse(views))
    if (llvm::any_of(view->getUsers(), [&](Operation *user) {
          return hasPhase(user, Phase::backward) || needed.contains(user);
        }))
      needed.insert(view);
  Operation *firstBackward = nullptr;
  for (Operation &op : body)
    if (hasPhase(&op, Phase::backward)) {
      firstBackward = &op;
      break;
    }
  if (needed.empty() || !firstBackward)
    return;
  OpBuilder builder(firstBackward);
  IRMapping remade;
  for (Operation *view : views) {
    if (!needed.contains(view))
      continue;
    Operation *copy = builder.clone(*view, remade);
    copy->setAttr(
        DpcDialect::kPhaseAttrName,
        PhaseAttr::get(graph.getFunction().getContext(), Phase::backward));
    for (auto [result, again] :
         llvm::zip_equal(view->getResults(), copy->getResults()))
      result.replaceUsesWithIf(again, [&](OpOperand &use) {
        return hasPhase(use.getOwner(), Phase::backward);
      });
  }
}

/// Under ZeRO a pointwise view of a parameter block (its cast to the
/// compute precision, its transpose), in either pass, runs on the rank's
/// block of it (`blocks`), so that what is gathered is the view: a bf16
/// copy under mixed precision, half the bytes of the fp32 master, as
/// Megatron-LM and DeepSpeed gather their compute copies. Each view read
/// otherwise is gathered over the data axis once, before its first
/// reader, and every reader takes its layout from that whole copy: left to
/// the readers, two wanting other tensor-parallel layouts (the embedding
/// and the output projection of a tied table, a forward and a backward
/// matmul) would each gather it. (ZeRO-3 remakes its views for the
/// backward pass, so that is once per pass.)
static void makeViewsOfBlocks(func::FuncOp func,
                              llvm::DenseMap<Value, TensorSharding> blocks) {
  MLIRContext *context = func.getContext();
  auto isView = [](Operation *op) {
    return op->getNumOperands() == 1 && op->getNumResults() == 1 &&
           isMemoryEffectFree(op) && getPointwiseRule(op);
  };
  SmallVector<Operation *> madeOnBlocks;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (!isView(&op))
      continue;
    auto it = blocks.find(op.getOperand(0));
    // Only where every reader of the block is a view: a value read whole
    // by another op as well is gathered once, for all of its readers.
    if (it == blocks.end() ||
        !llvm::all_of(op.getOperand(0).getUsers(), isView))
      continue;
    ShardingRule rule = *getPointwiseRule(&op);
    TensorSharding result = carryAlongFactors(
        it->second, rule.getOperandFactors(0), rule.getResultFactors(0));
    op.setAttr(DpcDialect::kShardingAttrName,
               getShardingArrayAttr(context, {result}));
    op.setAttr(DpcDialect::kOperandShardingsAttrName,
               getShardingArrayAttr(context, {it->second}));
    blocks[op.getResult(0)] = result;
    madeOnBlocks.push_back(&op);
  }
  llvm::DenseSet<Operation *> onBlocks(madeOnBlocks.begin(),
                                       madeOnBlocks.end());
  for (Operation *view : madeOnBlocks) {
    Value block = view->getResult(0);
    if (llvm::all_of(block.getUsers(),
                     [&](Operation *user) { return onBlocks.contains(user); }))
      continue;
    TensorSharding whole = blocks.lookup(block);
    for (unsigned &axes : whole.dims)
      axes &= ~unsigned(kDataAxis);
    whole.dataMinor = false;
    // Before its first reader, as a reshard of a reader's own would be.
    Operation *firstReader = nullptr;
    for (Operation *user : block.getUsers()) {
      Operation *reader = view->getBlock()->findAncestorOpInBlock(*user);
      if (reader && !onBlocks.contains(user) &&
          (!firstReader || reader->isBeforeInBlock(firstReader)))
        firstReader = reader;
    }
    OpBuilder builder(firstReader);
    auto gathered = ReshardOp::create(builder, view->getLoc(), block,
                                      getShardingAttr(context, whole));
    for (StringRef name :
         {DpcDialect::kPhaseAttrName, DpcDialect::kStageAttrName})
      if (Attribute attr = view->getAttr(name))
        gathered->setAttr(name, attr);
    block.replaceUsesWithIf(gathered, [&](OpOperand &use) {
      return use.getOwner() != gathered && !onBlocks.contains(use.getOwner());
    });
  }
}

/// The values in which @train_step hands each parameter's gradient to the
/// optimizer, by parameter name: the micro-batches' gradients (results of
/// the calls to `forwardBackward` marked dpc.grad) after the pointwise ops
/// that accumulate them and scale them by scalars (the micro-batch count,
/// the loss scale), each the only reader of what it takes.
static llvm::DenseMap<Value, StringRef>
getStepGradients(func::FuncOp trainStep, func::FuncOp forwardBackward) {
  llvm::DenseMap<Value, StringRef> gradients;
  trainStep.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (call.getCallee() != forwardBackward.getSymName())
        return;
      for (auto [i, result] : llvm::enumerate(call.getResults()))
        if (auto name = forwardBackward.getResultAttrOfType<StringAttr>(
                i, DpcDialect::kGradAttrName))
          gradients[result] = name.getValue();
      return;
    }
    if (op->getNumResults() != 1 || !getPointwiseRule(op))
      return;
    std::optional<StringRef> name;
    for (Value operand : op->getOperands()) {
      auto it = gradients.find(operand);
      if (it == gradients.end()) {
        if (cast<ShapedType>(operand.getType()).getRank() != 0)
          return;
        continue;
      }
      if (!operand.hasOneUse() || (name && *name != it->second))
        return;
      name = it->second;
    }
    if (!name)
      return;
    for (Value operand : op->getOperands())
      gradients.erase(operand);
    gradients[op->getResult(0)] = *name;
  });
  return gradients;
}

void mlir::dpc::completeShardings(ModuleOp module, const PlanLayout &plan,
                                  const TrainingGraph &graph,
                                  const Cluster &cluster) {
  func::FuncOp forwardBackward = graph.getFunction();
  auto trainStep = module.lookupSymbol<func::FuncOp>("train_step");
  // A step over several micro-batches accumulates their gradients with the
  // sums still pending over the mesh, and reduces them once, where the
  // optimizer needs them (as DDP's no_sync does); ZeRO-2/3 reduce-scatter
  // each micro-batch's, so that no rank holds a whole gradient. With one
  // micro-batch the reduction stays in the backward pass, which hides it.
  int64_t calls = 0;
  if (trainStep)
    trainStep.walk([&](func::CallOp call) {
      calls += call.getCallee() == forwardBackward.getSymName();
    });
  bool accumulatePending = calls > 1 && plan.zeroStage <= 1;
  if (plan.zeroStage >= 3)
    remakeParameterViewsForBackward(graph);
  Completion backward(plan, cluster);
  backward.setKeepPendingSums(accumulatePending);
  backward.setReturnAsWanted(!accumulatePending);
  backward.readPlanned(graph);
  // Gradients leave laid out as their parameters, so that reducing them
  // is the only communication left to the step; under ZeRO as the shard
  // each rank updates, so that they are reduce-scattered in the backward.
  Operation *returned = forwardBackward.getBody().back().getTerminator();
  for (auto [i, value] : llvm::enumerate(returned->getOperands()))
    if (auto param = forwardBackward.getResultAttrOfType<StringAttr>(
            i, DpcDialect::kGradAttrName))
      for (BlockArgument arg : forwardBackward.getArguments())
        if (forwardBackward.getArgAttr(arg.getArgNumber(),
                                       DpcDialect::kParamAttrName) == param)
          backward.want(
              value,
              plan.zeroStage >= 1
                  ? backward.splitOverData(*backward.lookup(arg), arg.getType())
                  : *backward.lookup(arg),
              backward.getStage(arg));
  backward.complete(forwardBackward);
  backward.write(forwardBackward);
  // ZeRO-3 keeps only each rank's block of a parameter between steps and
  // passes: @forward_backward takes the blocks and gathers each parameter
  // where its forward ops read it and again for its backward ops (the
  // reshards insert-reshards makes per pass), so that no whole parameter
  // lives from one pass to the other. ZeRO-1/2 keep only the block of a
  // master the step reads through its compute copy (its bf16 cast), as
  // Megatron-LM's distributed optimizer does: the copy is gathered once
  // and read whole by both passes. (In a step of one micro-batch, or on
  // pipeline stages, which inline their micro-batches and make the copy
  // once for all of them; otherwise each micro-batch would gather the copy
  // again, which for more than two sends more than the master's gather
  // after the update.)
  llvm::StringSet<> blockedParams;
  bool shardCopiedMasters = calls <= 1 || plan.pipelineParallel > 1;
  if (plan.zeroStage >= 1) {
    llvm::DenseMap<Value, TensorSharding> blocks;
    for (BlockArgument arg : forwardBackward.getArguments()) {
      auto name = forwardBackward.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), DpcDialect::kParamAttrName);
      if (!name || (plan.zeroStage < 3 &&
                    !(shardCopiedMasters && graph.getComputeCopy(arg))))
        continue;
      TensorSharding block =
          backward.splitOverData(*backward.lookup(arg), arg.getType());
      forwardBackward.setArgAttr(arg.getArgNumber(),
                                 DpcDialect::kShardingAttrName,
                                 getShardingAttr(module.getContext(), block));
      blockedParams.insert(name.getValue());
      if (block.getSplitDim(kDataAxis) >= 0)
        blocks[arg] = block;
    }
    makeViewsOfBlocks(forwardBackward, std::move(blocks));
  }

  if (!trainStep)
    return;
  // What @train_step's arguments hold, by the names @forward_backward
  // gives them.
  llvm::StringMap<TensorSharding> paramShardings, inputShardings,
      stateShardings;
  llvm::StringMap<int64_t> paramStages;
  for (BlockArgument arg : forwardBackward.getArguments()) {
    unsigned i = arg.getArgNumber();
    TensorSharding sharding = *backward.lookup(arg);
    if (auto name = forwardBackward.getArgAttrOfType<StringAttr>(
            i, DpcDialect::kParamAttrName)) {
      paramShardings[name] = sharding;
      if (std::optional<int64_t> stage = backward.getStage(arg))
        paramStages[name] = *stage;
    } else if (auto name = forwardBackward.getArgAttrOfType<StringAttr>(
                   i, DpcDialect::kInputAttrName)) {
      inputShardings[name] = sharding;
    } else if (auto name = forwardBackward.getArgAttrOfType<StringAttr>(
                   i, DpcDialect::kStateAttrName)) {
      stateShardings[name] = sharding;
    }
  }
  Completion step(plan, cluster);
  step.setKeepPendingSums(accumulatePending);
  auto paramSharding = [&](StringRef name, Value value) {
    auto it = paramShardings.find(name);
    TensorSharding sharding =
        it == paramShardings.end() ? replicatedLike(value) : it->second;
    return blockedParams.contains(name)
               ? step.splitOverData(sharding, value.getType())
               : sharding;
  };
  auto stageOf = [&](StringRef name) -> std::optional<int64_t> {
    auto it = paramStages.find(name);
    return it == paramStages.end() ? std::nullopt : std::optional(it->second);
  };
  // Arguments and results of @train_step pair up by their names.
  auto classify =
      [&](DictionaryAttr attrs,
          Value value) -> std::pair<TensorSharding, std::optional<int64_t>> {
    if (!attrs)
      return {replicatedLike(value), std::nullopt};
    if (auto name = attrs.getAs<StringAttr>(DpcDialect::kParamAttrName))
      return {paramSharding(name, value), stageOf(name)};
    if (auto slot = attrs.getAs<StringAttr>(DpcDialect::kOptStateAttrName)) {
      StringRef param = slot.getValue().rsplit(':').first;
      TensorSharding sharding = paramSharding(param, value);
      if (plan.zeroStage >= 1)
        sharding = step.splitOverData(sharding, value.getType());
      return {sharding, stageOf(param)};
    }
    if (auto name = attrs.getAs<StringAttr>(DpcDialect::kStateAttrName))
      if (auto it = stateShardings.find(name); it != stateShardings.end())
        return {it->second, std::nullopt};
    if (auto name = attrs.getAs<StringAttr>(DpcDialect::kInputAttrName))
      if (auto it = inputShardings.find(name); it != inputShardings.end()) {
        // A step of several micro-batches holds them along a leading
        // dimension, whole on every rank: each rank's micro-batch k is
        // its own row k, laid out as the forward takes one.
        TensorSharding sharding = it->second;
        auto rank = cast<ShapedType>(value.getType()).getRank();
        if (rank == static_cast<int64_t>(sharding.dims.size()) + 1)
          sharding.dims.insert(sharding.dims.begin(), 0);
        return {sharding, std::nullopt};
      }
    return {replicatedLike(value), std::nullopt};
  };
  for (BlockArgument arg : trainStep.getArguments()) {
    auto [sharding, stage] =
        classify(trainStep.getArgAttrDict(arg.getArgNumber()), arg);
    step.set(arg, sharding, stage);
  }
  // The step's gradients arrive reduced over the data axis: whole on each
  // replica, or reduce-scattered under ZeRO, whose ranks each update only
  // their shard (ZeRO-1 too, as Megatron-LM's distributed optimizer does:
  // an all-reduce would send half as much again).
  // Gradients accumulated pending over micro-batches are wanted where the
  // optimizer reads them as their parameters lie (under ZeRO, as each
  // rank's shard): their sums are finished there by reduce-scatters into
  // that layout, not all-reduced whole.
  if (accumulatePending)
    for (auto [value, name] : getStepGradients(trainStep, forwardBackward)) {
      TensorSharding sharding = paramSharding(name, value);
      if (plan.zeroStage >= 1)
        sharding = step.splitOverData(sharding, value.getType());
      step.want(value, sharding, stageOf(name));
    }
  trainStep.walk([&](func::CallOp call) {
    if (call.getCallee() != forwardBackward.getSymName())
      return;
    for (auto [i, result] : llvm::enumerate(call.getResults())) {
      TensorSharding returned = *backward.lookupReturned(
          forwardBackward.getBody().back().getTerminator()->getOperand(i));
      TensorSharding sharding = returned;
      sharding.clearPartial(kDataAxis);
      sharding.clearPartial(kTensorAxis);
      std::optional<int64_t> stage;
      if (auto param = forwardBackward.getResultAttrOfType<StringAttr>(
              i, DpcDialect::kGradAttrName)) {
        stage = stageOf(param);
        if (accumulatePending)
          sharding = returned;
        else if (plan.zeroStage >= 1)
          sharding = step.splitOverData(sharding, result.getType());
      }
      step.set(result, sharding, stage);
    }
  });
  step.complete(trainStep);
  step.write(trainStep);
  // What a result promises is what the next step's argument expects.
  Builder builder(module.getContext());
  for (unsigned i = 0; i < trainStep.getNumResults(); ++i) {
    Value value = trainStep.getBody().back().getTerminator()->getOperand(i);
    if (DictionaryAttr attrs = trainStep.getResultAttrDict(i);
        attrs && (attrs.get(DpcDialect::kParamAttrName) ||
                  attrs.get(DpcDialect::kOptStateAttrName) ||
                  attrs.get(DpcDialect::kStateAttrName)))
      trainStep.setResultAttr(
          i, DpcDialect::kShardingAttrName,
          getShardingAttr(module.getContext(), classify(attrs, value).first));
  }
}
