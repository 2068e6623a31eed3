//===- Pipelines.h - dpc's registered pass pipelines ------------*- C++ -*-===//
//
// The stages of dpc as pass pipelines, each with an options struct and an
// add...Pipeline function: -dpc-train-pipeline builds the training step,
// -dpc-plan-pipeline plans it for a mesh and makes its layout changes
// explicit. `dpc-opt --train` and `--mesh` only add these.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_PIPELINES_PIPELINES_H
#define DPC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dpc {

struct TrainPipelineOptions : public PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> loss{
      *this, "loss", llvm::cl::init("from-model"),
      llvm::cl::desc("from-model (the model's own scalar output), "
                     "cross-entropy or mse")};
  Option<std::string> lossOutput{
      *this, "loss-output",
      llvm::cl::desc("The output to minimize (from-model) or that the loss "
                     "reads (cross-entropy, mse)")};
  Option<std::string> label{
      *this, "label", llvm::cl::init("label"),
      llvm::cl::desc("Name of the label input an appended loss reads")};
  Option<std::string> precision{
      *this, "precision", llvm::cl::init("fp32"),
      llvm::cl::desc("Compute precision: fp32, bf16 or fp16")};
  Option<std::string> optimizer{*this, "optimizer", llvm::cl::init("sgd"),
                                llvm::cl::desc("sgd, momentum, adam or adamw")};
  Option<double> lr{*this, "lr", llvm::cl::init(0.01),
                    llvm::cl::desc("Default learning rate")};
  Option<double> momentum{*this, "momentum", llvm::cl::init(0.9),
                          llvm::cl::desc("Momentum factor")};
  Option<bool> nesterov{*this, "nesterov", llvm::cl::init(false),
                        llvm::cl::desc("Nesterov momentum")};
  Option<double> beta1{*this, "beta1", llvm::cl::init(0.9),
                       llvm::cl::desc("Adam beta1")};
  Option<double> beta2{*this, "beta2", llvm::cl::init(0.999),
                       llvm::cl::desc("Adam beta2")};
  Option<double> epsilon{*this, "epsilon", llvm::cl::init(1e-8),
                         llvm::cl::desc("Adam epsilon")};
  Option<double> weightDecay{*this, "weight-decay", llvm::cl::init(0.0),
                             llvm::cl::desc("Weight decay")};
  Option<double> maxGradNorm{
      *this, "max-grad-norm", llvm::cl::init(0.0),
      llvm::cl::desc("Clip the global gradient norm (0: off)")};
  Option<int64_t> microBatches{
      *this, "micro-batches", llvm::cl::init(1),
      llvm::cl::desc("Accumulate gradients over this many micro-batches")};
  Option<int64_t> lossScaleGrowthInterval{
      *this, "loss-scale-growth-interval", llvm::cl::init(2000),
      llvm::cl::desc("fp16: good steps after which the loss scale doubles")};
};

/// Loss (unless the model's own), mixed precision (unless fp32), the
/// backward pass and the optimizer step.
void addTrainPipeline(OpPassManager &pm, const TrainPipelineOptions &options);

struct PlanPipelineOptions : public PassPipelineOptions<PlanPipelineOptions> {
  Option<std::string> mesh{*this, "mesh", llvm::cl::init("1"),
                           llvm::cl::desc("Device mesh AxB[xC]")};
  Option<std::string> cluster{
      *this, "cluster", llvm::cl::init("h100-sxm"),
      llvm::cl::desc("Cluster preset or cluster FILE.json")};
  Option<double> memoryLimit{
      *this, "memory-limit", llvm::cl::init(0.0),
      llvm::cl::desc("GiB per device (0: the device's)")};
  Option<int64_t> dataParallel{*this, "dp", llvm::cl::init(0),
                               llvm::cl::desc("Fix the data-parallel degree")};
  Option<int64_t> tensorParallel{
      *this, "tp", llvm::cl::init(0),
      llvm::cl::desc("Fix the tensor-parallel degree")};
  Option<int64_t> pipelineParallel{
      *this, "pp", llvm::cl::init(0),
      llvm::cl::desc("Fix the number of pipeline stages")};
  Option<int64_t> zeroStage{
      *this, "zero", llvm::cl::init(-1),
      llvm::cl::desc("Fix the ZeRO stage 0-3 (-1: the planner chooses)")};
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("Fix recomputation: on, attention or off (empty: the "
                     "planner chooses)")};
  Option<std::string> innerAxis{
      *this, "inner-axis",
      llvm::cl::desc("Fix the innermost axis: tp or dp (empty: the planner "
                     "chooses)")};
  Option<std::string> report{*this, "report",
                             llvm::cl::desc("Write the plan as JSON here")};
  Option<bool> printTable{*this, "print-table", llvm::cl::init(false),
                          llvm::cl::desc("Print the plan's table")};
  Option<bool> annotate{
      *this, "annotate", llvm::cl::init(true),
      llvm::cl::desc("Write the plan onto the IR (off: the table and report "
                     "only)")};
  Option<bool> partition{
      *this, "partition", llvm::cl::init(false),
      llvm::cl::desc("Partition the planned step into the program each rank "
                     "runs (-dpc-partition)")};
  Option<std::string> pipelineSchedule{
      *this, "pipeline-schedule",
      llvm::cl::desc("Fix the schedule of a plan with pipeline stages: "
                     "gpipe, 1f1b or interleaved-1f1b")};
  Option<int64_t> pipelineChunks{
      *this, "pipeline-chunks", llvm::cl::init(0),
      llvm::cl::desc("Model chunks per stage of an interleaved schedule, 2 "
                     "or 4 (0: the planner chooses)")};
  Option<double> bucketCapMb{
      *this, "bucket-cap-mb", llvm::cl::init(25.0),
      llvm::cl::desc("Gradient all-reduce buckets hold at most this many MiB "
                     "(-dpc-bucket-gradients)")};
  Option<std::string> gradCompression{
      *this, "grad-compression", llvm::cl::init("none"),
      llvm::cl::desc("Send data-parallel gradient reductions as none, bf16, "
                     "fp16 or topk:RATIO, or as the fastest of a "
                     "comma-separated list of them (auto: none,bf16): "
                     "priced and chosen by -dpc-plan, built by "
                     "-dpc-compress-gradients")};
};

/// The plan search with its completion, then (when the plan is written
/// onto the IR) the explicit reshards, and on request the partitioning.
void addPlanPipeline(OpPassManager &pm, const PlanPipelineOptions &options);

/// Registers -dpc-train-pipeline and -dpc-plan-pipeline.
void registerPipelines();

} // namespace mlir::dpc

#endif // DPC_PIPELINES_PIPELINES_H
