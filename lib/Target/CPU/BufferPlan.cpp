//===- BufferPlan.cpp - Arena offsets from the values' lifetimes ----------===//
//
// Lifetimes are intervals of op positions; buffers are placed in the
// order they are defined, each at the lowest offset where it overlaps no
// buffer alive at the same time (first fit). Intervals are closed, so an
// op's results never share storage with its operands: kernels may assume
// their outputs do not alias their inputs.
//
//===----------------------------------------------------------------------===//

#include "dpc/Target/CPU/BufferPlan.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include <algorithm>
#include <map>

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

namespace {
struct Interval {
  Value value;
  int64_t start, end, bytes, offset = 0;
};
} // namespace

BufferPlan mlir::dpc::planBuffers(func::FuncOp func,
                                  llvm::function_ref<bool(Operation *)> isFused,
                                  llvm::function_ref<bool(Value)> isExternal) {
  BufferPlan plan;
  Block &block = func.getBody().front();
  ProgramOrder order(func, isFused);

  for (Operation &op : block)
    if (isView(&op))
      plan.aliases[op.getResult(0)] = op.getOperand(0);

  DenseMap<Value, Interval> intervals;
  for (Operation &op : block) {
    if (isFused(&op) || isView(&op) || isa<ConstantOp>(op))
      continue;
    int64_t at = order.getPosition(&op);
    for (Value result : op.getResults())
      if (isa<RankedTensorType>(result.getType()) && !isExternal(result))
        intervals[result] = {result, at, at, getStorageBytes(result)};
  }
  auto extend = [&](Value value, int64_t until) {
    auto it = intervals.find(plan.getStorage(value));
    if (it != intervals.end())
      it->second.end = std::max(it->second.end, until);
  };
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      extend(operand, order.getReadPosition(&op));

  std::vector<Interval> ordered;
  for (auto &entry : intervals)
    ordered.push_back(entry.second);
  llvm::sort(ordered, [](const Interval &a, const Interval &b) {
    return a.start != b.start
               ? a.start < b.start
               : a.value.getAsOpaquePointer() < b.value.getAsOpaquePointer();
  });
  std::vector<const Interval *> placed;
  for (Interval &interval : ordered) {
    int64_t bytes = (interval.bytes + kAlignment - 1) / kAlignment * kAlignment;
    plan.unsharedBytes += bytes;
    // The buffers alive at the same time, by offset: take the first gap.
    std::vector<const Interval *> live;
    for (const Interval *other : placed)
      if (other->start <= interval.end && interval.start <= other->end)
        live.push_back(other);
    llvm::sort(live, [](const Interval *a, const Interval *b) {
      return a->offset < b->offset;
    });
    int64_t offset = 0;
    for (const Interval *other : live) {
      int64_t otherBytes =
          (other->bytes + kAlignment - 1) / kAlignment * kAlignment;
      if (offset + bytes <= other->offset)
        break;
      offset = std::max(offset, other->offset + otherBytes);
    }
    interval.offset = offset;
    plan.offsets[interval.value] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + bytes);
    placed.push_back(&interval);
  }
  // Bytes alive at each op: starts add, ends (after the op) subtract.
  std::map<int64_t, int64_t> change;
  for (const Interval &interval : ordered) {
    int64_t bytes = (interval.bytes + kAlignment - 1) / kAlignment * kAlignment;
    change[interval.start] += bytes;
    change[interval.end + 1] -= bytes;
  }
  int64_t alive = 0;
  for (auto [at, delta] : change) {
    alive += delta;
    plan.liveBytes = std::max(plan.liveBytes, alive);
  }
  return plan;
}
