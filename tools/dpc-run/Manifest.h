//===- Manifest.h - What an artifact says it holds --------------*- C++ -*-===//
//
// manifest.json as dpc-run reads it (lib/Target/CPU/CpuArtifact.cpp writes
// it): the mesh's groups, and for every program the ranks that run it and
// where each rank's block of every argument and result starts.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_DPC_RUN_MANIFEST_H
#define DPC_TOOLS_DPC_RUN_MANIFEST_H

#include "dpc/Runtime/HostTensor.h"
#include "dpc/Runtime/Status.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::dpc::artifact {

// The runtime's names, used throughout dpc-run's artifact side.
using ::dpc::DType;
using ::dpc::HostTensor;
using ::dpc::Status;
using llvm::StringRef;
namespace json = llvm::json;

/// A tensor a program takes or returns.
struct TensorSpec {
  std::string role, name;
  ::dpc::DType dtype = ::dpc::DType::F32;
  std::vector<int64_t> shape, localShape;
  /// Per rank, where its block starts.
  std::vector<std::vector<int64_t>> blocks;
  /// Pending partial reductions: kind and the groups of ranks.
  std::vector<std::pair<std::string, std::vector<std::vector<int>>>> partial;

  /// For integer inputs: synthetic values are drawn from [0, bound).
  int64_t bound = 2;
  /// For a program's result: the argument (an index into the manifest's
  /// arguments) whose buffer it is written into, or -1 for a buffer of its
  /// own.
  int updates = -1;

  std::string key() const { return role + ":" + name; }
};

/// An op a CPU program marks as it finishes (ProgramAbi.h), with the
/// work the cost model sees in it and the time it predicts.
struct MarkedOp {
  std::string op, at;
  double flops = 0, bytes = 0;
  int64_t fused = 0;
  /// Seconds on the plan's cluster (a collective's: its transfer); none
  /// when the artifact was compiled without a plan.
  std::optional<double> predicted;
  bool collective = false;
};

struct ProgramSpec {
  std::string symbol;
  std::vector<int> ranks;
  int64_t arenaBytes = 0;
  std::vector<TensorSpec> results;
  /// In the order the program marks them: `mark(k)` ends ops[k].
  std::vector<MarkedOp> ops;
  /// Per argument of the manifest, whether the ranks running this program
  /// hold it: the program reads it or returns its next value. A pipeline
  /// stage holds its own parameters, state and inputs, not the others'.
  std::vector<bool> holds;
};

struct Manifest {
  std::string dir, library, step, initial;
  /// "cpu" or "cuda". A CUDA program compiled under emulation has the
  /// same entry points, with host memory for its "device".
  std::string backend = "cpu";
  bool emulated = false;
  /// Whether the ranks' tensors live in a device's memory.
  bool onDevice() const { return backend == "cuda"; }
  int worldSize = 1;
  std::vector<std::vector<std::vector<int>>> groups;
  std::vector<TensorSpec> arguments;
  std::vector<ProgramSpec> programs;
  double predictedStepSeconds = 0, predictedPeakBytes = 0;
  /// Per program (pipeline stage), the memory the plan predicts for each
  /// of its ranks; empty where the plan does not say.
  std::vector<double> predictedStageBytes;
  /// The learning rate the step was built with.
  double defaultLr = 0.01;
  /// The step's micro-batches: above 1, each input is [micro-batches,
  /// batch, ...], micro-batch k its row k.
  int64_t microBatches = 1;

  /// The memory the plan predicts for rank `rank` (its stage's; the peak
  /// where the plan gives no stages), or 0.
  double getPredictedBytes(int rank) const {
    const ProgramSpec *program = getProgram(rank);
    size_t index = program ? size_t(program - programs.data()) : 0;
    return program && index < predictedStageBytes.size()
               ? predictedStageBytes[index]
               : predictedPeakBytes;
  }

  /// The program rank `rank` runs (null if none).
  const ProgramSpec *getProgram(int rank) const {
    for (const ProgramSpec &candidate : programs)
      if (std::find(candidate.ranks.begin(), candidate.ranks.end(), rank) !=
          candidate.ranks.end())
        return &candidate;
    return nullptr;
  }
};

/// Reads DIR/manifest.json; errors name the file and what is wrong.
::dpc::Status readManifest(const std::string &dir, Manifest &manifest);

/// The element type dpc-run holds a manifest dtype in.
std::optional<::dpc::DType> parseDType(llvm::StringRef name);

/// A JSON list of integers.
bool readInts(const llvm::json::Value *value, std::vector<int64_t> &out);

/// The bytes rank `rank` holds in tensors: its arguments, results and
/// arena, which the manifest gives exactly.
double getTensorBytes(const Manifest &manifest, int rank);

} // namespace mlir::dpc::artifact

#endif // DPC_TOOLS_DPC_RUN_MANIFEST_H
