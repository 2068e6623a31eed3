//===- megatron_h100.cpp - The cost model against Megatron-LM on H100 -----===//
//
// Evaluates every row of Megatron-LM's H100 table (../shared/REFERENCE.md)
// at its published (TP, PP, DP) with dpc's cost model and prints the
// predicted TFLOP/s per GPU next to the published one. A GPT layer's FLOPs,
// bytes and communication are derived analytically from (h, s, heads, V,
// B), as the IR-level model would count them from the layer's ops; the
// times come from the cost model's roofline, collective and pipeline
// formulas on the `h100-sxm` preset. What Megatron-LM does that an op-level
// count does not see (flash attention, communication overlap) is stated
// where it enters, in docs/cost-model.md.
//
//   dpc-bench-megatron [--cluster=h100-sxm|FILE.json] [--verbose]
//
//===----------------------------------------------------------------------===//

#include "dpc/Analysis/CostModel/Cluster.h"
#include "dpc/Analysis/CostModel/CommunicationCost.h"
#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "dpc/Analysis/CostModel/MemoryCost.h"
#include "dpc/Analysis/CostModel/PipelineCost.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dpc;

static llvm::cl::opt<std::string>
    clusterSpec("cluster", llvm::cl::init("h100-sxm"),
                llvm::cl::desc("Cluster preset or FILE.json"));

static llvm::cl::opt<bool>
    verbose("verbose", llvm::cl::desc("Print the time breakdown of each row"));

// Causal flash attention (fwd + bwd) reaches about half the FLOP rate of a
// GEMM on H100: FlashAttention-2 ~350 TFLOP/s against cuBLAS ~700.
static llvm::cl::opt<double> attentionEfficiency(
    "attention-efficiency", llvm::cl::init(0.5),
    llvm::cl::desc("Flash attention's FLOP rate relative to a GEMM's"));

// Megatron-LM's --tp-comm-overlap splits each all-gather/reduce-scatter
// into chunks pipelined with the GEMM next to it; the first and last chunk,
// and the GEMM slowed by sharing SMs, stay exposed: about half.
static llvm::cl::opt<double> exposedCommunication(
    "exposed-communication", llvm::cl::init(0.5),
    llvm::cl::desc("Fraction of the tensor-parallel collectives left on the "
                   "critical path"));

static llvm::cl::opt<double> computeEfficiency(
    "compute-efficiency", llvm::cl::init(0),
    llvm::cl::desc("Override the cluster's compute efficiency"));
static llvm::cl::opt<double> memoryEfficiency(
    "memory-efficiency", llvm::cl::init(0),
    llvm::cl::desc("Override the cluster's memory efficiency"));
static llvm::cl::opt<double> communicationEfficiency(
    "communication-efficiency", llvm::cl::init(0),
    llvm::cl::desc("Override the cluster's communication efficiency"));

// Stage-to-stage sends sit between a chunk's forward (backward) and the
// next stage's: on the critical path.
static llvm::cl::opt<double> exposedP2P(
    "exposed-p2p", llvm::cl::init(1.0),
    llvm::cl::desc("Fraction of the pipeline's sends on the critical path"));
static llvm::cl::opt<bool> dpWindowLast(
    "dp-window-last",
    llvm::cl::desc("Hide data-parallel communication only behind one "
                   "micro-batch (default: behind the whole step's passes)"));

static llvm::cl::opt<double> gradientBytes(
    "gradient-bytes", llvm::cl::init(4),
    llvm::cl::desc("Bytes per gradient element in the data-parallel "
                   "reduce-scatter (4: fp32 main grads, 2: bf16)"));

