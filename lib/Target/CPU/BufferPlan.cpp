//===- BufferPlan.cpp - Arena offsets from the values' lifetimes ----------===//
//
// Lifetimes are intervals of op positions; buffers are placed one by one,
// each at the lowest offset where it overlaps no buffer alive at the same
// time (first fit), in the order they are defined or from the largest
// down, whichever makes the smaller arena. Intervals are closed, so an
// op's results never share storage with its operands: kernels may assume
// their outputs do not alias their inputs.
//
//===----------------------------------------------------------------------===//

#include "dpc/Target/CPU/BufferPlan.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::dpc;

/// Buffers start on cache lines: vector loads never straddle two.
static constexpr int64_t kAlignment = 64;

int64_t mlir::dpc::getStorageBytes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Type element = type.getElementType();
  // f16 and bf16 are held rounded in floats, integers (i1 too) in int64_t.
  int64_t bytes = element.isF64() || isa<IntegerType>(element) ? 8 : 4;
  return type.getNumElements() * bytes;
}

Value BufferPlan::getStorage(Value value) const {
  while (true) {
    auto alias = aliases.find(value);
    if (alias == aliases.end())
      return value;
    value = alias->second;
  }
}

bool mlir::dpc::isContiguousSlice(Operation *op) {
  auto slice = dyn_cast<SliceOp>(op);
  if (!slice)
    return false;
  ArrayRef<int64_t> in =
      cast<RankedTensorType>(slice.getInput().getType()).getShape();
  ArrayRef<int64_t> out =
      cast<RankedTensorType>(slice.getResult().getType()).getShape();
  if (in.empty() || llvm::any_of(slice.getStride(),
                                 [](int64_t stride) { return stride != 1; }))
    return false;
  return in.drop_front() == out.drop_front();
}

bool mlir::dpc::isView(Operation *op) {
  return isa<ReshapeOp, WaitOp>(op) || isContiguousSlice(op);
}

ProgramOrder::ProgramOrder(func::FuncOp func,
                           std::function<bool(Operation *)> isFused)
    : isFused(std::move(isFused)) {
  for (Operation &op : func.getBody().front())
    positions[&op] = positions.size();
}

int64_t ProgramOrder::getReadPosition(Operation *user) const {
  int64_t at = getPosition(user);
  if (isFused(user))
    for (Operation *next : user->getResult(0).getUsers())
      at = std::max(at, getReadPosition(next));
  if (user->hasAttr("async"))
    for (Operation *wait : user->getResult(0).getUsers())
      at = std::max(at, getPosition(wait));
  return at;
}

/// Whether `allReduce` may reduce its operand where it lies: the operand
/// has storage of its own in the arena, and nothing else reads that storage
/// once the collective starts (the host and NCCL reduce in place).
static bool canReduceInPlace(AllReduceOp allReduce, const BufferPlan &plan,
                             const ProgramOrder &order,
                             llvm::function_ref<bool(Operation *)> isFused,
                             llvm::function_ref<bool(Value)> isExternal) {
  Value storage = plan.getStorage(allReduce.getInput());
  Operation *def = storage.getDefiningOp();
  if (!def || isFused(def) || isa<ConstantOp>(def) || isExternal(storage))
    return false;
  int64_t starts = order.getPosition(allReduce);
  for (Operation &op : *allReduce->getBlock()) {
    if (&op == allReduce.getOperation())
      continue;
    for (Value operand : op.getOperands())
      if (plan.getStorage(operand) == storage &&
          order.getReadPosition(&op) >= starts)
        return false;
  }
  return true;
}

/// Whether `value` is made by an op into storage of its own in the arena.
static bool hasOwnStorage(Value value, const BufferPlan &plan,
                          llvm::function_ref<bool(Operation *)> isFused,
                          llvm::function_ref<bool(Value)> isExternal) {
  Operation *def = value.getDefiningOp();
  return def && !isFused(def) && !isa<ConstantOp>(def) && !isView(def) &&
         !isExternal(value) && !plan.aliases.count(value) &&
         !plan.placements.count(value);
}

