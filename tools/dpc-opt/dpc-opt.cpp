//===- dpc-opt.cpp - The dpc compiler driver ------------------------------===//
//
// Like mlir-opt, with the dpc dialect, passes and pipelines registered,
// and more: an `.onnx` file is imported first (its shapes fixed with
// --input-shape / --dim), --train adds -dpc-train-pipeline and --mesh adds
// -dpc-plan-pipeline ahead of the passes named on the command line, all in
// one pass manager.
//
//===----------------------------------------------------------------------===//

#include "dpc/Conversion/OnnxToDpc/OnnxToDpc.h"
#include "dpc/InitAllDialects.h"
#include "dpc/InitAllPasses.h"

#include "TestPasses.h"
#include "dpc/Pipelines/Pipelines.h"
#include "dpc/Runtime/MemorySize.h"
#include "dpc/Target/CPU/CpuArtifact.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

using namespace mlir;

static llvm::cl::OptionCategory importCategory("ONNX import options");

static llvm::cl::list<std::string>
    inputShapes("input-shape", llvm::cl::cat(importCategory),
                llvm::cl::desc("Shape of an ONNX graph input: NAME=2x3x32x32 "
                               "(repeatable)"),
                llvm::cl::value_desc("NAME=DIMS"));

static llvm::cl::OptionCategory trainCategory("Training step options");

static llvm::cl::opt<bool> train(
    "train", llvm::cl::cat(trainCategory),
    llvm::cl::desc("Build the training step (loss, gradients, optimizer)"));

static llvm::cl::opt<std::string>
    lossKind("loss", llvm::cl::cat(trainCategory), llvm::cl::init("from-model"),
             llvm::cl::desc("from-model (the model's own scalar output), "
                            "cross-entropy or mse"));

static llvm::cl::opt<std::string> lossOutput(
    "loss-output", llvm::cl::cat(trainCategory),
    llvm::cl::desc("The output to minimize (from-model) or that the loss "
                   "reads (cross-entropy, mse)"));

static llvm::cl::opt<std::string>
    labelName("label", llvm::cl::cat(trainCategory), llvm::cl::init("label"),
              llvm::cl::desc("Name of the label input an appended loss reads"));

static llvm::cl::opt<std::string>
    optimizerKind("optimizer", llvm::cl::cat(trainCategory),
                  llvm::cl::init("sgd"),
                  llvm::cl::desc("sgd, momentum, adam or adamw"));

static llvm::cl::opt<double> learningRate(
    "lr", llvm::cl::cat(trainCategory), llvm::cl::init(0.01),
    llvm::cl::desc("Default learning rate (the step takes it as an input; "
                   "this is what dpc-run feeds without a schedule)"));

static llvm::cl::opt<double> momentumFactor("momentum",
                                            llvm::cl::cat(trainCategory),
                                            llvm::cl::init(0.9),
                                            llvm::cl::desc("Momentum factor"));

static llvm::cl::opt<bool> nesterov("nesterov", llvm::cl::cat(trainCategory),
                                    llvm::cl::desc("Nesterov momentum"));

static llvm::cl::opt<double> adamBeta1("beta1", llvm::cl::cat(trainCategory),
                                       llvm::cl::init(0.9),
                                       llvm::cl::desc("Adam beta1"));

static llvm::cl::opt<double> adamBeta2("beta2", llvm::cl::cat(trainCategory),
                                       llvm::cl::init(0.999),
                                       llvm::cl::desc("Adam beta2"));

static llvm::cl::opt<double> adamEpsilon("epsilon",
                                         llvm::cl::cat(trainCategory),
                                         llvm::cl::init(1e-8),
                                         llvm::cl::desc("Adam epsilon"));

static llvm::cl::opt<std::string> trainPrecision(
    "precision", llvm::cl::cat(trainCategory), llvm::cl::init("fp32"),
    llvm::cl::desc("Compute precision of the step: fp32, bf16 or fp16 (f32 "
                   "master weights and optimizer state; fp16 adds dynamic "
                   "loss scaling)"));

static llvm::cl::opt<int64_t> lossScaleGrowthInterval(
    "loss-scale-growth-interval", llvm::cl::cat(trainCategory),
    llvm::cl::init(2000),
    llvm::cl::desc("fp16: good steps after which the loss scale doubles"));

