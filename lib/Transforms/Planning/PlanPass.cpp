//===- PlanPass.cpp - The -dpc-plan pass ----------------------------------===//

#include "dpc/Analysis/CostModel/PipelineCost.h"
#include "dpc/Transforms/Collectives/BucketCapacity.h"
#include "dpc/Transforms/Passes.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/Transforms/Planning/PlanReport.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_PLAN
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct PlanPass : public dpc::impl::PlanBase<PlanPass> {
  using PlanBase::PlanBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A planned step's reshards are the last plan's layout changes; the
    // new plan places its own (the shardings it keeps stay on the ops).
    eraseReshards(module);
    for (auto [name, degree] :
         {std::pair<StringRef, int64_t>("dp", dataParallel),
          {"tp", tensorParallel},
          {"pp", pipelineParallel}})
      if (degree < 0 || degree > (int64_t(1) << 31)) {
        emitError(module.getLoc(), "--")
            << name << "=" << degree
            << " is outside [0, 2^31] (0: the planner chooses)";
        return signalPassFailure();
      }
    if (zeroStage < -1 || zeroStage > 3) {
      emitError(module.getLoc(), "--zero=")
          << int64_t(zeroStage) << " is not a ZeRO stage: 0, 1, 2 or 3 (-1: the "
          << "planner chooses)";
      return signalPassFailure();
    }
    std::optional<PipelineSchedule> fixedSchedule;
    if (!schedule.empty()) {
      fixedSchedule = parsePipelineSchedule(schedule);
      if (!fixedSchedule) {
        emitError(module.getLoc(), "--pipeline-schedule=")
            << schedule << " is not a schedule: gpipe, 1f1b or "
            << "interleaved-1f1b";
        return signalPassFailure();
      }
    }
    bool interleaved = fixedSchedule == PipelineSchedule::Interleaved1F1B;
    if (chunks != 0 && !(interleaved && (chunks == 2 || chunks == 4))) {
      emitError(module.getLoc(), "--pipeline-chunks=")
          << int64_t(chunks)
          << (interleaved ? " is not 2 or 4 (0: the planner chooses)"
                          : " needs --pipeline-schedule=interleaved-1f1b");
      return signalPassFailure();
    }
    if (!recompute.empty() && recompute != "on" && recompute != "off" &&
        recompute != "attention") {
      emitError(module.getLoc(), "--recompute=")
          << recompute << " is not on, attention or off";
      return signalPassFailure();
    }
    if (!innerAxis.empty() && innerAxis != "tp" && innerAxis != "dp") {
      emitError(module.getLoc(), "--inner-axis=")
          << innerAxis << " is not tp or dp";
      return signalPassFailure();
    }
    if (!(memoryLimit >= 0) || std::isinf(memoryLimit.getValue())) {
      emitError(module.getLoc(), "--memory-limit=")
          << llvm::formatv("{0}", double(memoryLimit))
          << " GiB is not a finite size";
      return signalPassFailure();
    }
    if (!(exposedTensorComm >= 0 && exposedTensorComm <= 1)) {
      emitError(module.getLoc(), "exposed-tp-comm=")
          << llvm::formatv("{0}", double(exposedTensorComm))
          << " is outside [0, 1]";
      return signalPassFailure();
    }
    if (!isValidBucketCapMb(bucketCapMb)) {
      emitError(module.getLoc(), "--bucket-cap-mb=")
          << llvm::formatv("{0}", double(bucketCapMb))
          << " is outside (0, 1e6]";
      return signalPassFailure();
    }
    std::string error;
    FailureOr<SmallVector<GradientCompression, 2>> compressions =
        GradientCompression::parseChoices(gradCompression, error);
    if (failed(compressions)) {
      emitError(module.getLoc(), "--grad-compression=")
          << gradCompression << " " << error;
      return signalPassFailure();
    }
    PlannerOptions options;
    options.gradientCompressions = std::move(*compressions);
    options.memoryLimit = memoryLimit * 1024.0 * 1024.0 * 1024.0;
    options.bucketCapBytes = bucketCapMb * 1024.0 * 1024.0;
    options.dataParallel = dataParallel;
    options.tensorParallel = tensorParallel;
    options.pipelineParallel = pipelineParallel;
    options.exposedTensorComm = exposedTensorComm;
    if (zeroStage >= 0)
      options.zeroStage = int(zeroStage);
    options.schedule = fixedSchedule;
    options.chunks = chunks;
    if (!recompute.empty())
      options.recompute = recompute == "on"          ? Recomputation::Layers
                          : recompute == "attention" ? Recomputation::Attention
                                                     : Recomputation::None;
    if (!innerAxis.empty())
      options.dataInner = innerAxis == "dp";
    // A plan written onto the IR is built as it stands: the partition runs
    // the step's micro-batches, so the plan may not price others.
    options.stepMicroBatching = annotate;
    auto use = [&](const Plan &plan, const TrainingGraph &graph,
                   const LayerSegmentation &segmentation,
                   const PlanContext &context) -> LogicalResult {
      if (failed(writePlanReport(plan, graph, segmentation, context, report,
                                 printTable, module.getLoc())))
        return failure();
      if (annotate)
        annotatePlan(module, plan, graph, segmentation, context);
      return success();
    };
    if (failed(planModule(module, mesh, cluster, options, use)))
      signalPassFailure();
  }
};
} // namespace
