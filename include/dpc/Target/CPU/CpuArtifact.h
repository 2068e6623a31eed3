//===- CpuArtifact.h - A step compiled for CPUs, as a directory -*- C++ -*-===//
//
// `dpc-opt ... --emit=cpu -o model.dpc` (or --emit=cuda) writes a
// directory that dpc-run trains from:
//   manifest.json  the mesh, the plan, the groups of every collective, and
//                  for every program (one, or one per pipeline stage) the
//                  ranks that run it and the block of every argument and
//                  result each rank holds;
//   model.cpp      the generated C++ (model.cu for CUDA; kept for reading
//                  and debugging);
//   libmodel.so    it, compiled against the runtime's kernels;
//   initial.npz    the initial parameters and state, when known (an ONNX
//                  input's initializers).
// The directory is built beside its destination and renamed into place,
// so a failed compile leaves no half-written artifact.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_CPUARTIFACT_H
#define DPC_TARGET_CPU_CPUARTIFACT_H

#include "dpc/Runtime/HostTensor.h"
#include "dpc/Target/CPU/CppEmitter.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::dpc {

struct CpuArtifactOptions {
  /// The step to compile (its pipeline stages when it has them).
  std::string function = "train_step";
  /// Initial values of parameters and state, by name (may be empty).
  std::vector<::dpc::NamedTensor> initialValues;
  /// The C++ compiler; empty: $CXX, else c++.
  std::string compiler;
  /// The CPU the library is compiled for (the compiler's -march): by
  /// default the building machine's own. The manifest lists the extensions
  /// it may use, and dpc-run refuses a CPU that lacks one.
  std::string cpuArch = "native";
  /// CPU, or CUDA (model.cu compiled by nvcc: $NVCC, else the toolkit
  /// found at configure time).
  EmitTarget target = EmitTarget::Cpu;
  /// For CUDA: the GPU architectures nvcc compiles for, as compute
  /// capabilities without the dot (80: A100, 90: H100 and H200), with the
  /// PTX of the last for later GPUs.
  std::vector<std::string> cudaArchs = {"80", "90"};
  /// For CUDA: compile model.cu with the host C++ compiler and
  /// DPC_CUDA_EMULATION instead, into a library dpc-run runs on the CPU
  /// (testing the generated program where there is no GPU).
  bool emulate = false;
};

/// Writes the generated C++ of `module`'s step `function` (what
/// model.cpp holds) to `os`.
LogicalResult writeCpuSource(ModuleOp module, raw_ostream &os,
                             StringRef function,
                             EmitTarget target = EmitTarget::Cpu);

/// Compiles `module`'s step into the artifact directory `path`.
LogicalResult writeCpuArtifact(ModuleOp module, StringRef path,
                               const CpuArtifactOptions &options);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_CPUARTIFACT_H
