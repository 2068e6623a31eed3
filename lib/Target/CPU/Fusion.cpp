//===- Fusion.cpp - What the CPU backend computes inside other ops --------===//

#include "dpc/Target/CPU/Fusion.h"
#include "ElementwiseFormulas.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Target/CPU/BufferPlan.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::dpc;

bool mlir::dpc::isMatrixTranspose(Operation *op) {
  auto transpose = dyn_cast<TransposeOp>(op);
  if (!transpose)
    return false;
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  int64_t rank = permutation.size();
  if (rank < 2)
    return false;
  for (int64_t d = 0; d < rank - 2; ++d)
    if (permutation[d] != d)
      return false;
  return permutation[rank - 2] == rank - 1 && permutation[rank - 1] == rank - 2;
}

bool mlir::dpc::isElementReduction(Operation *op) {
  return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op);
}

static ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Whether every value the elementwise chain ending in `op` reads from
/// memory has the chain's shape or one element.
static bool readsAtItsOwnIndex(Operation *op,
                               const llvm::DenseSet<Operation *> &fused) {
  ArrayRef<int64_t> shape = getShape(op->getResult(0));
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    Operation *def = operand.getDefiningOp();
    if (def && fused.contains(def))
      return readsAtItsOwnIndex(def, fused);
    auto type = cast<RankedTensorType>(operand.getType());
    return type.getShape() == shape || type.getNumElements() == 1;
  });
}

namespace {

/// Where fused ops are computed, and what computing one there costs in
/// memory. Computed inside its user, an op reads the values it is made from
/// where the user runs: they stay alive until then, in place of its own
/// result.
class FusedReads {
public:
  FusedReads(func::FuncOp func, llvm::DenseSet<Operation *> &fused)
      : fused(fused),
        order(func, [&fused](Operation *op) { return fused.contains(op); }) {}

  /// Where `user` reads its operands (the buffer plan's view: a fused
  /// user reads them where its own users run).
  int64_t getReadPosition(Operation *user) const {
    return order.getReadPosition(user);
  }

  /// Bytes that computing `op` inside its users keeps alive beyond what
  /// storing it would: the values the fused chain into `op` reads, made in
  /// the arena and read nowhere at or after `readAt`, less `op`'s result.
  double getExtraBytes(Operation *op, int64_t readAt) const {
    // The chain computed at `op`'s place: it and the fused ops it reads.
    llvm::SmallPtrSet<Operation *, 8> chain;
    SmallVector<Operation *> work = {op};
    while (!work.empty()) {
      Operation *next = work.pop_back_val();
      if (!chain.insert(next).second)
        continue;
      for (Value operand : next->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && fused.contains(def))
          work.push_back(def);
    }
    llvm::SmallPtrSet<Value, 8> leaves;
    for (Operation *member : chain)
      for (Value operand : member->getOperands()) {
        Operation *def = operand.getDefiningOp();
        // Arguments are held anyway; constants live outside the arena.
        if (def && !chain.contains(def) && !isa<ConstantOp>(def))
          leaves.insert(operand);
      }
    double bytes = -getSizeInBytes(op->getResult(0).getType());
    for (Value leaf : leaves)
      if (llvm::none_of(leaf.getUsers(), [&](Operation *user) {
            return !chain.contains(user) && getReadPosition(user) >= readAt;
          }))
        bytes += getSizeInBytes(leaf.getType());
    return bytes;
  }