static llvm::cl::opt<double> weightDecay("weight-decay",
                                         llvm::cl::cat(trainCategory),
                                         llvm::cl::init(0.0),
                                         llvm::cl::desc("Weight decay"));

static llvm::cl::opt<double>
    maxGradNorm("max-grad-norm", llvm::cl::cat(trainCategory),
                llvm::cl::init(0.0),
                llvm::cl::desc("Clip the global gradient norm (0: off)"));

static llvm::cl::opt<int64_t> microBatches(
    "micro-batches", llvm::cl::cat(trainCategory), llvm::cl::init(1),
    llvm::cl::desc("Accumulate gradients over this many micro-batches (the "
                   "model's batch size is one micro-batch)"));

static llvm::cl::OptionCategory planCategory("Planner options");

static llvm::cl::opt<std::string>
    meshShape("mesh", llvm::cl::cat(planCategory),
              llvm::cl::desc("Plan the training step for this device mesh "
                             "(AxB[xC], outer axes across nodes)"),
              llvm::cl::value_desc("AxB"));

static llvm::cl::opt<std::string> clusterSpec(
    "cluster", llvm::cl::cat(planCategory), llvm::cl::init("h100-sxm"),
    llvm::cl::desc("Cluster preset (h100-sxm, a100-80gb, v100-16gb-25gbps, "
                   "h200, cpu-host) or cluster FILE.json"));

static llvm::cl::opt<std::string> memoryLimit(
    "memory-limit", llvm::cl::cat(planCategory), llvm::cl::init(""),
    llvm::cl::value_desc("SIZE"),
    llvm::cl::desc("Memory per device: 80GB, 75GiB, 512MiB, or a number of "
                   "GiB (default: the device's)"));

static llvm::cl::opt<int64_t>
    fixedDataParallel("dp", llvm::cl::cat(planCategory), llvm::cl::init(0),
                      llvm::cl::desc("Fix the data-parallel degree"));
static llvm::cl::opt<int64_t>
    fixedTensorParallel("tp", llvm::cl::cat(planCategory), llvm::cl::init(0),
                        llvm::cl::desc("Fix the tensor-parallel degree"));
static llvm::cl::opt<int64_t>
    fixedPipelineParallel("pp", llvm::cl::cat(planCategory), llvm::cl::init(0),
                          llvm::cl::desc("Fix the number of pipeline stages"));

static llvm::cl::opt<int64_t> fixedZeroStage(
    "zero", llvm::cl::cat(planCategory), llvm::cl::init(-1),
    llvm::cl::desc("Fix the ZeRO stage: 0 none, 1 optimizer state, 2 and "
                   "gradients, 3 and parameters (default: the planner "
                   "chooses)"));

static llvm::cl::opt<bool>
    planOnly("plan-only", llvm::cl::cat(planCategory),
             llvm::cl::desc("Print the plan's table instead of the IR"));

static llvm::cl::opt<bool> partitionStep(
    "partition", llvm::cl::cat(planCategory),
    llvm::cl::desc("After planning, write the program each rank runs: local "
                   "types and collectives (-dpc-partition); implied by "
                   "--emit=cpu|cuda|cpu-source|cuda-source with --mesh"));

static llvm::cl::opt<std::string> pipelineSchedule(
    "pipeline-schedule", llvm::cl::cat(planCategory),
    llvm::cl::desc("Fix the schedule of a plan with pipeline stages: gpipe, "
                   "1f1b or interleaved-1f1b (default: the planner chooses)"),
    llvm::cl::value_desc("NAME"));

static llvm::cl::opt<std::string> recomputeFlag(
    "recompute", llvm::cl::cat(planCategory),
    llvm::cl::desc("Fix the plan's recomputation: on (the backward pass "
                   "keeps each layer's input and recomputes the rest), "
                   "attention (it recomputes each attention's scores and "
                   "probabilities, selective recomputation) or off (default: "
                   "the planner chooses)"),
    llvm::cl::value_desc("on|attention|off"));

