//===- PlanReport.h - The plan as a table, as JSON and in the IR -*- C++ -*-===//
//
// The plan, readable: a table per layer group (sharding, stage, devices,
// memory per device, compute / exposed communication time) and per stage,
// with the totals (step time, samples/s, MFU, memory); the same as JSON;
// and as attributes on the IR: `dpc.plan` on the module, `dpc.sharding`
// and `dpc.stage` on every forward value and parameter.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_PLANREPORT_H
#define DPC_TRANSFORMS_PLANNING_PLANREPORT_H

#include "dpc/Transforms/Planning/Planner.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::dpc {

/// Context a report names.
struct PlanContext {
  std::string mesh;
  /// The cluster's name, and the preset or file it was read from.
  std::string cluster, clusterSpec;
  /// Devices of each node the mesh runs on (placeMeshOnCluster).
  int64_t devicesPerNode = 1;
};

/// What a plan was made on, and the plan with the step it was made for.
using PlanConsumer = function_ref<LogicalResult(
    const Plan &, const TrainingGraph &, const LayerSegmentation &,
    const PlanContext &)>;

/// Plans the step of `module` on the mesh `mesh` (AxB[xC]) and cluster
/// `cluster` (preset or file) with `options` (its devices, cluster and
/// constraints are filled in: the shardings fixed in the IR), and hands the
/// plan to `use`. Errors are diagnostics: at the op or argument a failure
/// is about, else at the module.
LogicalResult planModule(ModuleOp module, StringRef mesh, StringRef cluster,
                         PlannerOptions options, PlanConsumer use);

/// Writes the plan's JSON report to `reportPath` (unless empty; the file is
/// kept only when complete) and its table to stdout when `printTable`.
/// Fails with a diagnostic at `loc` when the file cannot be written.
LogicalResult writePlanReport(const Plan &plan, const TrainingGraph &graph,
                              const LayerSegmentation &segmentation,
                              const PlanContext &context,
                              StringRef reportPath, bool printTable,
                              Location loc);

void printPlanTable(const Plan &plan, const TrainingGraph &graph,
                    const LayerSegmentation &segmentation,
                    const PlanContext &context, llvm::raw_ostream &os);

llvm::json::Value getPlanJson(const Plan &plan, const TrainingGraph &graph,
                              const LayerSegmentation &segmentation,
                              const PlanContext &context);

/// Writes the plan's attributes onto the module.
void annotatePlan(ModuleOp module, const Plan &plan,
                  const TrainingGraph &graph,
                  const LayerSegmentation &segmentation,
                  const PlanContext &context);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_PLANREPORT_H