/// Places the operands that only `concat` reads inside its storage, when
/// each operand is one contiguous run of it (every dimension before the
/// axis is 1).
static void placeConcatOperands(ConcatOp concat, int64_t alignment,
                                BufferPlan &plan,
                                llvm::function_ref<bool(Operation *)> isFused,
                                llvm::function_ref<bool(Value)> isExternal) {
  Value result = concat.getResult();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(result.getType()).getShape();
  if (!hasOwnStorage(result, plan, isFused, isExternal) ||
      llvm::any_of(shape.take_front(concat.getAxis()),
                   [](int64_t size) { return size != 1; }))
    return;
  auto holdsOthers = [&](Value value) {
    return llvm::any_of(plan.placements, [&](const auto &placement) {
      return placement.second.first == value;
    });
  };
  int64_t offset = 0;
  for (Value input : concat.getInputs()) {
    // Through reshapes (a gradient flattened for its bucket) that nothing
    // else reads.
    Value made = input;
    while (made.hasOneUse() && made.getDefiningOp<ReshapeOp>() &&
           made.getDefiningOp()->getOperand(0).hasOneUse())
      made = made.getDefiningOp()->getOperand(0);
    if (offset % alignment == 0 && made.hasOneUse() &&
        hasOwnStorage(made, plan, isFused, isExternal) && !holdsOthers(made))
      plan.placements[made] = {result, offset};
    offset += getStorageBytes(input);
  }
}

namespace {
struct Interval {
  Value value;
  int64_t start, end, bytes, offset = 0;
};
} // namespace

/// Each value's lifetime, given where values are stored.
static DenseMap<Value, Interval>
getIntervals(Block &block, const BufferPlan &plan, const ProgramOrder &order,
             llvm::function_ref<bool(Operation *)> isFused,
             llvm::function_ref<bool(Value)> isExternal) {
  DenseMap<Value, Interval> intervals;
  for (Operation &op : block) {
    if (isFused(&op) || isa<ConstantOp>(op) ||
        (op.getNumResults() == 1 && plan.aliases.count(op.getResult(0))))
      continue;
    int64_t at = order.getPosition(&op);
    for (Value result : op.getResults())
      if (isa<RankedTensorType>(result.getType()) && !isExternal(result) &&
          !plan.placements.count(result))
        intervals[result] = {result, at, at, getStorageBytes(result)};
  }
  // A concatenation's storage is live from the first operand made in it.
  for (auto &[value, placement] : plan.placements) {
    Interval &holder = intervals[placement.first];
    holder.start =
        std::min(holder.start, order.getPosition(value.getDefiningOp()));
  }
  auto extend = [&](Value value, int64_t until) {
    auto it = intervals.find(plan.getStorage(value));
    if (it != intervals.end())
      it->second.end = std::max(it->second.end, until);
  };
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      extend(operand, order.getReadPosition(&op));
  return intervals;
}

