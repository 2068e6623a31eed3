//===- ArtifactRun.h - Training from a compiled artifact --------*- C++ -*-===//
//
// `dpc-run model.dpc`: launches the ranks of the artifact's mesh (forked
// on this node, or one per process under torchrun, mpirun or Slurm), meets
// them through a token-checked rendezvous, loads the library, and trains:
// each rank runs its program on its blocks of the parameters, optimizer
// state and batch, step after step, and rank 0 reports.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_ARTIFACTRUN_H
#define DPC_TOOLS_DPC_RUN_ARTIFACTRUN_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::dpc {

struct ArtifactRunOptions {
  std::string artifact;
  /// Ranks forked on this node; 0: one per rank of the mesh (single node),
  /// or 1 when a launcher's environment says this process is a rank.
  int procsPerNode = 0;
  int nodes = 1, nodeRank = 0;
  /// HOST:PORT of the rendezvous (node 0); empty: this node, any port.
  std::string masterAddress;
  int steps = 10;
  uint64_t seed = 0;
  /// "synthetic" or a .npz of global batches.
  std::string data = "synthetic";
  /// Initial parameters and state (.npz of global tensors); empty: the
  /// artifact's.
  std::string init;
  double lr = -1; // < 0: the step's default
  std::string lrSchedule = "constant";
  int warmupSteps = 0;
  /// Where the final parameters, state and optimizer state go (.npy each).
  std::string outputDir;
  /// A JSON report (losses, times) for scripts.
  std::string reportJson;
  /// Bounds every collective and the rendezvous.
  double timeoutSeconds = 60;
  std::string saveDir;
  int saveEvery = 0;
  std::string resumeDir;
  /// Whether each rank forked here is bound to its own share of the CPUs
  /// (where there are at least as many as ranks).
  bool bindCores = true;
  /// Whether replicas of every parameter block are compared after each
  /// step (bit for bit).
  bool checkSync = false;
  /// Whether every op's float results are checked for NaN and Inf.
  bool checkFinite = false;
  /// TensorBoard event files (rank 0) and a Chrome trace of every rank.
  std::string tensorboardDir, traceFile;
  /// Every op of every rank timed and set beside its predicted time
  /// (JSON; rank 0 prints a summary).
  std::string profileFile;
  /// Memory the ranks of this node may hold in tensors, in bytes (0: what
  /// the system has available).
  double memoryLimitBytes = 0;
  /// For tests: this rank exits at the start of the given step.
  int failRank = -1, failStep = 0;
  /// For tests: the failing rank hangs instead of exiting.
  bool hang = false;
  /// For tests: this rank perturbs its copy of the first parameter after
  /// step 1, as a replica that diverged would.
  int perturbRank = -1;
  /// A one-rank artifact of the same step: run first, for the scaling
  /// efficiency of this run against it.
  std::string scalingBaseline;
};

/// Runs the artifact; reports errors on stderr.
LogicalResult runArtifact(const ArtifactRunOptions &options);

} // namespace mlir::dpc

#endif // DPC_TOOLS_DPC_RUN_ARTIFACTRUN_H
