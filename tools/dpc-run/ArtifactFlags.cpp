//===- ArtifactFlags.cpp - dpc-run's flags for training an artifact -------===//

#include "ArtifactFlags.h"
#include "ArtifactRun.h"

#include "dpc/Runtime/MemorySize.h"

#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace llvm;
using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::artifact;

cl::OptionCategory artifact::runCategory("dpc-run options");

cl::opt<std::string> artifact::artifactPath(cl::Positional, cl::cat(runCategory),
                                     cl::value_desc("ARTIFACT"),
                                     cl::desc("[ARTIFACT]"));

cl::OptionCategory artifact::trainCategory("Training from an artifact");

static cl::opt<int> procsPerNode(
    "nproc-per-node", cl::cat(trainCategory), cl::init(0), cl::value_desc("N"),
    cl::desc("Ranks to fork on this node (default: every rank of the "
             "artifact's mesh, over --nnodes)"));
static cl::opt<int> nodes("nnodes", cl::cat(trainCategory), cl::init(1),
                          cl::value_desc("N"), cl::desc("Nodes of the job"));
static cl::opt<int> nodeRank("node-rank", cl::cat(trainCategory), cl::init(0),
                             cl::value_desc("K"),
                             cl::desc("This node's index in [0, --nnodes)"));
static cl::opt<std::string> masterAddress(
    "master-addr", cl::cat(trainCategory), cl::value_desc("HOST:PORT"),
    cl::desc("The rendezvous, served by node 0 (default: this node)"));
static cl::opt<int> steps("steps", cl::cat(trainCategory), cl::init(10),
                          cl::value_desc("K"),
                          cl::desc("Training steps (default 10)"));
static cl::opt<uint64_t> seed("seed", cl::cat(trainCategory), cl::init(0),
                              cl::desc("Seed of synthetic data and dropout"));
static cl::opt<std::string> dataSource(
    "data", cl::cat(trainCategory), cl::init("synthetic"),
    cl::value_desc("synthetic|FILE.npz"),
    cl::desc("Batches: random (default), or global batches from a .npz "
             "with one array per input (step k takes the k-th batch)"));
static cl::opt<std::string>
    initFile("init", cl::cat(trainCategory), cl::value_desc("FILE.npz"),
             cl::desc("Initial parameters and state, by name (default: the "
                      "artifact's)"));
static cl::opt<double> learningRate(
    "lr", cl::cat(trainCategory), cl::init(-1), cl::value_desc("RATE"),
    cl::desc("Peak learning rate (default: the step's, dpc-opt --lr)"));
static cl::opt<std::string>
    lrSchedule("lr-schedule", cl::cat(trainCategory), cl::init("constant"),
               cl::value_desc("constant|linear|cosine"),
               cl::desc("Decay after the warm-up (default constant)"));
static cl::opt<int> warmupSteps("warmup-steps", cl::cat(trainCategory),
                                cl::init(0), cl::value_desc("K"),
                                cl::desc("Linear warm-up steps"));
static cl::opt<std::string>
    reportJson("report-json", cl::cat(trainCategory),
               cl::value_desc("FILE.json"),
               cl::desc("Write the losses and timings as JSON"));
static cl::opt<double>
    timeoutSeconds("timeout", cl::cat(trainCategory), cl::init(60),
                   cl::value_desc("SECONDS"),
                   cl::desc("Give up on a peer after this long (default 60)"));
static cl::opt<std::string> saveDir("save", cl::cat(trainCategory),
                                    cl::value_desc("DIR"),
                                    cl::desc("Write checkpoints to DIR"));
static cl::opt<int> saveEvery("save-every", cl::cat(trainCategory), cl::init(0),
                              cl::value_desc("K"),
                              cl::desc("Checkpoint every K steps and at the "
                                       "end"));
static cl::opt<std::string>
    resumeDir("resume", cl::cat(trainCategory), cl::value_desc("DIR"),
              cl::desc("Continue from the checkpoint in DIR (any mesh)"));
static cl::opt<std::string> bindCores(
    "bind-cores", cl::cat(trainCategory), cl::init("auto"),
    cl::value_desc("auto|none"),
    cl::desc("auto (default): bind each rank forked here to its own share "
             "of the CPUs, where there are at least as many; none: leave "
             "them to the scheduler"));
static cl::opt<bool> checkSync(
    "check-sync", cl::cat(trainCategory),
    cl::desc("After every step, check that the replicas of every parameter "
             "and optimizer block are identical across ranks"));
static cl::opt<bool> checkFinite(
    "check-finite", cl::cat(trainCategory),
    cl::desc("Check every float result for NaN and Inf; the first op that "
             "makes one stops the run, named"));
static cl::opt<std::string> tensorboardDir(
    "tensorboard", cl::cat(trainCategory), cl::value_desc("DIR"),
    cl::desc("Write TensorBoard event files (loss, samples/s, communication "
             "share, gradient norm per step)"));
