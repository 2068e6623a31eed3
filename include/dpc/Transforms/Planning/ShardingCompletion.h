//===- ShardingCompletion.h - Shardings the plan implies ------*- C++ -*-===//
//
// The planner decides the forward pass; the backward pass and the optimizer
// follow from it. This completes the plan in the IR so that every value
// carries a sharding: each backward op of `@forward_backward`, and each op
// of `@train_step`, takes the strategy of its sharding rule that needs the
// least resharding of its operands as they already lie (then keeps them as
// they lie, then computes least). An op that only feeds one parameter's
// gradient runs on that parameter's stage; any other on the stage that
// holds most of its operands. Gradients leave `@forward_backward` laid out
// as their parameters, as partial sums over the data axis where the
// reduction is still pending; in `@train_step` they arrive reduced
// (all-reduced, or reduce-scattered over the data axis under ZeRO-2/3),
// optimizer state is split over the data axis under ZeRO-1 and up, and
// parameters under ZeRO-3.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_SHARDINGCOMPLETION_H
#define DPC_TRANSFORMS_PLANNING_SHARDINGCOMPLETION_H

#include "dpc/Transforms/Planning/Planner.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::dpc {

/// What the completion needs of a plan, as `dpc.mesh @plan` and
/// `dpc.plan` hold it: the degrees, the ZeRO stage and the cluster.
struct PlanLayout {
  int64_t pipelineParallel = 1, dataParallel = 1, tensorParallel = 1;
  /// Data-parallel ranks are the neighbouring device ids (the mesh's axes
  /// are pp, tp, dp).
  bool dataInner = false;
  int zeroStage = 0;
  /// A cluster preset or file and the mesh, as -dpc-plan was given them.
  std::string cluster, mesh;

  /// Reads the layout of a planned module; fails with a diagnostic at the
  /// module when it is not planned.
  static FailureOr<PlanLayout> read(ModuleOp module);
};

/// Writes `dpc.sharding` (and `dpc.stage` where the op belongs to one
/// stage) on every op of `@forward_backward` and `@train_step` that the
/// planner did not annotate, and `dpc.sharding` on their arguments and
/// results. Expects the planner's attributes on the forward pass.
void completeShardings(ModuleOp module, const PlanLayout &plan,
                       const TrainingGraph &graph, const Cluster &cluster);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_SHARDINGCOMPLETION_H
