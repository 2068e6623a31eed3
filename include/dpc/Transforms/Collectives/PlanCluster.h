//===- PlanCluster.h - The cluster a planned module runs on -----*- C++ -*-===//
//
// The passes that price a partitioned program (the topology-aware lowering,
// the schedule's time) price it on the cluster it was planned for, its
// nodes laid out as the planned mesh was.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_COLLECTIVES_PLANCLUSTER_H
#define DPC_TRANSFORMS_COLLECTIVES_PLANCLUSTER_H

#include "dpc/Analysis/CostModel/Cluster.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::dpc {

/// `spec` (a preset or a cluster file) if not empty, else the cluster the
/// module's `dpc.plan` names (h100-sxm without a plan), for the plan's
/// mesh. Emits an error naming the cluster at the module where it cannot
/// be read.
FailureOr<Cluster> resolvePlanCluster(ModuleOp module, StringRef spec);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_COLLECTIVES_PLANCLUSTER_H