static llvm::cl::opt<std::string> innerAxisFlag(
    "inner-axis", llvm::cl::cat(planCategory),
    llvm::cl::desc("Fix which axis is innermost, its ranks neighbouring "
                   "device ids (within a node): tp or dp (default: the "
                   "planner chooses)"),
    llvm::cl::value_desc("tp|dp"));

static llvm::cl::opt<int64_t> pipelineChunks(
    "pipeline-chunks", llvm::cl::cat(planCategory), llvm::cl::init(0),
    llvm::cl::desc("With --pipeline-schedule=interleaved-1f1b: model chunks "
                   "per stage, 2 or 4 (default: the planner chooses)"),
    llvm::cl::value_desc("N"));

static llvm::cl::opt<double> bucketCapMb(
    "bucket-cap-mb", llvm::cl::cat(planCategory), llvm::cl::init(25.0),
    llvm::cl::desc("With --partition: gradient all-reduces are fused into "
                   "buckets of at most this many MiB (default 25)"));

static llvm::cl::opt<std::string> gradCompression(
    "grad-compression", llvm::cl::cat(planCategory), llvm::cl::init("none"),
    llvm::cl::desc("Send data-parallel gradient reductions as none "
                   "(default), bf16, fp16, or topk:RATIO (the largest "
                   "entries, with error feedback), or let the planner take "
                   "the fastest of a comma-separated list of them (auto: "
                   "none or bf16; compressed only where the step is 1% "
                   "faster): the plan is priced so, and with --partition "
                   "the program sends so"));

static llvm::cl::opt<std::string>
    planReport("plan-report", llvm::cl::cat(planCategory),
               llvm::cl::desc("Write the plan as JSON to this file"),
               llvm::cl::value_desc("FILE.json"));

static llvm::cl::opt<std::string> emitKind(
    "emit", llvm::cl::cat(planCategory), llvm::cl::init("mlir"),
    llvm::cl::desc("What to write: mlir (dpc IR), shard-mlir (the plan "
                   "in upstream MLIR's shard dialect, -dpc-export-shard), "
                   "cpu (an artifact directory dpc-run trains from), "
                   "cpu-source (its generated C++ alone), cuda (an artifact "
                   "for NVIDIA GPUs, built with nvcc) or cuda-source"),
    llvm::cl::value_desc("KIND"));

static llvm::cl::opt<bool> cudaEmulation(
    "cuda-emulation", llvm::cl::cat(planCategory), llvm::cl::Hidden,
    llvm::cl::desc("With --emit=cuda: compile the CUDA program for the host "
                   "(DPC_CUDA_EMULATION), so that dpc-run runs it without a "
                   "GPU; for testing the generated code"),
    llvm::cl::init(false));

static llvm::cl::list<std::string> cudaArchs(
    "cuda-arch", llvm::cl::cat(planCategory), llvm::cl::CommaSeparated,
    llvm::cl::desc("With --emit=cuda: the GPUs nvcc compiles for, as "
                   "compute capabilities without the dot (default 80,90: "
                   "A100, H100 and H200, with PTX of the last for later "
                   "GPUs); fewer compile faster"),
    llvm::cl::value_desc("CC,..."));

static llvm::cl::opt<std::string> cpuArch(
    "cpu-arch", llvm::cl::cat(planCategory), llvm::cl::init("native"),
    llvm::cl::desc("With --emit=cpu: the CPU the library is compiled for, "
                   "as the C++ compiler's -march names it (native: this "
                   "machine's; x86-64-v3: any AVX2 CPU). dpc-run refuses a "
                   "CPU without the extensions it uses"),
    llvm::cl::value_desc("NAME"));

static llvm::cl::list<std::string> dimSizes(
    "dim", llvm::cl::cat(importCategory),
    llvm::cl::desc("Size of a symbolic ONNX dimension: NAME=N (repeatable)"),
    llvm::cl::value_desc("NAME=N"));

static llvm::cl::opt<std::string> parameterNames(
    "parameters", llvm::cl::cat(importCategory),
    llvm::cl::desc("Stored tensors to train although the import rule makes "
                   "them constants (a Constant node's output, say): an "
                   "extended regular expression matched against whole names"),
    llvm::cl::value_desc("REGEX"));

