//===- Pipelines.cpp - dpc's registered pass pipelines --------------------===//

#include "dpc/Pipelines/Pipelines.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dpc;

void mlir::dpc::addTrainPipeline(OpPassManager &pm,
                                 const TrainPipelineOptions &options) {
  if (options.loss != "from-model") {
    AppendLossOptions loss;
    loss.kind = options.loss;
    loss.output = options.lossOutput;
    loss.label = options.label;
    pm.addPass(createAppendLoss(loss));
  }
  if (options.precision != "fp32") {
    MixedPrecisionOptions precision;
    precision.precision = options.precision;
    pm.addPass(createMixedPrecision(precision));
  }
  DifferentiateOptions differentiate;
  if (options.loss == "from-model")
    differentiate.lossOutput = options.lossOutput;
  differentiate.lossScale = options.precision == "fp16";
  pm.addPass(createDifferentiate(differentiate));
  pm.addPass(createRecomputePointwise());
  BuildTrainStepOptions step;
  step.optimizer = options.optimizer;
  step.momentum = options.momentum;
  step.nesterov = options.nesterov;
  step.beta1 = options.beta1;
  step.beta2 = options.beta2;
  step.epsilon = options.epsilon;
  step.weightDecay = options.weightDecay;
  step.maxGradNorm = options.maxGradNorm;
  step.microBatches = options.microBatches;
  step.lossScaleGrowthInterval = options.lossScaleGrowthInterval;
  step.defaultLr = options.lr;
  pm.addPass(createBuildTrainStep(step));
}

void mlir::dpc::addPlanPipeline(OpPassManager &pm,
                                const PlanPipelineOptions &options) {
  PlanOptions plan;
  plan.mesh = options.mesh;
  plan.cluster = options.cluster;
  plan.memoryLimit = options.memoryLimit;
  plan.dataParallel = options.dataParallel;
  plan.tensorParallel = options.tensorParallel;
  plan.pipelineParallel = options.pipelineParallel;
  plan.zeroStage = options.zeroStage;
  plan.bucketCapMb = options.bucketCapMb;
  plan.schedule = options.pipelineSchedule;
  plan.chunks = options.pipelineChunks;
  plan.recompute = options.recompute;
  plan.innerAxis = options.innerAxis;
  plan.gradCompression = options.gradCompression;
  plan.report = options.report;
  plan.printTable = options.printTable;
  plan.annotate = options.annotate;
  pm.addPass(createPlan(plan));
  if (!options.annotate)
    return;
  pm.addPass(createCompleteShardings());
  pm.addPass(createInsertReshards());
  pm.addPass(createRecomputeLayers());
  if (!options.partition)
    return;
  pm.addPass(createPartition());
  pm.addPass(createReduceInLastMicroBatch());
  BucketGradientsOptions buckets;
  buckets.bucketCapMb = options.bucketCapMb;
  pm.addPass(createBucketGradients(buckets));
  // As the plan records it.
  pm.addPass(createCompressGradients());
  pm.addPass(createTopologyAwareCollectives());
  pm.addPass(createOverlapCollectives());
}

void mlir::dpc::registerPipelines() {
  PassPipelineRegistration<TrainPipelineOptions>(
      "dpc-train-pipeline",
      "Builds the training step: loss, mixed precision, backward pass, "
      "optimizer",
      addTrainPipeline);
  PassPipelineRegistration<PlanPipelineOptions>(
      "dpc-plan-pipeline",
      "Plans the training step for a mesh and makes its layout changes "
      "explicit reshards",
      addPlanPipeline);
}
