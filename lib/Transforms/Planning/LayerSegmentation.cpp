//===- LayerSegmentation.cpp - Cut points and structural repeats ----------===//

#include "dpc/Transforms/Planning/LayerSegmentation.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <map>

using namespace mlir;
using namespace mlir::dpc;

namespace {
/// What a value depends on.
enum class Origin { Constant, Parameter, Activation };

/// The largest period that repeats at `start`: the (period, repeats) with
/// the most segments covered, repeats >= 2; fewer segments per unit wins
/// ties.
std::pair<unsigned, unsigned> findRepeat(ArrayRef<unsigned> classes,
                                         unsigned start) {
  constexpr unsigned kMaxPeriod = 8;
  unsigned bestPeriod = 1, bestRepeats = 1;
  for (unsigned period = 1; period <= kMaxPeriod; ++period) {
    unsigned end = start + period;
    if (end > classes.size())
      break;
    while (end < classes.size() && classes[end] == classes[end - period])
      ++end;
    unsigned repeats = (end - start) / period;
    if (repeats >= 2 && period * repeats > bestPeriod * bestRepeats) {
      bestPeriod = period;
      bestRepeats = repeats;
    }
  }
  return {bestPeriod, bestRepeats};
}
} // namespace

LayerSegmentation::LayerSegmentation(const TrainingGraph &graph) {
  ArrayRef<Operation *> ops = graph.getForwardOps();
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = i;

  // Classify values by what they depend on.
  llvm::DenseMap<Value, Origin> origin;
  auto originOf = [&](Value value) {
    if (auto it = origin.find(value); it != origin.end())
      return it->second;
    if (graph.isParameter(value))
      return Origin::Parameter;
    if (isa<BlockArgument>(value))
      return Origin::Activation;
    return Origin::Constant;
  };
  for (Operation *op : ops) {
    Origin o = Origin::Constant;
    for (Value operand : op->getOperands())
      o = std::max(o, originOf(operand));
    for (Value result : op->getResults())
      origin[result] = o;
  }

  // Cut after op i when exactly one activation is live across it.
  llvm::DenseMap<Value, unsigned> lastUse;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (originOf(operand) == Origin::Activation)
        lastUse[operand] = position[op];
  SmallVector<unsigned> cutAfter;
  SmallVector<Value> cutValue;
  llvm::SetVector<Value> live;
  for (auto [i, op] : llvm::enumerate(ops)) {
    // A model input is live from its first use (labels only at the loss).
    for (Value operand : op->getOperands())
      if (isa<BlockArgument>(operand) && lastUse.lookup_or(operand, 0) > i)
        live.insert(operand);
    for (Value operand : op->getOperands())
      if (auto it = lastUse.find(operand);
          it != lastUse.end() && it->second == i)
        live.remove(operand);
    for (Value result : op->getResults())
      if (auto it = lastUse.find(result); it != lastUse.end() && it->second > i)
        live.insert(result);
    if (live.size() == 1 && (cutValue.empty() || cutValue.back() != live[0])) {
      cutAfter.push_back(i);
      cutValue.push_back(live[0]);
    }
  }

  // Activation ops fill the segments between cuts; parameter-derived ops
  // join the segment of their first user; constant-derived ops are global.
  auto segmentAt = [&](unsigned i) {
    return llvm::lower_bound(cutAfter, i) - cutAfter.begin();
  };
  segments.resize(cutAfter.size() + 1);
  for (auto [i, value] : llvm::enumerate(cutValue))
    segments[i].output = value;
  for (Operation *op : ops) {
    if (matchPattern(op, m_Constant()))
      continue;
    Origin o = op->getNumResults() ? origin[op->getResult(0)] : Origin::Constant;
    if (o == Origin::Activation) {
      segmentOf[op] = segmentAt(position[op]);
    } else if (o == Origin::Constant) {
      globalOps.push_back(op);
    }
  }
  // Parameter-derived ops, last first, so that chains follow their users.
  for (Operation *op : llvm::reverse(ops)) {
    if (segmentOf.contains(op) || matchPattern(op, m_Constant()) ||
        llvm::is_contained(globalOps, op))
      continue;
    int64_t first = -1;
    for (Operation *user : op->getUsers())
      if (auto it = segmentOf.find(user); it != segmentOf.end())
        first = first < 0 ? it->second : std::min(first, it->second);
    if (first < 0) {
      globalOps.push_back(op);
      continue;
    }
    segmentOf[op] = first;
  }
  for (Operation *op : ops)
    if (auto it = segmentOf.find(op); it != segmentOf.end())
      segments[it->second].ops.push_back(op);
  // Drop empty segments (two cuts in a row around a constant op).
  SmallVector<Segment> kept;
  for (Segment &segment : segments)
    if (!segment.ops.empty())
      kept.push_back(std::move(segment));
  segments = std::move(kept);
  for (auto [i, segment] : llvm::enumerate(segments))
    for (Operation *op : segment.ops)
      segmentOf[op] = i;

  // A segment's structure: each op's name, properties, attributes and
  // result types, and where each operand comes from, relative to the
  // segment. Attributes and types are uniqued, so pointers compare them.
  auto structureOf = [&](const Segment &segment) {
    std::vector<const void *> key;
    llvm::DenseMap<Operation *, unsigned> local;
    llvm::DenseMap<Value, unsigned> params;
    for (auto [i, op] : llvm::enumerate(segment.ops)) {
      local[op] = i;
      key.push_back(op->getName().getAsOpaquePointer());
      key.push_back(op->getPropertiesAsAttribute().getAsOpaquePointer());
      // Where the last plan put the op is no part of what it is; a
      // sharding fixed on it is.
      NamedAttrList attrs(op->getDiscardableAttrDictionary());
      attrs.erase(DpcDialect::kStageAttrName);
      attrs.erase(DpcDialect::kOperandShardingsAttrName);
      attrs.erase(DpcDialect::kPhaseAttrName);
      key.push_back(attrs.getDictionary(op->getContext()).getAsOpaquePointer());
      for (Type type : op->getResultTypes())
        key.push_back(type.getAsOpaquePointer());
      key.push_back(nullptr);
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        Attribute constant;
        if (def && local.contains(def)) {
          key.push_back(reinterpret_cast<const void *>(uintptr_t(1)));
          key.push_back(reinterpret_cast<const void *>(
              uintptr_t(local[def] * 64 +
                        cast<OpResult>(operand).getResultNumber())));
        } else if (def && matchPattern(operand, m_Constant(&constant))) {
          key.push_back(reinterpret_cast<const void *>(uintptr_t(2)));
          key.push_back(constant.getAsOpaquePointer());
        } else if (graph.isParameter(operand)) {
          auto [it, inserted] = params.try_emplace(operand, params.size());
          key.push_back(reinterpret_cast<const void *>(uintptr_t(3)));
          key.push_back(reinterpret_cast<const void *>(uintptr_t(it->second)));
          key.push_back(operand.getType().getAsOpaquePointer());
          key.push_back(
              graph.getFunction()
                  .getArgAttr(cast<BlockArgument>(operand).getArgNumber(),
                              DpcDialect::kShardingAttrName)
                  .getAsOpaquePointer());
        } else {
          // The segment's input, an input of the model or a global value:
          // the same value in every repeat.
          key.push_back(reinterpret_cast<const void *>(uintptr_t(4)));
          key.push_back(operand.getType().getAsOpaquePointer());
          if (def && llvm::is_contained(globalOps, def))
            key.push_back(def);
        }
      }
    }
    return key;
  };
  std::map<std::vector<const void *>, unsigned> classOf;
  SmallVector<unsigned> classes;
  for (Segment &segment : segments) {
    auto [it, inserted] =
        classOf.try_emplace(structureOf(segment), classOf.size());
    segment.structureClass = it->second;
    classes.push_back(it->second);
  }

  // Regions of repeats, left to right, and the representative of each op.
  for (unsigned start = 0; start < segments.size();) {
    auto [period, repeats] = findRepeat(classes, start);
    regions.push_back({start, period, repeats});
    for (unsigned unit = 1; unit < repeats; ++unit)
      for (unsigned k = 0; k < period; ++k) {
        const Segment &rep = segments[start + k];
        const Segment &copy = segments[start + unit * period + k];
        for (auto [repOp, op] : llvm::zip_equal(rep.ops, copy.ops)) {
          representativeOp[op] = repOp;
          for (auto [repOperand, operand] :
               llvm::zip_equal(repOp->getOperands(), op->getOperands()))
            if (graph.isParameter(operand) && operand != repOperand)
              representativeParam[operand] = repOperand;
        }
      }
    start += period * repeats;
  }
}

SmallVector<bool> LayerSegmentation::getCheckpointedSegments() const {
  SmallVector<bool> checkpointed(segments.size(), true);
  for (const Region &region : regions)
    for (unsigned i = region.first; i < region.getEnd(); ++i)
      checkpointed[i] = (i - region.first + 1) % region.period == 0;
  return checkpointed;
}
