//===- Executor.h - Runs one function of dpc IR -----------------*- C++ -*-===//
//
// The executor walks a function's block in order, keeps the value of every
// SSA value in a frame (freeing each after its last use), and runs each op
// through the dispatch table, which is the one place that maps op classes
// to kernels. One executor is one rank: simulated ranks are several
// executors that share a communication context.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_INTERPRETER_EXECUTOR_H
#define DPC_LIB_INTERPRETER_EXECUTOR_H

#include "Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::dpc::interpreter {

class CollectiveContext;

/// The rank an executor plays among the simulated ranks of one
/// interpretRanks call. Collective ops find their peers through the
/// context the ranks share (one thread per rank); ops that do not
/// communicate ignore it.
struct RankContext {
  unsigned rank = 0;
  unsigned numRanks = 1;
  CollectiveContext *collectives = nullptr;
};

/// Runs functions on compute tensors, as one rank.
class Executor {
public:
  Executor(const InterpreterOptions &options, RankContext rank)
      : options(options), rank(rank) {}

  /// Runs `func` on `arguments`, one per argument, each already converted
  /// to the compute type of the argument's type. Emits a diagnostic and
  /// fails on an error at run time.
  FailureOr<SmallVector<Tensor>> call(func::FuncOp func,
                                      SmallVector<Tensor> arguments);

  const RankContext &getRank() const { return rank; }

private:
  /// The values of one function invocation.
  struct Frame {
    llvm::DenseMap<Value, Tensor> values;
    /// The op that reads each value last, after which it is freed.
    llvm::DenseMap<Value, Operation *> lastUse;

    /// `value` for `user` to keep: moved out where `user` reads it last
    /// and once (a parameter handed to a call is not copied), else copied.
    Tensor take(Value value, Operation *user);
  };

  /// Checks that the interpreter can run every op of `func`'s body.
  LogicalResult checkSupported(func::FuncOp func);

  /// Runs `op`, storing its results in `frame`.
  LogicalResult execute(Operation *op, Frame &frame);

  /// The dispatch table: the results of `op` computed by its kernel.
  FailureOr<SmallVector<Tensor, 1>> dispatch(Operation *op, Frame &frame);

  InterpreterOptions options;
  RankContext rank;
  /// Collectives this rank has run: the n-th of every rank of a group is
  /// the same op.
  uint64_t collectivesRun = 0;
  /// The depth of nested func.call, bounded so that recursion fails
  /// instead of overflowing the stack.
  unsigned depth = 0;
};

} // namespace mlir::dpc::interpreter

#endif // DPC_LIB_INTERPRETER_EXECUTOR_H