static llvm::cl::opt<std::string> frozenNames(
    "freeze", llvm::cl::cat(importCategory),
    llvm::cl::desc("Parameters to hold constant (not trained): an extended "
                   "regular expression matched against whole names; wins "
                   "over --parameters"),
    llvm::cl::value_desc("REGEX"));

/// Turns --input-shape / --dim / --parameters / --freeze into import
/// options; reports bad values.
static FailureOr<mlir::dpc::OnnxImportOptions> getImportOptions() {
  std::string error;
  FailureOr<mlir::dpc::OnnxImportOptions> options =
      mlir::dpc::parseImportFlags(inputShapes, dimSizes, error);
  if (failed(options)) {
    llvm::errs() << "dpc-opt: " << error << "\n";
    return failure();
  }
  for (auto [flag, pattern] : {std::make_pair("parameters", &parameterNames),
                               std::make_pair("freeze", &frozenNames)}) {
    if (pattern->empty())
      continue;
    if (!llvm::Regex(*pattern).isValid(error)) {
      llvm::errs() << "dpc-opt: --" << flag << "='" << *pattern
                   << "' is not a regular expression: " << error << "\n";
      return failure();
    }
  }
  options->parameters = parameterNames;
  options->freeze = frozenNames;
  return options;
}

/// The --train flags as the training pipeline's options.
static LogicalResult readTrainFlags(mlir::dpc::TrainPipelineOptions &options) {
  if (trainPrecision != "fp32" && trainPrecision != "bf16" &&
      trainPrecision != "fp16") {
    llvm::errs() << "dpc-opt: --precision=" << trainPrecision
                 << " is not fp32, bf16 or fp16\n";
    return failure();
  }
  if (labelName.getNumOccurrences() && lossKind == "from-model") {
    llvm::errs() << "dpc-opt: --label names the input of an appended loss; "
                    "with the model's own loss (--loss=from-model) there is "
                    "none\n";
    return failure();
  }
  // A hyperparameter of another optimizer would be ignored without a word
  // (--optimizer=sgd --momentum=0.9 trained plain SGD).
  bool adam = optimizerKind == "adam" || optimizerKind == "adamw";
  bool known = adam || optimizerKind == "sgd" || optimizerKind == "momentum";
  for (auto [flag, appliesHere, kinds] :
       {std::tuple<llvm::cl::Option *, bool, StringRef>{
            &momentumFactor, optimizerKind == "momentum", "momentum"},
        {&nesterov, optimizerKind == "momentum", "momentum"},
        {&adamBeta1, adam, "adam or adamw"},
        {&adamBeta2, adam, "adam or adamw"},
        {&adamEpsilon, adam, "adam or adamw"}}) {
    if (!known || !flag->getNumOccurrences() || appliesHere)
      continue;
    llvm::errs() << "dpc-opt: --" << flag->ArgStr
                 << " applies to --optimizer=" << kinds << ", not "
                 << optimizerKind;
    if (kinds == "momentum" && optimizerKind == "sgd")
      llvm::errs() << " (PyTorch's SGD(momentum=m) is --optimizer=momentum "
                      "--momentum=m)";
    llvm::errs() << "\n";
    return failure();
  }
  options.loss = lossKind;
  options.lossOutput = lossOutput;
  options.label = labelName;
  options.precision = trainPrecision;
  options.optimizer = optimizerKind;
  options.lr = learningRate;
  options.momentum = momentumFactor;
  options.nesterov = nesterov;
  options.beta1 = adamBeta1;
  options.beta2 = adamBeta2;
  options.epsilon = adamEpsilon;
  options.weightDecay = weightDecay;
  options.maxGradNorm = maxGradNorm;
  options.microBatches = microBatches;
  options.lossScaleGrowthInterval = lossScaleGrowthInterval;
  return success();
}

/// --memory-limit in GiB (0: the device's), once parsed.
static double memoryLimitGiB = 0.0;

/// The --mesh flags as the planning pipeline's options.
/// Whether --emit asks for code (an artifact or its source), which is
/// made from the per-rank program.
static bool emitsRankProgram() {
  return llvm::is_contained({"cpu", "cuda", "cpu-source", "cuda-source"},
                            StringRef(emitKind));
}

