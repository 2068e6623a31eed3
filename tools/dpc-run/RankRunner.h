//===- RankRunner.h - One rank of a training job ----------------*- C++ -*-===//
//
// A rank connects its communicator, opens the artifact's library, cuts its
// blocks out of the initial values, and runs its program once per step,
// feeding the updated parameters, state and optimizer state back as the
// next step's arguments; it writes checkpoints, and rank 0 reports.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_RANKRUNNER_H
#define DPC_TOOLS_DPC_RUN_RANKRUNNER_H

#include "ArtifactRun.h"
#include "Manifest.h"
#include "TrainingData.h"

#include "dpc/Runtime/MeshCommunicator.h"
#include "dpc/Runtime/ProgramAbi.h"
#include "dpc/Runtime/TensorBoard.h"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>

namespace mlir::dpc::artifact {

using Clock = std::chrono::steady_clock;

/// What the program's host callbacks need: the communicator and the time
/// spent waiting for it.
struct HostState {
  ::dpc::MeshCommunicator *communicator = nullptr;
  std::string error;
  double waitSeconds = 0;
  /// For --trace: the name of each ticket's collective, and the waits.
  bool tracing = false;
  std::map<int64_t, std::string> names;
  struct Span {
    std::string name, category;
    double begin, end; // seconds since the run started
  };
  std::vector<Span> spans;
  Clock::time_point origin = Clock::now();
  /// For --profile: the seconds each marked op took over the timed steps,
  /// and when the previous op finished.
  bool profiling = false, timingOps = false;
  std::vector<double> opSeconds;
  Clock::time_point lastMark;

  double now() const {
    return std::chrono::duration<double>(Clock::now() - origin).count();
  }
};

/// Writes `text` to stderr in one write: the lines of ranks that share a
/// terminal or log never interleave mid-line.
void writeToStderr(const std::string &text);

/// The host callbacks of ProgramAbi.h, on a HostState.
int64_t hostStart(void *self, const DpcCollectiveCall *call);
int32_t hostWait(void *self, int64_t ticket);
int32_t hostGroupPosition(void *self, int32_t group);
void hostFail(void *self, const char *message);
void hostMark(void *self, int32_t op);

class RankRunner {
public:
  RankRunner(const ArtifactRunOptions &options, const Manifest &manifest,
             int rank, int ranksOnNode)
      : options(options), manifest(manifest), rank(rank),
        ranksOnNode(ranksOnNode) {}

  /// Runs every step; `report` is rank 0's JSON report.
  ::dpc::Status run(const ::dpc::MeshCommunicator::Options &connection,
                    std::string &report);

private:
  ::dpc::Status loadLibrary();
  /// For a CUDA artifact: this rank's GPU and NCCL communicators, from an
  /// id rank 0 makes and the job's token-checked rendezvous shares.
  ::dpc::Status openDevice(void *library);
  /// Copies every argument to its GPU buffer (allocating them first).
  ::dpc::Status uploadArguments();
  /// Brings the host copies of the arguments up to date after steps ran
  /// on the GPU (before checkpoints, checks and outputs read them).
  ::dpc::Status downloadArguments();
  ::dpc::Status copyToDevice(void *to, const std::vector<std::byte> &from);
  ::dpc::Status copyToHost(std::vector<std::byte> &to, const void *from);
  ::dpc::Status initializeArguments();
  ::dpc::Status runStep(int step, double lr, double &loss, bool &hasLoss);
  /// The global values of every parameter, state and optimizer slot on
  /// rank 0 (empty elsewhere).
  ::dpc::Status gatherState(std::vector<::dpc::NamedTensor> &global);
  ::dpc::Status writeOutputs(const std::vector<::dpc::NamedTensor> &global,
                             const std::string &dir);
  /// Gathers every rank's spans; rank 0 writes them as a Chrome trace.
  ::dpc::Status writeTrace();
  /// Gathers every rank's op times over `steps` timed steps that took
  /// `seconds`; rank 0 writes them beside the predictions and prints a
  /// summary.
  ::dpc::Status writeProfile(int steps, double seconds);
  /// Whether this rank keeps the manifest's argument `index` up to date:
  /// it holds it, and its program returns it or no program does.
  bool keepsUpToDate(size_t index) const;
  /// Writes this rank's shard of the checkpoint of step `step`; rank 0
  /// then publishes it (Checkpoint layout: see saveCheckpoint).
  ::dpc::Status saveCheckpoint(int step);

  const ArtifactRunOptions &options;
  const Manifest &manifest;
  int rank, ranksOnNode;
  /// The threads the kernel libraries run on, as they report them (0 where
  /// the artifact does not load the library).
  int openMpThreads = 0, blasThreads = 0;
  std::unique_ptr<::dpc::MeshCommunicator> communicator;
  HostState host;
  const ProgramSpec *program = nullptr;
  DpcProgramFn function = nullptr;
  std::vector<std::vector<std::byte>> arguments, results;
  std::vector<char, std::allocator<char>> arenaStorage;
  char *arena = nullptr;
  /// A CUDA artifact's entry points, device context and GPU buffers: the
  /// arguments and results live there between steps; the host copies
  /// above are filled before a step (inputs) and read after it (loss),
  /// and brought up to date when the host needs the rest.
  struct {
    DpcCudaAllocateFn allocate = nullptr;
    DpcCudaFreeFn free = nullptr;
    DpcCudaCopyFn copy = nullptr;
  } cuda;
  void *device = nullptr;
  std::vector<void *> deviceArguments, deviceResults;
  bool hostArgumentsStale = false;
  DataSource data;
  int firstStep = 1;
  /// The step's gradient norm, when the program returns it (clipping).
  double gradNorm = std::nan("");
  std::unique_ptr<::dpc::TensorBoardWriter> tensorboard;
  /// Compares the replicas of each block gathered; names the first that
  /// differ.
};

} // namespace mlir::dpc::artifact

#endif // DPC_TOOLS_DPC_RUN_RANKRUNNER_H
