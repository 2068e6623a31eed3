//===- Interpreter.cpp - The reference interpreter of dpc IR --------------===//
//
// The public entry points: check the host tensors passed as arguments
// against the function's signature, convert them to compute tensors, run
// an executor per rank, and convert the results back.
//
//===----------------------------------------------------------------------===//

#include "dpc/Interpreter/Interpreter.h"

#include "Executor.h"
#include "Tensor.h"

#include "dpc/Dialect/Dpc/IR/DpcDialect.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

/// Runs `func` on `arguments` as rank `rank`.
static FailureOr<std::vector<HostTensor>>
runRank(func::FuncOp func, ArrayRef<HostTensor> arguments,
        const InterpreterOptions &options, RankContext rank) {
  FunctionType type = func.getFunctionType();
  if (arguments.size() != type.getNumInputs())
    return func.emitError("expects ")
           << type.getNumInputs() << " arguments, got " << arguments.size();
  SmallVector<Tensor> tensors;
  for (auto [index, argumentType, host] :
       llvm::enumerate(type.getInputs(), arguments)) {
    if (std::optional<std::string> mismatch =
            getArgumentMismatch(argumentType, host, options.precision)) {
      std::string name = getArgumentName(func, index).str();
      return func.emitError("argument #")
             << index << (name.empty() ? "" : " ('" + name + "')") << ": "
             << *mismatch;
    }
    tensors.push_back(fromHostTensor(host, argumentType, options.precision));
    // Host data may break the invariants of narrow types (an i1 of 2).
    conformToType(tensors.back(),
                  cast<RankedTensorType>(argumentType).getElementType(),
                  options.precision);
  }

  Executor executor(options, rank);
  FailureOr<SmallVector<Tensor>> results =
      executor.call(func, std::move(tensors));
  if (failed(results))
    return failure();
  std::vector<HostTensor> hostResults;
  for (auto [resultType, tensor] : llvm::zip_equal(type.getResults(), *results))
    hostResults.push_back(toHostTensor(tensor, resultType, options.precision));
  return hostResults;
}

FailureOr<std::vector<HostTensor>>
mlir::dpc::interpret(func::FuncOp func, ArrayRef<HostTensor> arguments,
                     const InterpreterOptions &options) {
  return runRank(func, arguments, options, RankContext());
}

FailureOr<std::vector<std::vector<HostTensor>>>
mlir::dpc::interpretRanks(func::FuncOp func,
                          ArrayRef<std::vector<HostTensor>> perRankArguments,
                          const InterpreterOptions &options) {
  // Without collectives the ranks cannot observe each other, so they run
  // one after the other. Collectives will need them to run concurrently
  // (a thread per rank, meeting in a context shared through RankContext).
  std::vector<std::vector<HostTensor>> results;
  unsigned numRanks = perRankArguments.size();
  for (unsigned rank = 0; rank < numRanks; ++rank) {
    FailureOr<std::vector<HostTensor>> rankResults = runRank(
        func, perRankArguments[rank], options, RankContext{rank, numRanks});
    if (failed(rankResults))
      return failure();
    results.push_back(std::move(*rankResults));
  }
  return results;
}