static cl::opt<std::string> traceFile(
    "trace", cl::cat(trainCategory), cl::value_desc("FILE.json"),
    cl::desc("Write a Chrome/Perfetto trace of every rank's steps and "
             "communication waits"));
static cl::opt<std::string> profileFile(
    "profile", cl::cat(trainCategory), cl::value_desc("FILE.json"),
    cl::desc("Time every op of every rank (after the first step) and write "
             "each beside the cost model's prediction; prints a summary by "
             "op type (CPU artifacts)"));
static cl::opt<std::string> memoryLimit(
    "memory-limit", cl::cat(trainCategory), cl::value_desc("SIZE"),
    cl::desc("Memory this node's ranks may hold in tensors (e.g. 64GiB; "
             "default: what the system has available); a plan that needs "
             "more is refused before launch"));
static cl::opt<int> failRank("fail-rank", cl::cat(trainCategory), cl::Hidden,
                             cl::init(-1),
                             cl::desc("For tests: this rank exits at "
                                      "--fail-step"));
static cl::opt<int> perturbRank(
    "perturb-rank", cl::cat(trainCategory), cl::Hidden, cl::init(-1),
    cl::desc("For tests: this rank flips a bit of its first parameter "
             "after the first step"));
static cl::opt<bool> failHangs("fail-hangs", cl::cat(trainCategory), cl::Hidden,
                               cl::desc("For tests: --fail-rank hangs"));
static cl::opt<std::string> scalingBaseline(
    "scaling", cl::cat(trainCategory), cl::value_desc("ONE-RANK.dpc"),
    cl::desc("Also train this one-rank artifact of the same step first and "
             "report the scaling efficiency against it"));
static cl::opt<int> failStep("fail-step", cl::cat(trainCategory), cl::Hidden,
                             cl::init(1));

cl::opt<std::string> artifact::outputDir("output-dir", cl::cat(runCategory), cl::value_desc("DIR"),
              cl::desc("Write every result as DIR/<name>.npy"));

/// Reports a one-line error.
static void reportError(const Twine &message) {
  llvm::errs() << "dpc-run: error: " << message << "\n";
}

int artifact::runArtifactFromFlags() {
  if (lrSchedule != "constant" && lrSchedule != "linear" &&
      lrSchedule != "cosine") {
    reportError("--lr-schedule=" + lrSchedule +
                " is not constant, linear or cosine");
    return 1;
  }
  if (learningRate.getNumOccurrences() &&
      !(learningRate >= 0 && learningRate < 1e6)) {
    reportError("--lr must be in [0, 1e6)");
    return 1;
  }
  for (auto [flag, value] :
       {std::pair<StringRef, int>("warmup-steps", warmupSteps),
        {"save-every", saveEvery},
        {"nproc-per-node", procsPerNode}})
    if (value < 0) {
      reportError("--" + flag + "=" + Twine(value) +
                  " is negative; it must be 0 or more");
      return 1;
    }
  if (!(timeoutSeconds > 0 && timeoutSeconds <= 86400)) {
    reportError("--timeout must be in (0, 86400] seconds");
    return 1;
  }
  if (bindCores != "auto" && bindCores != "none") {
    reportError("--bind-cores=" + bindCores + " is not auto or none");
    return 1;
  }
  if (saveEvery > 0 && saveDir.empty()) {
    reportError("--save-every needs --save DIR");
    return 1;
  }
  ArtifactRunOptions options;
  options.artifact = artifactPath;
  options.procsPerNode = procsPerNode;
  options.nodes = nodes;
  options.nodeRank = nodeRank;
  options.masterAddress = masterAddress;
  options.steps = steps;
  options.seed = seed;
  options.data = dataSource;
  options.init = initFile;
  options.lr = learningRate;
  options.lrSchedule = lrSchedule;
  options.warmupSteps = warmupSteps;
  options.outputDir = outputDir;
  options.reportJson = reportJson;
  options.timeoutSeconds = timeoutSeconds;
  options.saveDir = saveDir;
  // Without --save-every, one checkpoint at the end.
  options.saveEvery = saveDir.empty() ? 0
                      : saveEvery > 0 ? saveEvery.getValue()
                                      : std::numeric_limits<int>::max();
  options.resumeDir = resumeDir;
  options.failRank = failRank;
  options.checkSync = checkSync;
  options.bindCores = bindCores == "auto";
  if (!memoryLimit.empty()) {
    ::dpc::Status status = ::dpc::parseMemorySize(
        memoryLimit, 1024.0 * 1024 * 1024, options.memoryLimitBytes);
    if (status.isError()) {
      reportError("--memory-limit: " + status.getMessage());
      return 1;
    }
  }
  options.checkFinite = checkFinite;
  options.tensorboardDir = tensorboardDir;
  options.traceFile = traceFile;
  options.profileFile = profileFile;
  options.failStep = failStep;
  options.hang = failHangs;
  options.perturbRank = perturbRank;
  options.scalingBaseline = scalingBaseline;
  return failed(runArtifact(options)) ? 1 : 0;
}
