//===- Interpreter.cpp - The reference interpreter of dpc IR --------------===//
//
// The public entry points: check the host tensors passed as arguments
// against the function's signature, convert them to compute tensors, run
// an executor per rank, and convert the results back.
//
//===----------------------------------------------------------------------===//

#include "dpc/Interpreter/Interpreter.h"

#include "Collectives.h"
#include "Executor.h"
#include "Tensor.h"

#include "dpc/Dialect/Dpc/IR/DpcDialect.h"

#include <thread>

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
  SmallVector<func::FuncOp> functions(perRankArguments.size(), func);
  return interpretRanks(functions, perRankArguments, options);
}

FailureOr<std::vector<std::vector<HostTensor>>>
mlir::dpc::interpretRanks(ArrayRef<func::FuncOp> perRankFunctions,
                          ArrayRef<std::vector<HostTensor>> perRankArguments,
                          const InterpreterOptions &options) {
  // A thread per rank: the ranks of a group meet at each collective.
  unsigned numRanks = perRankArguments.size();
  CollectiveContext collectives;
  std::vector<std::optional<std::vector<HostTensor>>> results(numRanks);
  std::vector<std::thread> threads;
  for (unsigned rank = 0; rank < numRanks; ++rank)
    threads.emplace_back([&, rank] {
      FailureOr<std::vector<HostTensor>> rankResults =
          runRank(perRankFunctions[rank], perRankArguments[rank], options,
                  RankContext{rank, numRanks, &collectives});
      if (failed(rankResults))
        collectives.abort(rank);
      else
        results[rank] = std::move(*rankResults);
    });
  for (std::thread &thread : threads)
    thread.join();
  std::vector<std::vector<HostTensor>> all;
  for (std::optional<std::vector<HostTensor>> &rankResults : results) {
    if (!rankResults)
      return failure();
    all.push_back(std::move(*rankResults));
  }
  return all;
}
