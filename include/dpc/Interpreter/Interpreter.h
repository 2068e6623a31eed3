//===- Interpreter.h - The reference interpreter of dpc IR ------*- C++ -*-===//
//
// Executes a function of dpc ops on host tensors. It is the oracle of the
// project: an import is right when its forward matches PyTorch under the
// interpreter, and every later pass is right when the interpreter gives the
// same numbers before and after it. It is written to be obviously correct
// rather than fast.
//
// Besides the dpc ops it runs `func.return`, `func.call` and
// `arith.constant`. Errors at run time (an index out of range, an op it
// does not know) are emitted on the op and make the call fail.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERPRETER_INTERPRETER_H
#define DPC_INTERPRETER_INTERPRETER_H

#include "dpc/Runtime/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::dpc {

using ::dpc::DType;
using ::dpc::HostTensor;

/// The arithmetic of floating-point values.
enum class Precision {
  /// Each float type computes as itself: every op's results are rounded to
  /// their declared type (f16 and bf16 computed in float, then rounded).
  /// Within an op, sums and statistics accumulate in double.
  F32,
  /// Every float computes in double, whatever its type: float arguments
  /// may be of any float dtype and float results come back as f64, and
  /// casts between float types are exact. For gradient checks by finite
  /// differences.
  F64,
};

/// How to interpret.
struct InterpreterOptions {
  Precision precision = Precision::F32;
};

/// The dtype a host tensor must have to be passed for a value of `type`
/// (a ranked tensor type), or std::nullopt for types the interpreter does
/// not support.
std::optional<DType> getDTypeOf(Type type);

/// Why `tensor` cannot be passed for an argument of `type` under
/// `precision` (for example "expected tensor<4x8xf32>, got tensor<4x7xf32>"),
/// or std::nullopt when it can.
std::optional<std::string>
getArgumentMismatch(Type type, const HostTensor &tensor, Precision precision);

/// Runs `func` on `arguments` (one per function argument) and returns its
/// results. Fails, with a diagnostic, on a mismatched argument or an error
/// at run time.
FailureOr<std::vector<HostTensor>>
interpret(func::FuncOp func, ArrayRef<HostTensor> arguments,
          const InterpreterOptions &options = {});

/// Runs one copy of `func` per rank, rank `r` on `perRankArguments[r]`,
/// in one process, and returns the results of every rank. This is how
/// partitioned programs are checked without a cluster; the collective ops
/// that let the ranks exchange values plug in here.
FailureOr<std::vector<std::vector<HostTensor>>>
interpretRanks(func::FuncOp func,
               ArrayRef<std::vector<HostTensor>> perRankArguments,
               const InterpreterOptions &options = {});

/// The same with a program per rank: rank `r` runs `perRankFunctions[r]`.
FailureOr<std::vector<std::vector<HostTensor>>>
interpretRanks(ArrayRef<func::FuncOp> perRankFunctions,
               ArrayRef<std::vector<HostTensor>> perRankArguments,
               const InterpreterOptions &options = {});

/// Whether `func` is the per-rank program of a partitioned step
/// (`dpc.partitioned`): it runs on every device of its mesh at once.
bool isPartitioned(func::FuncOp func);

/// The type of the value a caller passes for argument `index` of `func`, or
/// receives for result `index`: the global type for a partitioned function
/// (its sharding scaled up), else the declared type.
Type getGlobalArgumentType(func::FuncOp func, unsigned index);
Type getGlobalResultType(func::FuncOp func, unsigned index);

/// Runs a partitioned `func` as the whole step: every device of its mesh
/// is a rank (a thread) that receives its block of each global argument,
/// as the argument's sharding says; the results are assembled from the
/// ranks' blocks as the result shardings say, pending partial results
/// reduced by their kind. Replicas of a block must agree bit for bit:
/// ranks that disagree about a value they all hold are an error naming the
/// result and the ranks.
FailureOr<std::vector<HostTensor>>
interpretPartitioned(func::FuncOp func, ArrayRef<HostTensor> arguments,
                     const InterpreterOptions &options = {});

/// The programs of the pipeline stages of the step `name` in `module`
/// (`@<name>.stage<s>`, marked `dpc.pipeline_stage`), by stage; empty when
/// it has none.
SmallVector<func::FuncOp> getPipelineStages(ModuleOp module, StringRef name);

/// A named value.
struct NamedResult {
  std::string name;
  HostTensor value;
};

/// Runs a pipelined step as the whole step: each device of the mesh runs
/// the program of its stage (its coordinate along `pp`) on its blocks of
/// the global arguments (every program takes the same ones); each result,
/// named by its attributes, is assembled from the devices whose program
/// returns it, as for interpretPartitioned.
FailureOr<std::vector<NamedResult>>
interpretPipeline(ArrayRef<func::FuncOp> stages, ArrayRef<HostTensor> arguments,
                  const InterpreterOptions &options = {});

} // namespace mlir::dpc

#endif // DPC_INTERPRETER_INTERPRETER_H
