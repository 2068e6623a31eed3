//===- TrainingGraph.h - The forward pass the planner splits ----*- C++ -*-===//
//
// The planner decides how to split the forward pass of `@forward_backward`
// (the backward pass mirrors it): its ops in order, its parameters and
// inputs, and which forward values the backward pass reads, so that stored
// activations come from the IR's own liveness.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_TRAININGGRAPH_H
#define DPC_TRANSFORMS_PLANNING_TRAININGGRAPH_H

#include "dpc/Analysis/CostModel/FusedTraffic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <memory>
#include <string>

namespace mlir::dpc {

class TrainingGraph {
public:
  /// Reads `@forward_backward` of `module`; fails with `error` when there
  /// is none (the step was not built) or it has no batch input.
  /// `fusedAttention`: the backend has a fused attention kernel, which
  /// stores no scores (Cluster::fusedAttention).
  static FailureOr<TrainingGraph> get(ModuleOp module, std::string &error,
                                      bool fusedAttention = false);

  func::FuncOp getFunction() const { return func; }
  /// Forward ops in program order.
  ArrayRef<Operation *> getForwardOps() const { return forwardOps; }
  /// Ops of the backward pass.
  ArrayRef<Operation *> getBackwardOps() const { return backwardOps; }
  bool isForward(Operation *op) const { return forwardSet.contains(op); }
  bool isStoredForBackward(Value value) const { return stored.contains(value); }
  bool isParameter(Value value) const;
  /// Whether `op` is a forward op on parameters alone (a weight's
  /// transpose, its cast, or such an op on one), pure.
  bool isParameterView(Operation *op) const {
    return parameterViews.contains(op);
  }
  /// The parameters `value` is: itself, or those the view that makes it is
  /// made from (none for any other value).
  SmallVector<Value, 2> getParameterSources(Value value) const;
  /// The forward op that makes parameter `param`'s copy in the compute
  /// precision (its one forward reader, which only narrows its element
  /// type: a cast to bf16 under mixed precision), or null: `param` is then
  /// read as it is kept.
  Operation *getComputeCopy(Value param) const;
  /// Whether the backward pass reads `value` (a parameter), itself or
  /// through a parameter view: ZeRO-3 gathers such a parameter again for
  /// the backward pass.
  bool isReadByBackward(Value value) const {
    return readByBackward.contains(value);
  }
  /// Whether `value` is a parameter, or a parameter view, that the program
  /// makes again for the backward pass from a parameter it reads there: a
  /// layout change of it is made once per pass.
  bool isRemadeForBackward(Value value) const;
  /// Whether the backward pass runs forward op `op` again (a fused
  /// attention's scores).
  bool isRerunInBackward(Operation *op) const {
    return fusedTraffic->isRerunInBackward(op);
  }
  /// Whether forward value `value` is part of an attention's core (scores
  /// to probabilities): selective recomputation stores none of it, and
  /// runs again the forward ops that make it.
  bool isAttentionCore(Value value) const {
    return fusedTraffic->isAttentionCore(value);
  }
  /// Whether the backward pass reads some attention's core as stored.
  bool storesAttentionCore() const {
    return llvm::any_of(stored,
                        [&](Value value) { return isAttentionCore(value); });
  }
  /// Bytes `op` moves once the backend fuses it with its neighbours.
  double getFusedBytes(Operation *op) const {
    return fusedTraffic->getBytes(op);
  }
  bool isInput(Value value) const;
  /// Whether the backward pass makes a gradient of forward value `value`:
  /// a float tensor made of a parameter.
  bool hasGradient(Value value) const { return differentiable.contains(value); }
  /// The batch @forward_backward runs on: dimension 0 of its inputs.
  int64_t getBatchSize() const { return batchSize; }
  /// Micro-batches @train_step accumulates (its dpc.micro_batches; 1 when
  /// the step leaves the count to the planner).
  int64_t getStepMicroBatches() const { return stepMicroBatches; }
  /// The global batch of a step.
  int64_t getStepBatchSize() const { return batchSize * stepMicroBatches; }
  /// Dimension of `value` that is the batch, or -1 (propagated from the
  /// inputs through the ops' sharding rules).
  int64_t getBatchDim(Value value) const {
    return batchDims.lookup_or(value, -1);
  }
  /// The factor of `op`'s sharding rule that runs over the batch, or -1.
  int64_t getBatchFactor(Operation *op) const {
    return batchFactors.lookup_or(op, -1);
  }
  /// Whether `op` works on the batch (else it runs once per step, on
  /// parameters or constants: a weight cast, a mask).
  bool touchesBatch(Operation *op) const {
    if (getBatchFactor(op) >= 0)
      return true;
    return llvm::any_of(
        llvm::concat<Value>(op->getOperands(), op->getResults()),
        [&](Value value) { return getBatchDim(value) >= 0; });
  }
  /// Bytes per element of the master copy, its copy in the compute
  /// precision, gradient and optimizer state of each parameter (from
  /// @train_step's optimizer-state arguments).
  double getModelStateBytesPerParameter() const { return stateBytes; }
  double getParameterBytes() const { return parameterBytes; }
  /// Bytes per parameter element of the weights cast to the compute
  /// precision (bf16 under mixed precision): made once per step and read
  /// by every micro-batch's forward and backward, so held all step.
  double getComputeCopyBytes() const { return computeCopyBytes; }
  /// Bytes per parameter element of the masters that have a compute copy:
  /// read only by the optimizer and the copy, ZeRO-1 and up shard them
  /// with the optimizer state.
  double getCopiedMasterBytes() const { return copiedMasterBytes; }
  double getGradientBytes() const { return gradientBytes; }
  double getOptimizerBytes() const { return optimizerBytes; }
  /// Bytes per gradient element on the wire where each micro-batch's
  /// gradients are reduced: in the precision the forward pass computes
  /// with (a parameter cast to bf16 is reduced in bf16). A sum accumulated
  /// over micro-batches is reduced in getGradientBytes().
  double getGradientCommunicationBytes() const { return gradientWireBytes; }

private:
  func::FuncOp func;
  SmallVector<Operation *> forwardOps, backwardOps;
  llvm::DenseSet<Operation *> forwardSet;
  llvm::DenseSet<Value> stored;
  /// Each parameter view, with the parameters it is made from.
  llvm::DenseMap<Operation *, SmallVector<Value, 2>> parameterViews;
  llvm::DenseSet<Value> readByBackward;
  llvm::DenseSet<Value> differentiable;
  std::shared_ptr<FusedTraffic> fusedTraffic;
  llvm::DenseMap<Value, int64_t> batchDims;
  llvm::DenseMap<Operation *, int64_t> batchFactors;
  int64_t batchSize = 1;
  int64_t stepMicroBatches = 1;
  double stateBytes = 0, parameterBytes = 4, gradientBytes = 4,
         optimizerBytes = 0, gradientWireBytes = 4, computeCopyBytes = 0,
         copiedMasterBytes = 0;
};

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_TRAININGGRAPH_H