static int64_t getAlignedBytes(const Interval &interval) {
  return (interval.bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/// The most bytes alive at one op: starts add, ends (after the op)
/// subtract.
static int64_t getPeakLiveBytes(const DenseMap<Value, Interval> &intervals) {
  std::map<int64_t, int64_t> change;
  for (const auto &entry : intervals) {
    change[entry.second.start] += getAlignedBytes(entry.second);
    change[entry.second.end + 1] -= getAlignedBytes(entry.second);
  }
  int64_t alive = 0, peak = 0;
  for (auto [at, delta] : change) {
    alive += delta;
    peak = std::max(peak, alive);
  }
  return peak;
}

/// Places each interval, in order, at the lowest offset where it overlaps
/// no buffer placed before it that is alive at the same time; returns the
/// arena's size.
static int64_t placeFirstFit(std::vector<Interval> &ordered) {
  int64_t arenaBytes = 0;
  for (auto [index, interval] : llvm::enumerate(ordered)) {
    int64_t bytes = getAlignedBytes(interval);
    // The buffers alive at the same time, by offset: take the first gap.
    std::vector<const Interval *> live;
    for (const Interval &other : ArrayRef(ordered).take_front(index))
      if (other.start <= interval.end && interval.start <= other.end)
        live.push_back(&other);
    llvm::sort(live, [](const Interval *a, const Interval *b) {
      return a->offset < b->offset;
    });
    int64_t offset = 0;
    for (const Interval *other : live) {
      if (offset + bytes <= other->offset)
        break;
      offset = std::max(offset, other->offset + getAlignedBytes(*other));
    }
    interval.offset = offset;
    arenaBytes = std::max(arenaBytes, offset + bytes);
  }
  return arenaBytes;
}

BufferPlan mlir::dpc::planBuffers(func::FuncOp func,
                                  llvm::function_ref<bool(Operation *)> isFused,
                                  llvm::function_ref<bool(Value)> isExternal,
                                  int64_t placementAlignment) {
  BufferPlan plan;
  Block &block = func.getBody().front();
  ProgramOrder order(func, isFused);

  for (Operation &op : block)
    if (isView(&op))
      plan.aliases[op.getResult(0)] = op.getOperand(0);
  for (Operation &op : block)
    if (auto allReduce = dyn_cast<AllReduceOp>(op);
        allReduce && !isExternal(allReduce.getResult()) &&
        canReduceInPlace(allReduce, plan, order, isFused, isExternal))
      plan.aliases[allReduce.getResult()] = allReduce.getInput();
  // Making a concatenation's operands in its storage keeps all of it alive
  // from the first one made (a gradient bucket from its first gradient):
  // done only where that does not raise the peak.
  DenseMap<Value, Interval> intervals =
      getIntervals(block, plan, order, isFused, isExternal);
  int64_t peak = getPeakLiveBytes(intervals);
  for (Operation &op : block) {
    auto concat = dyn_cast<ConcatOp>(op);
    if (!concat)
      continue;
    BufferPlan placed = plan;
    placeConcatOperands(concat, placementAlignment, placed, isFused,
                        isExternal);
    if (placed.placements.size() == plan.placements.size())
      continue;
    DenseMap<Value, Interval> placedIntervals =
        getIntervals(block, placed, order, isFused, isExternal);
    int64_t placedPeak = getPeakLiveBytes(placedIntervals);
    if (placedPeak <= peak) {
      plan = std::move(placed);
      intervals = std::move(placedIntervals);
      peak = placedPeak;
    }
  }

  // Two orders of placement, and the smaller arena: by definition (each
  // buffer next to those made before it) and by size (the largest first,
  // as TensorFlow Lite's greedy-by-size arena planner does).
  std::vector<Interval> byStart, bySize;
  for (auto &entry : intervals)
    byStart.push_back(entry.second);
  // Ties broken by where the value is made, not by its address: the same
  // program gets the same layout on every compile.
  auto key = [&](const Interval &interval) {
    auto result = cast<OpResult>(interval.value);
    return std::make_tuple(interval.start, order.getPosition(result.getOwner()),
                           result.getResultNumber());
  };
  llvm::sort(byStart, [&](const Interval &a, const Interval &b) {
    return key(a) < key(b);
  });
  bySize = byStart;
  llvm::stable_sort(bySize, [](const Interval &a, const Interval &b) {
    return getAlignedBytes(a) > getAlignedBytes(b);
  });
  int64_t inOrder = placeFirstFit(byStart);
  int64_t largestFirst = placeFirstFit(bySize);
  plan.arenaBytes = std::min(inOrder, largestFirst);
  for (const Interval &interval : largestFirst < inOrder ? bySize : byStart) {
    plan.offsets[interval.value] = interval.offset;
    plan.unsharedBytes += getAlignedBytes(interval);
  }
  plan.liveBytes = peak;
  return plan;
}