namespace {

/// One row of the published table.
struct Row {
  const char *model;
  int64_t heads, hidden, layers, tp, pp, dp, batch;
  double publishedTflops;
};

// Megatron-LM README, "Training Speed and Scalability" (H100, vocabulary
// 131072, sequence 4096).
const Row kRows[] = {
    {"1.7B", 16, 2048, 24, 1, 1, 48, 192, 408.8},
    {"7.1B", 32, 4096, 30, 2, 1, 48, 192, 465.9},
    {"16B", 48, 6144, 32, 4, 1, 48, 192, 489.1},
    {"32B", 56, 7168, 48, 8, 1, 48, 192, 459.6},
    {"70B", 64, 8192, 84, 8, 2, 48, 384, 419.7},
    {"119B", 80, 10240, 92, 8, 4, 48, 768, 420.5},
    {"177B", 96, 12288, 96, 8, 6, 48, 1152, 432.8},
    {"314B", 128, 16384, 96, 8, 8, 48, 1536, 474.4},
    {"462B", 144, 18432, 112, 8, 16, 48, 3072, 459.9},
};

constexpr double kVocabulary = 131072;
constexpr double kSequence = 4096;
/// Megatron-LM's default micro-batch size.
constexpr double kMicroBatch = 1;
/// bf16 activations and parameters.
constexpr double kElementBytes = 2;

/// One matrix multiplication [M, K] x [K, N] in bf16, as dpc.matmul
/// reports it through CostOpInterface: 2MNK FLOPs, (MK + KN + MN) elements
/// moved.
struct Gemm {
  double m, k, n;
  double getFlops() const { return 2 * m * n * k; }
  double getBytes() const { return (m * k + k * n + m * n) * kElementBytes; }
};

/// Work of one layer (or the head) for one micro-batch on one GPU,
/// forward. The backward pass runs two GEMMs (data and weight gradient) of
/// the same size per forward GEMM, and twice the memory-bound traffic.
struct Work {
  SmallVector<Gemm, 4> gemms;
  /// Attention score FLOPs (QK^T and AV) as executed.
  double attentionFlops = 0;
  /// Bytes of the memory-bound ops.
  double elementwiseBytes = 0;
};

/// One transformer layer, tensor- and sequence-parallel over `tp`.
Work getLayerWork(const Row &row) {
  double b = kMicroBatch, s = kSequence, h = row.hidden, t = row.tp;
  Work work;
  // Column-parallel QKV and MLP up-projection, row-parallel output and MLP
  // down-projection: 24bsh^2 / t FLOPs together.
  work.gemms = {{b * s, h, 3 * h / t},
                {b * s, h / t, h},
                {b * s, h, 4 * h / t},
                {b * s, 4 * h / t, h}};
  // QK^T and AV are 4bs^2h; a causal flash-attention kernel skips the
  // masked half of the blocks.
  work.attentionFlops = 4 * b * s * s * h / t / 2;
  // Memory-bound ops on bsh elements (sequence parallel: split over tp):
  // two layer norms (read + write), two residual adds (2 reads + write),
  // bias+GeLU on 4h (read + write, 4h wide, column-parallel).
  double elements = b * s * h / t;
  work.elementwiseBytes = (2 * 2 + 2 * 3 + 4 * 2) * elements * kElementBytes;
  return work;
}

/// The output layer and loss (vocabulary-parallel over tp).
Work getHeadWork(const Row &row) {
  double b = kMicroBatch, s = kSequence, h = row.hidden, t = row.tp;
  Work work;
  work.gemms = {{b * s, h, kVocabulary / t}};
  // Cross-entropy over fp32 logits: cast them, then max, exp-sum and the
  // gradient read them (vocabulary-parallel fused kernel).
  work.elementwiseBytes = 4 * b * s * kVocabulary / t * 4;
  return work;
}

/// Forward time of `work` on one GPU.
double getForwardTime(const Work &work, const Cluster &cluster) {
  double time = 0;
  for (const Gemm &gemm : work.gemms)
    time += getRooflineEstimate(gemm.getFlops(), gemm.getBytes(),
                                NumericType::BF16, cluster)
                .time;
  time += getRooflineEstimate(work.attentionFlops / attentionEfficiency, 0,
                              NumericType::BF16, cluster)
              .time;
  time +=
      getRooflineEstimate(0, work.elementwiseBytes, NumericType::BF16, cluster)
          .time;
  return time;
}

/// Parameters of one layer: 12h^2 + 13h.
double getLayerParameters(double h) { return 12 * h * h + 13 * h; }

struct Prediction {
  double stepTime = 0;
  double tflops = 0;
  int64_t microBatches = 0;
  int64_t chunks = 1;
  double memoryBytes = 0;
  // Breakdown of the step, seconds.
  double compute = 0, tensorParallel = 0, pipelineP2P = 0, bubble = 0,
         dataParallel = 0, optimizer = 0;
};

Prediction predict(const Row &row, int64_t chunks, const Cluster &cluster) {
  // Megatron-LM's rank order: TP fastest, then DP, then PP. Outermost
  // first: PP x DP x TP.
  Mesh mesh({row.pp, row.dp, row.tp});
  const unsigned ppAxis = 0, dpAxis = 1, tpAxis = 2;
  double h = row.hidden, s = kSequence, b = kMicroBatch;
  int64_t layersPerStage = row.layers / row.pp;
  int64_t m = row.batch / (row.dp * static_cast<int64_t>(kMicroBatch));

  // Per layer, per micro-batch.
  Work layer = getLayerWork(row);
  double layerForward = getForwardTime(layer, cluster);
  // Sequence parallelism: 2 all-gathers and 2 reduce-scatters of the bsh
  // activations forward, as many backward.
  double activationBytes = b * s * h * kElementBytes;
  double tpCollectives =
      4 * (getBestCollective(CollectiveKind::AllGather, activationBytes, mesh,
                             {tpAxis}, cluster)
               .time +
           getBestCollective(CollectiveKind::ReduceScatter, activationBytes,
                             mesh, {tpAxis}, cluster)
               .time);
  double tpExposed = exposedCommunication * tpCollectives;

  // The last stage also runs the head (the first one's embedding lookup is
  // negligible); the pipeline runs at the pace of the slowest stage.
  double headForward = getForwardTime(getHeadWork(row), cluster);
  double stageForward = layersPerStage * layerForward + headForward;
  // Backward: twice the forward's FLOPs and bytes.
  double stageBackward = 2 * stageForward;
  double stageTp = layersPerStage * tpExposed;

  // Pipeline: each chunk boundary sends activations forward and gradients
  // backward (sequence-parallel: 1/tp of bsh each GPU).
  double p2p = 0;
  if (row.pp > 1)
    p2p = exposedP2P * 2 * chunks *
          getCollectiveTime(CollectiveKind::SendRecv, CollectiveAlgorithm::Ring,
                            activationBytes / row.tp, mesh, {ppAxis}, cluster);

  PipelineSchedule schedule = chunks > 1 ? PipelineSchedule::Interleaved1F1B
                                         : PipelineSchedule::OneFOneB;
  double perMicroBatch = stageForward + stageBackward + stageTp + p2p;
  // Half of the TP collectives and P2P transfers are in each direction.
  double pipeline =
      getPipelineTime(schedule, row.pp, m, stageForward + (stageTp + p2p) / 2,
                      stageBackward + (stageTp + p2p) / 2, chunks);

  // Data parallel with the distributed optimizer (ZeRO-1): reduce-scatter
  // the gradients, all-gather the bf16 parameters, bucket by bucket,
  // overlapped with the backward (forward) passes: exposed only beyond them.
  double stageParameters =
      (layersPerStage * getLayerParameters(h) + h * kVocabulary) / row.tp;
  double reduceScatter = getBestCollective(CollectiveKind::ReduceScatter,
                                           stageParameters * gradientBytes,
                                           mesh, {dpAxis}, cluster)
                             .time;
  double allGather =
      getBestCollective(CollectiveKind::AllGather, stageParameters * 2, mesh,
                        {dpAxis}, cluster)
          .time;
  double bubble = pipeline - m * perMicroBatch;
  // --dp-window-last: only the last micro-batch's backward and the first
  // one's forward hide them (Megatron-LM's bucketing with gradient
  // accumulation), plus the half of the bubble at that end.
  double window = dpWindowLast ? 1.0 : static_cast<double>(m);
  double dataParallel =
      std::max(0.0, reduceScatter - window * stageBackward - bubble / 2) +
      std::max(0.0, allGather - window * stageForward - bubble / 2);
  // Adam on the local shard: read fp32 gradient, master, two moments;
  // write master, moments and the bf16 parameter (30 bytes a parameter).
  double optimizer = getRooflineEstimate(0, stageParameters / row.dp * 30,
                                         NumericType::F32, cluster)
                         .time;

  Prediction p;
  p.microBatches = m;
  p.chunks = chunks;
  p.stepTime = pipeline + dataParallel + optimizer;
  double modelFlops =
      getGptModelFlops(row.batch, s, row.layers, h, kVocabulary);
  int64_t gpus = row.tp * row.pp * row.dp;
  p.tflops = getFlopsPerDevice(modelFlops, p.stepTime, gpus) / 1e12;
  p.compute = m * (stageForward + stageBackward);
  p.tensorParallel = m * stageTp;
  p.pipelineP2P = m * p2p;
  p.bubble = bubble;
  p.dataParallel = dataParallel;
  p.optimizer = optimizer;

  // Memory of stage 0 (the most activations in flight).
  MemoryBreakdown memory = getModelStateMemory(
      stageParameters, ModelStateBytes{2, 4, 12}, /*zeroStage=*/1, row.dp);
  // Korthikanti et al. with sequence parallelism and flash attention:
  // 34 sbh / t bytes per layer.
  double layerActivations = 34 * s * b * h / row.tp;
  memory.activations = getActivationMemory(
      layerActivations, s * b * h * kElementBytes / row.tp, layersPerStage,
      getMicroBatchesInFlight(schedule, row.pp, 0, m, chunks),
      /*recompute=*/false);
  p.memoryBytes = memory.getTotal();
  return p;
}

/// The best interleaving depth: Megatron-LM runs are tuned over it, and it
/// must divide the layers of a stage (and need m to be a multiple of p).
Prediction predictBest(const Row &row, const Cluster &cluster) {
  Prediction best = predict(row, 1, cluster);
  int64_t layersPerStage = row.layers / row.pp;
  int64_t m = row.batch / row.dp;
  if (row.pp == 1 || m % row.pp != 0)
    return best;
  for (int64_t v = 2; v <= layersPerStage; ++v) {
    if (layersPerStage % v != 0)
      continue;
    Prediction p = predict(row, v, cluster);
    if (p.stepTime < best.stepTime &&
        p.memoryBytes <= cluster.device.memoryCapacity)
      best = p;
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Megatron-LM's H100 table against dpc's cost model\n");
  std::string error;
  FailureOr<Cluster> cluster = resolveCluster(clusterSpec, error);
  if (failed(cluster)) {
    llvm::errs() << "dpc-bench-megatron: " << error << "\n";
    return 1;
  }
  if (computeEfficiency > 0)
    cluster->efficiency.compute = computeEfficiency;
  if (memoryEfficiency > 0)
    cluster->efficiency.memory = memoryEfficiency;
  if (communicationEfficiency > 0)
    cluster->efficiency.communication = communicationEfficiency;
  llvm::outs() << llvm::format(
      "cluster %s: efficiency compute %.2f, memory %.2f, communication "
      "%.2f; attention %.2f of a GEMM's rate; exposed TP %.2f, P2P %.2f\n\n",
      cluster->name.c_str(), cluster->efficiency.compute,
      cluster->efficiency.memory, cluster->efficiency.communication,
      attentionEfficiency.getValue(), exposedCommunication.getValue(),
      exposedP2P.getValue());
  llvm::outs()
      << "| model | TP | PP | DP | micro-batches | chunks | memory "
         "GB | predicted TFLOP/s | published | ratio | predicted MFU |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n";
  double worst = 0;
  for (const Row &row : kRows) {
    Prediction p = predictBest(row, *cluster);
    double ratio = p.tflops / row.publishedTflops;
    worst = std::max(worst, std::fabs(ratio - 1));
    llvm::outs() << llvm::format(
        "| %s | %lld | %lld | %lld | %lld | %lld | %.1f | %.1f | %.1f | %.3f "
        "| %.1f%% |\n",
        row.model, (long long)row.tp, (long long)row.pp, (long long)row.dp,
        (long long)p.microBatches, (long long)p.chunks, p.memoryBytes / 1e9,
        p.tflops, row.publishedTflops, ratio,
        100 * p.tflops * 1e12 /
            cluster->device.getPeakFlops(NumericType::BF16));
    if (verbose)
      llvm::outs() << llvm::format(
          "|   step %.3f s: compute %.3f, TP %.3f, P2P %.3f, bubble %.3f, "
          "DP %.3f, optimizer %.4f |\n",
          p.stepTime, p.compute, p.tensorParallel, p.pipelineP2P, p.bubble,
          p.dataParallel, p.optimizer);
  }
  llvm::outs() << llvm::format("\nlargest deviation: %.1f%%\n", worst * 100);
  return 0;
}
