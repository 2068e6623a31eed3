//===- PlanAttributes.h - The plan's mesh and shardings in the IR -*- C++
//-*-===//
//
// The planner searches over meshes of pp x dp x tp devices and keeps a
// tensor's layout in the compact TensorSharding; the IR holds the same as
// `dpc.mesh @plan ["pp"=P, "dp"=D, "tp"=T]` and #dpc.sharding attributes.
// These functions convert between the two.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_PLANATTRIBUTES_H
#define DPC_TRANSFORMS_PLANNING_PLANATTRIBUTES_H

#include "dpc/Analysis/CostModel/ReshardingCost.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::dpc {

/// The symbol of the plan's mesh and the names of its axes, outermost
/// first: pipeline stages, data-parallel replicas, tensor-parallel shards.
inline constexpr StringLiteral kPlanMeshName = "plan";
inline constexpr StringLiteral kStageAxisName = "pp";
inline constexpr StringLiteral kDataAxisName = "dp";
inline constexpr StringLiteral kTensorAxisName = "tp";

/// Writes `dpc.mesh @plan` with these degrees at the top of `module`,
/// replacing the one already there: axes pp, dp, tp, or pp, tp, dp when
/// data-parallel ranks are the innermost (neighbouring device ids).
MeshOp writePlanMesh(ModuleOp module, int64_t stages, int64_t dataParallel,
                     int64_t tensorParallel, bool dataInner = false);

/// Removes every dpc.reshard of `module`, its users reading its input: the
/// step as the planner reads it.
void eraseReshards(ModuleOp module);

/// `sharding` as an attribute on @plan.
ShardingAttr getShardingAttr(MLIRContext *context,
                             const TensorSharding &sharding);

/// The per-value form ops carry: one #dpc.sharding per result.
ArrayAttr getShardingArrayAttr(MLIRContext *context,
                               ArrayRef<TensorSharding> shardings);

/// The planner's form of `sharding`: it may name only the axes `dp` and
/// `tp`. Fails with `error` naming the axis it cannot place.
FailureOr<TensorSharding> getTensorSharding(ShardingAttr sharding,
                                            std::string &error);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_PLANATTRIBUTES_H
