//===- PlanReportPass.cpp - The -dpc-plan-report pass ---------------------===//
//
// Prices the plan a module holds, as its attributes state it: the degrees
// and the mesh, micro-batching, schedule, recomputation and ZeRO stage of
// `dpc.plan`, and the shardings of the forward ops and arguments. The
// planner evaluates exactly that configuration, so a plan the user edited
// is priced as edited.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Collectives/BucketCapacity.h"
#include "dpc/Transforms/Passes.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/Transforms/Planning/PlanReport.h"
#include "dpc/Transforms/Planning/ShardingCompletion.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_PLANREPORT
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct PlanReportPass : public dpc::impl::PlanReportBase<PlanReportPass> {
  using PlanReportBase::PlanReportBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fields =
        module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
    if (!fields) {
      emitError(module.getLoc(),
                "the module has no plan (dpc.plan): run -dpc-plan "
                "first");
      return signalPassFailure();
    }
    auto text = [&](StringRef name) {
      auto value = fields.getAs<StringAttr>(name);
      return value ? value.getValue() : StringRef();
    };
    auto integer = [&](StringRef name) -> int64_t {
      auto value = fields.getAs<IntegerAttr>(name);
      return value ? value.getInt() : 0;
    };
    std::optional<PipelineSchedule> schedule =
        parsePipelineSchedule(text("schedule"));
    auto recompute = fields.getAs<BoolAttr>("recompute");
    if (!schedule || !recompute || integer("micro_batch_size") < 1) {
      emitError(module.getLoc(), "dpc.plan lacks its schedule, recompute or "
                                 "micro_batch_size");
      return signalPassFailure();
    }
    // Optional: written only for a plan that recomputes attention.
    Attribute attentionField = fields.get("recompute_attention");
    auto attention = dyn_cast_or_null<BoolAttr>(attentionField);
    if (attentionField && !attention) {
      emitError(module.getLoc(), "dpc.plan's recompute_attention (")
          << attentionField << ") is not true or false";
      return signalPassFailure();
    }

    // The planner reads the step without the explicit reshards; a copy
    // keeps the module as it is.
    OwningOpRef<ModuleOp> step = cast<ModuleOp>(module->clone());
    eraseReshards(*step);
    PlannerOptions options;
    if (auto limit = fields.getAs<FloatAttr>("memory_limit_bytes"))
      options.memoryLimit = limit.getValueAsDouble();
    if (auto cap = fields.getAs<FloatAttr>("bucket_cap_bytes")) {
      // Written by hand, it may say anything: it must be what
      // --bucket-cap-mb allows.
      double bytes = cap.getValueAsDouble();
      if (!isValidBucketCapMb(bytes / (1024.0 * 1024.0))) {
        emitError(module.getLoc(), "dpc.plan's bucket_cap_bytes (")
            << llvm::formatv("{0}", bytes) << ") is outside (0, 1e6 MiB]";
        return signalPassFailure();
      }
      options.bucketCapBytes = bytes;
    }
    options.dataParallel = integer("dp");
    options.tensorParallel = integer("tp");
    options.pipelineParallel = integer("pp");
    options.tensorParallelAcrossNodes = true;
    options.microBatchSize = integer("micro_batch_size");
    options.schedule = schedule;
    options.chunks = integer("chunks");
    options.recompute = recompute.getValue() ? Recomputation::Layers
                        : attention && attention.getValue()
                            ? Recomputation::Attention
                            : Recomputation::None;
    options.zeroStage = int(integer("zero_stage"));
    // Optional: plans written before it was priced sent every reduction
    // whole.
    if (Attribute field = fields.get("grad_compression")) {
      auto text = dyn_cast<StringAttr>(field);
      std::string error = "is not a string";
      FailureOr<GradientCompression> compression =
          text ? GradientCompression::parse(text.getValue(), error)
               : FailureOr<GradientCompression>(failure());
      if (failed(compression)) {
        emitError(module.getLoc(), "dpc.plan's grad_compression (")
            << field << ") " << error;
        return signalPassFailure();
      }
      options.gradientCompressions = {*compression};
    }
    // The mesh's axis order: which ranks neighbour.
    FailureOr<PlanLayout> layout = PlanLayout::read(module);
    if (failed(layout))
      return signalPassFailure();
    options.dataInner = layout->dataInner;
    auto use = [&](const Plan &plan, const TrainingGraph &graph,
                   const LayerSegmentation &segmentation,
                   const PlanContext &context) {
      return writePlanReport(plan, graph, segmentation, context, report,
                             printTable, module.getLoc());
    };
    if (failed(planModule(*step, text("mesh"), text("cluster"), options, use)))
      signalPassFailure();
  }
};
} // namespace
