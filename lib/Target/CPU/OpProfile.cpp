//===- OpProfile.cpp - What each op of a program is predicted to cost -----===//

#include "dpc/Target/CPU/OpProfile.h"

#include "dpc/Analysis/CostModel/CommunicationCost.h"
#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Target/CPU/BufferPlan.h"
#include "dpc/Target/CPU/Fusion.h"
#include "dpc/Transforms/Collectives/CommunicationVolume.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::dpc;

/// The transfer time of a collective over its group, as the planner
/// prices one.
static std::optional<double> getTransferSeconds(Operation *op,
                                                const Cluster &cluster) {
  std::optional<std::pair<CollectiveKind, double>> buffer =
      getCommunicatedBuffer(op);
  if (!buffer)
    return std::nullopt;
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
      op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  if (!mesh || !axes)
    return std::nullopt;
  SmallVector<unsigned> indices;
  for (Attribute axis : axes)
    if (std::optional<unsigned> index =
            mesh.getAxisIndex(cast<StringAttr>(axis).getValue()))
      indices.push_back(*index);
  return getBestCollective(buffer->first, buffer->second, Mesh(mesh.getShape()),
                           indices, cluster)
      .time;
}

EmittedOpCost
mlir::dpc::getEmittedOpCost(Operation *op,
                            function_ref<bool(Operation *)> isFused,
                            const Cluster *cluster) {
  EmittedOpCost cost;
  if (cluster)
    if (std::optional<double> transfer = getTransferSeconds(op, *cluster)) {
      cost.collective = true;
      cost.seconds = *transfer;
      cost.bytes = getOperandAndResultBytes(op);
      return cost;
    }
  // An op without a cost (the return) costs nothing, as the cost model
  // prices it; nor does a view (a wait only names its collective's
  // result: the time it takes is communication left exposed).
  if (!isa<CostOpInterface>(op) || isView(op))
    return cost;
  // The ops computed inside `op` and the values its loop reads.
  SmallVector<Operation *> members;
  llvm::SetVector<Value> leaves;
  std::function<void(Operation *)> collect = [&](Operation *current) {
    members.push_back(current);
    for (Value operand : current->getOperands()) {
      Operation *def = operand.getDefiningOp();
      // A transpose a GEMM reads is the GEMM's operand layout, no work.
      if (def && isFused(def) && def->hasOneUse() && !isMatrixTranspose(def))
        collect(def);
      else
        leaves.insert(operand);
    }
  };
  collect(op);
  cost.fusedOps = int64_t(members.size()) - 1;
  for (Operation *member : members)
    if (auto costly = dyn_cast<CostOpInterface>(member))
      cost.flops += costly.getFlops();
  if (cost.fusedOps == 0) {
    cost.bytes = cast<CostOpInterface>(op).getBytesAccessed();
  } else {
    for (Value leaf : leaves)
      cost.bytes += getSizeInBytes(leaf.getType());
    for (Value result : op->getResults())
      cost.bytes += getSizeInBytes(result.getType());
  }
  if (!cluster)
    return cost;
  Type type = op->getNumResults()    ? op->getResult(0).getType()
              : op->getNumOperands() ? op->getOperand(0).getType()
                                     : Type();
  cost.seconds = getRooflineEstimate(
                     cost.flops, cost.bytes,
                     type ? getNumericTypeOf(type) : NumericType::F32, *cluster)
                     .time;
  return cost;
}

llvm::json::Array
mlir::dpc::describeMarkedOps(ArrayRef<Operation *> markedOps,
                             function_ref<bool(Operation *)> isFused,
                             const Cluster *cluster) {
  llvm::json::Array table;
  for (Operation *op : markedOps) {
    EmittedOpCost cost = getEmittedOpCost(op, isFused, cluster);
    std::string location;
    llvm::raw_string_ostream os(location);
    op->getLoc().print(os);
    llvm::json::Object entry{{"op", op->getName().getStringRef()},
                             {"at", location},
                             {"flops", cost.flops},
                             {"bytes", cost.bytes}};
    if (cost.fusedOps)
      entry["fused"] = cost.fusedOps;
    if (cost.collective)
      entry["collective"] = true;
    if (cluster)
      entry["predicted_s"] = cost.seconds;
    table.push_back(std::move(entry));
  }
  return table;
}
