//===- CppEmitter.h - A per-rank program as C++ -----------------*- C++ -*-===//
//
// Writes a partitioned (or single-device) step function as one C++
// function with the signature of DpcProgramFn (runtime/include/dpc/Runtime/
// ProgramAbi.h). Elementwise ops are generated as loops, a chain of them
// fused into the loop of its last op; the other ops call the kernels of
// runtime/include/dpc/Runtime/CpuKernels.h; collectives go through the
// host. Values live in an arena laid out by planBuffers.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_CPPEMITTER_H
#define DPC_TARGET_CPU_CPPEMITTER_H

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::dpc {

/// What the generated C++ is for: the CPU (loops, calls to CpuKernels.h),
/// or CUDA (a kernel per loop and calls to Cuda/Kernels.h, compiled by
/// nvcc, or on the host with DPC_CUDA_EMULATION).
enum class EmitTarget { Cpu, Cuda };

/// The communicating groups programs use: each distinct (mesh, axes) gets
/// an index, the `group` of its collectives at run time.
class GroupTable {
public:
  int getIndex(MeshOp mesh, ArrayRef<StringRef> axes);
  struct Entry {
    MeshOp mesh;
    std::vector<std::string> axes;
  };
  ArrayRef<Entry> getEntries() const { return entries; }

private:
  std::vector<Entry> entries;
};

/// What the emitter learnt about one program.
struct EmittedProgram {
  std::string symbol;
  int64_t arenaBytes = 0;
  /// The arena without reuse between values.
  int64_t unsharedBytes = 0;
  /// The most bytes alive at one op (the arena without gaps).
  int64_t liveBytes = 0;
  /// Ops generated as loops, of which fused into a consumer's loop.
  int64_t loops = 0, fusedOps = 0;
  /// For each result, the argument whose buffer the caller passes for it
  /// (getUpdatedArguments).
  SmallVector<std::optional<unsigned>> updatedArguments;
  /// The ops the program marks as it finishes each (ProgramAbi.h's
  /// `mark`), in order: the CPU program's ops that emit code, the return
  /// last. Empty for CUDA, whose kernels finish after their launch.
  SmallVector<Operation *> markedOps;
  /// The ops computed inside their users (Fusion.h's getFusedOps).
  llvm::DenseSet<Operation *> fusedIntoUsers;
};

/// The includes and helpers every emitted file starts with.
void emitCppPrologue(llvm::raw_ostream &os,
                     EmitTarget target = EmitTarget::Cpu);
/// The library's dpc_program_abi_version, once per library.
void emitCppAbiVersion(llvm::raw_ostream &os);

/// Writes `func` (one block, no calls) as the extern "C" function
/// `symbol`. The program is cut into functions of a few thousand lines
/// each, called in turn; with `separateParts` (CPU only) each goes there
/// as a translation unit of its own (to follow the prologue), so that
/// they compile in parallel. Fails with a diagnostic on an op the target does
/// not compile.
LogicalResult
emitCppProgram(func::FuncOp func, StringRef symbol, GroupTable &groups,
               llvm::raw_ostream &os, EmittedProgram &info,
               EmitTarget target = EmitTarget::Cpu,
               SmallVectorImpl<std::string> *separateParts = nullptr);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_CPPEMITTER_H
