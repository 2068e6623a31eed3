//===- ShardingConstraints.cpp - Shardings fixed in the IR ----------------===//

#include "dpc/Transforms/Planning/ShardingConstraints.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"

using namespace mlir;
using namespace mlir::dpc;

FailureOr<ShardingConstraints>
ShardingConstraints::read(const TrainingGraph &graph) {
  // The verifier has checked each attribute against its value and mesh;
  // what is left is whether the planner can place it.
  ShardingConstraints constraints;
  std::string error;
  func::FuncOp func = graph.getFunction();
  for (BlockArgument arg : func.getArguments()) {
    auto sharding = func.getArgAttrOfType<ShardingAttr>(
        arg.getArgNumber(), DpcDialect::kShardingAttrName);
    if (!sharding)
      continue;
    FailureOr<TensorSharding> planned = getTensorSharding(sharding, error);
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
      FailureOr<TensorSharding> result = getTensorSharding(sharding, error);
      if (failed(result))
        return emitError(op->getLoc(), "'")
               << op->getName() << "': result " << i << ": " << error;
      planned.push_back(*result);
    }
    constraints.results[op] = std::move(planned);
  }
  return constraints;
}