static void readPlanFlags(mlir::dpc::PlanPipelineOptions &options) {
  options.mesh = meshShape;
  options.cluster = clusterSpec;
  options.memoryLimit = memoryLimitGiB;
  options.dataParallel = fixedDataParallel;
  options.tensorParallel = fixedTensorParallel;
  options.pipelineParallel = fixedPipelineParallel;
  options.zeroStage = fixedZeroStage;
  options.report = planReport;
  options.printTable = planOnly;
  // The IR is not printed after the table: writing the plan onto it is
  // wasted time.
  options.annotate = !planOnly;
  // Code is emitted from the program each rank runs: with a mesh, emitting
  // partitions (a planned but unpartitioned step has no code to emit).
  options.partition = partitionStep || emitsRankProgram();
  options.bucketCapMb = bucketCapMb;
  options.pipelineSchedule = pipelineSchedule;
  options.pipelineChunks = pipelineChunks;
  options.recompute = recomputeFlag;
  options.innerAxis = innerAxisFlag;
  options.gradCompression = gradCompression;
}

/// Reads the input: imports an ONNX file (keeping its initial values in
/// `initialValues`), or parses (and verifies) IR.
static OwningOpRef<ModuleOp>
readInput(StringRef path, MLIRContext &context, llvm::SourceMgr &sourceMgr,
          std::vector<::dpc::NamedTensor> &initialValues) {
  if (!path.ends_with(".onnx"))
    return parseSourceFile<ModuleOp>(path, sourceMgr, &context);
  FailureOr<mlir::dpc::OnnxImportOptions> options = getImportOptions();
  if (failed(options))
    return nullptr;
  mlir::dpc::ImportDiagnosticHandler handler(&context, llvm::errs());
  FailureOr<mlir::dpc::OnnxImportResult> imported =
      mlir::dpc::importOnnxFile(&context, path, *options);
  if (failed(imported))
    return nullptr;
  initialValues = std::move(imported->initialValues);
  return std::move(imported->module);
}

