//===- ShardingConstraints.cpp - Shardings fixed in the IR ----------------===//

#include "dpc/Transforms/Planning/ShardingConstraints.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"

using namespace mlir;
using namespace mlir::dpc;

FailureOr<ShardingConstraints>
ShardingConstraints::read(const TrainingGraph &graph, bool zeroBlocks) {
  // The verifier has checked each attribute against its value and mesh;
  // what is left is whether the planner can place it.
  ShardingConstraints constraints;
  std::string error;
  // The planner's strategies split a dimension by both axes data-parallel
  // major; the other order is what the completion gives ZeRO's shards.
  auto readPlaceable = [&](ShardingAttr sharding) -> FailureOr<TensorSharding> {
    FailureOr<TensorSharding> planned = getTensorSharding(sharding, error);
    if (succeeded(planned) && planned->isDataMinor()) {
      error = "the planner splits a dimension over (dp, tp), data-parallel "
              "major, not (tp, dp)";
      return failure();
    }
    return planned;
  };
  // Under ZeRO a parameter, and the views the step makes of it (its compute
  // copy), hold the rank's block: replicas hold whole parameters, so the
  // data axis is ZeRO's and the rest is the planned layout.
  auto readBlock = [&](ShardingAttr sharding) -> FailureOr<TensorSharding> {
    FailureOr<TensorSharding> block = getTensorSharding(sharding, error);
    if (succeeded(block)) {
      for (unsigned &axes : block->dims)
        axes &= ~kDataAxis;
      block->dataMinor = false;
    }
    return block;
  };
  func::FuncOp func = graph.getFunction();
  for (BlockArgument arg : func.getArguments()) {
    auto sharding = func.getArgAttrOfType<ShardingAttr>(
        arg.getArgNumber(), DpcDialect::kShardingAttrName);
    if (!sharding)
      continue;
    FailureOr<TensorSharding> planned = zeroBlocks && graph.isParameter(arg)
                                            ? readBlock(sharding)
                                            : readPlaceable(sharding);
    if (failed(planned))
      return emitError(func.getLoc(), "argument ")
             << arg.getArgNumber() << " of @" << func.getSymName() << ": "
             << error;
    constraints.arguments[arg] = *planned;
  }
  for (Operation *op : graph.getForwardOps()) {
    SmallVector<ShardingAttr> shardings = getResultShardings(op);
    if (shardings.empty())
      continue;
    SmallVector<TensorSharding, 1> planned;
    for (auto [i, sharding] : llvm::enumerate(shardings)) {
      FailureOr<TensorSharding> result = zeroBlocks && graph.isParameterView(op)
                                             ? readBlock(sharding)
                                             : readPlaceable(sharding);
      if (failed(result))
        return emitError(op->getLoc(), "'")
               << op->getName() << "': result " << i << ": " << error;
      planned.push_back(*result);
    }
    constraints.results[op] = std::move(planned);
  }
  return constraints;
}