  /// Whether an op strictly between positions `from` and `to` makes a
  /// buffer of its own (so something is allocated while the reads wait).
  bool makesBufferBetween(Operation *from, int64_t to) const {
    for (Operation *op = from->getNextNode(); op && order.getPosition(op) < to;
         op = op->getNextNode())
      if (!fused.contains(op) && !isView(op) && !isa<ConstantOp>(op) &&
          llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
        return true;
    return false;
  }

private:
  llvm::DenseSet<Operation *> &fused;
  ProgramOrder order;
};

} // namespace

/// Stores the fused elementwise ops whose fusion would keep more alive
/// while other buffers are made: a micro-batch's gradient added into the
/// running sum is read by the next micro-batch's add, after a whole
/// forward and backward pass; computed there, every micro-batch's terms
/// would be held until the last. (Adjacent chains stay fused: nothing is
/// allocated while they wait.) From the last op back, so that each op's
/// readers are settled when it is decided.
static void storeWhereFusionHoldsMore(func::FuncOp func,
                                      llvm::DenseSet<Operation *> &fused) {
  FusedReads reads(func, fused);
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (fused.contains(&op) && op.hasOneUse() && !isMatrixTranspose(&op))
      ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    int64_t readAt = reads.getReadPosition(*op->getUsers().begin());
    if (reads.getExtraBytes(op, readAt) > 0 &&
        reads.makesBufferBetween(op, readAt))
      fused.erase(op);
  }
}

/// Recomputes in each reader's loop the elementwise ops read by several
/// loops of their shape (a GeLU derivative's `x / sqrt 2` and `1 + erf`),
/// where what they are made from is alive at their last reader anyway:
/// storing them holds a buffer that recomputing does not. From the last op
/// back, so that each op's readers are settled when it is decided.
static void recomputeWhereStoringHoldsMore(func::FuncOp func,
                                           llvm::DenseSet<Operation *> &fused) {
  FusedReads reads(func, fused);
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front()) {
    if (fused.contains(&op) || op.hasOneUse() || op.use_empty() ||
        op.getNumResults() != 1 || !hasScalarFormula(&op))
      continue;
    ArrayRef<int64_t> shape = getShape(op.getResult(0));
    if (llvm::all_of(op.getUsers(), [&](Operation *user) {
          return user->getBlock() == op.getBlock() && hasScalarFormula(user) &&
                 !isElementReduction(user) && user->getNumResults() == 1 &&
                 getShape(user->getResult(0)) == shape;
        }))
      ops.push_back(&op);
  }
  // Whether `user` is computed as a reduction reads its elements, at flat
  // indices (where no operand may be broadcast).
  std::function<bool(Operation *)> feedsReduction = [&](Operation *user) {
    return isElementReduction(user) ||
           (fused.contains(user) &&
            llvm::any_of(user->getUsers(), feedsReduction));
  };
  for (Operation *op : llvm::reverse(ops)) {
    if (llvm::any_of(op->getUsers(), feedsReduction) &&
        !readsAtItsOwnIndex(op, fused))
      continue;
    int64_t readAt = 0;
    for (Operation *user : op->getUsers())
      readAt = std::max(readAt, reads.getReadPosition(user));
    if (reads.getExtraBytes(op, readAt) < 0)
      fused.insert(op);
  }
}

llvm::DenseSet<Operation *> mlir::dpc::getFusedOps(func::FuncOp func) {
  llvm::DenseSet<Operation *> fused;
  for (Operation &op : func.getBody().front()) {
    // A transpose that only GEMMs read is their operand's layout.
    if (isMatrixTranspose(&op) && !op.use_empty() &&
        llvm::all_of(op.getUsers(),
                     [](Operation *user) { return isa<MatmulOp>(user); })) {
      fused.insert(&op);
      continue;
    }
    if (!hasScalarFormula(&op) || !op.hasOneUse() || op.getNumResults() != 1)
      continue;
    Operation *user = *op.getUsers().begin();
    if (user->getBlock() != op.getBlock())
      continue;
    // A reduction reads it element by element at flat indices, in its own
    // walk: no operand of the chain may be broadcast, which would need the
    // index of each dimension at every element.
    if (isElementReduction(user)) {
      if (readsAtItsOwnIndex(&op, fused))
        fused.insert(&op);
      continue;
    }
    // Computed at each element of the user's loop, it must have the user's
    // shape (its own operands then broadcast to that shape as they did).
    if (!hasScalarFormula(user) ||
        getShape(op.getResult(0)) != getShape(user->getResult(0)))
      continue;
    fused.insert(&op);
  }
  storeWhereFusionHoldsMore(func, fused);
  recomputeWhereStoringHoldsMore(func, fused);
  return fused;
}
