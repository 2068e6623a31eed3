//===- ShardingConstraints.cpp - Shardings fixed in the IR ----------------===//

#include "dpc/Analysis/Planner/ShardingConstraints.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"

using namespace mlir;
using namespace mlir::dpc;

/// Errors at the op's location, naming it, without printing the op.
static InFlightDiagnostic emitOpError(Operation *op) {
  return emitError(op->getLoc(), "'") << op->getName() << "': ";
}

static unsigned getRank(Value value) {
  return cast<ShapedType>(value.getType()).getRank();
}

FailureOr<ShardingConstraints>
ShardingConstraints::read(const TrainingGraph &graph) {
  ShardingConstraints constraints;
  StringRef name = DpcDialect::kShardingAttrName;
  std::string error;
  func::FuncOp func = graph.getFunction();
  for (BlockArgument arg : func.getArguments()) {
    auto text = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), name);
    if (!text)
      continue;
    FailureOr<TensorSharding> sharding =
        TensorSharding::parse(text.getValue(), getRank(arg), error);
    if (failed(sharding))
      return emitError(func.getLoc(), "argument ")
             << arg.getArgNumber() << " of @" << func.getSymName() << ": "
             << error;
    constraints.arguments[arg] = *sharding;
  }
  for (Operation *op : graph.getForwardOps()) {
    Attribute attr = op->getAttr(name);
    if (!attr)
      continue;
    // One string per result; a lone string for a single result.
    SmallVector<StringAttr, 1> texts;
    if (auto text = dyn_cast<StringAttr>(attr)) {
      texts.push_back(text);
    } else if (auto array = dyn_cast<ArrayAttr>(attr)) {
      for (Attribute element : array)
        if (auto text = dyn_cast<StringAttr>(element))
          texts.push_back(text);
        else
          return emitOpError(op)
                 << "'" << name << "' must hold strings, one per result";
    } else {
      return emitOpError(op)
             << "'" << name << "' must be a string or an array of strings, one "
             << "per result";
    }
    if (texts.size() != op->getNumResults())
      return emitOpError(op)
             << "'" << name << "' has " << texts.size() << " shardings for "
             << op->getNumResults() << " results";
    SmallVector<TensorSharding, 1> shardings;
    for (auto [text, result] : llvm::zip_equal(texts, op->getResults())) {
      FailureOr<TensorSharding> sharding =
          TensorSharding::parse(text.getValue(), getRank(result), error);
      if (failed(sharding))
        return emitOpError(op)
               << "result " << result.getResultNumber() << ": " << error;
      shardings.push_back(*sharding);
    }
    constraints.results[op] = std::move(shardings);
  }
  return constraints;
}