/// Imports or parses the input, runs the pipelines that --train and
/// --mesh ask for and then the passes named on the command line, in one
/// pass manager, and writes the result (nothing after --plan-only).
/// Diagnostics point into the user's own file.
static LogicalResult runDriver(StringRef inputPath, StringRef outputPath,
                               DialectRegistry &registry,
                               const MlirOptMainConfig &config) {
  mlir::dpc::TrainPipelineOptions trainOptions;
  if (train && failed(readTrainFlags(trainOptions)))
    return failure();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::vector<::dpc::NamedTensor> initialValues;
  OwningOpRef<ModuleOp> module =
      readInput(inputPath, context, sourceMgr, initialValues);
  if (!module)
    return failure();

  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  if (train)
    mlir::dpc::addTrainPipeline(pm, trainOptions);
  if (!meshShape.empty()) {
    mlir::dpc::PlanPipelineOptions planOptions;
    readPlanFlags(planOptions);
    mlir::dpc::addPlanPipeline(pm, planOptions);
  }
  if (failed(config.setupPassPipeline(pm)))
    return failure();
  if (emitKind == "shard-mlir")
    pm.addPass(mlir::dpc::createExportShard());
  if (failed(pm.run(*module)))
    return failure();
  // The table went to stdout; there is no IR to print.
  if (planOnly)
    return success();
  if (emitKind == "cpu" || emitKind == "cuda") {
    mlir::dpc::CpuArtifactOptions artifactOptions;
    artifactOptions.initialValues = std::move(initialValues);
    if (emitKind == "cuda")
      artifactOptions.target = mlir::dpc::EmitTarget::Cuda;
    artifactOptions.emulate = cudaEmulation;
    artifactOptions.cpuArch = cpuArch;
    if (!cudaArchs.empty())
      artifactOptions.cudaArchs.assign(cudaArchs.begin(), cudaArchs.end());
    return mlir::dpc::writeCpuArtifact(*module, outputPath, artifactOptions);
  }
  std::string error;
  // The output file is kept only on success: no half-written files.
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "dpc-opt: " << error << "\n";
    return failure();
  }
  if (emitKind == "cpu-source" || emitKind == "cuda-source") {
    if (failed(mlir::dpc::writeCpuSource(*module, output->os(), "train_step",
                                         emitKind == "cuda-source"
                                             ? mlir::dpc::EmitTarget::Cuda
                                             : mlir::dpc::EmitTarget::Cpu)))
      return failure();
  } else {
    module->print(output->os());
    output->os() << "\n";
  }
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::dpc::registerAllPasses();
  mlir::dpc::registerDpcTestPasses();
  mlir::dpc::registerPipelines();
  DialectRegistry registry;
  mlir::dpc::registerAllDialects(registry);

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "dpc: distributed training compiler driver\n", registry);
  if ((planOnly || !planReport.empty()) && meshShape.empty()) {
    llvm::errs() << "dpc-opt: --plan-only and --plan-report need --mesh\n";
    return EXIT_FAILURE;
  }
  if (partitionStep && (meshShape.empty() || planOnly)) {
    llvm::errs() << "dpc-opt: --partition needs --mesh (and the plan written "
                    "onto the IR, not --plan-only)\n";
    return EXIT_FAILURE;
  }
  for (auto [flag, degree] :
       {std::pair<StringRef, int64_t>("dp", fixedDataParallel),
        {"tp", fixedTensorParallel},
        {"pp", fixedPipelineParallel}})
    if (degree != 0 && meshShape.empty()) {
      llvm::errs() << "dpc-opt: --" << flag << " fixes a degree of a plan "
                   << "and needs --mesh\n";
      return EXIT_FAILURE;
    }
  for (const llvm::cl::Option *flag :
       {static_cast<const llvm::cl::Option *>(&pipelineSchedule),
        static_cast<const llvm::cl::Option *>(&pipelineChunks),
        static_cast<const llvm::cl::Option *>(&recomputeFlag),
        static_cast<const llvm::cl::Option *>(&innerAxisFlag)})
    if (flag->getNumOccurrences() && meshShape.empty()) {
      llvm::errs() << "dpc-opt: --" << flag->ArgStr
                   << " fixes a choice of the plan and needs --mesh\n";
      return EXIT_FAILURE;
    }
  if (fixedZeroStage.getNumOccurrences() && meshShape.empty()) {
    llvm::errs() << "dpc-opt: --zero fixes the ZeRO stage of a plan and "
                    "needs --mesh\n";
    return EXIT_FAILURE;
  }
  if (!memoryLimit.empty()) {
    // A bare number is in GiB.
    double bytes = 0;
    ::dpc::Status status =
        ::dpc::parseMemorySize(memoryLimit, 1024.0 * 1024 * 1024, bytes);
    if (status.isError()) {
      llvm::errs() << "dpc-opt: --memory-limit: " << status.getMessage()
                   << "\n";
      return EXIT_FAILURE;
    }
    memoryLimitGiB = bytes / (1024.0 * 1024 * 1024);
  }
  if (!llvm::is_contained(
          {"mlir", "shard-mlir", "cpu", "cpu-source", "cuda", "cuda-source"},
          emitKind)) {
    llvm::errs() << "dpc-opt: --emit=" << emitKind
                 << " is not a kind dpc-opt writes (mlir, shard-mlir, cpu, "
                    "cpu-source, cuda or cuda-source)\n";
    return EXIT_FAILURE;
  }
  if ((emitKind == "cpu" || emitKind == "cuda") &&
      (outputFilename == "-" || planOnly)) {
    llvm::errs() << "dpc-opt: --emit=" << emitKind
                 << " writes an artifact directory: give it with -o DIR (and "
                    "not --plan-only)\n";
    return EXIT_FAILURE;
  }
  if (!cudaArchs.empty() && emitKind != "cuda") {
    llvm::errs() << "dpc-opt: --cuda-arch applies to --emit=cuda only\n";
    return EXIT_FAILURE;
  }
  if (cudaEmulation && emitKind != "cuda") {
    llvm::errs() << "dpc-opt: --cuda-emulation applies to --emit=cuda only\n";
    return EXIT_FAILURE;
  }
  if (!StringRef(inputFilename).ends_with(".onnx") && !train &&
      meshShape.empty() && emitKind == "mlir")
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  return succeeded(runDriver(inputFilename, outputFilename, registry,
                             MlirOptMainConfig::createFromCLOptions()))
             ? EXIT_SUCCESS
             : EXIT_FAILURE;
}
