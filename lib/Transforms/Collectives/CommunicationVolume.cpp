//===- CommunicationVolume.cpp - Bytes a partitioned program sends --------===//

#include "dpc/Transforms/Collectives/CommunicationVolume.h"
#include "Scheduling.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dpc;

std::optional<std::pair<CollectiveKind, double>>
mlir::dpc::getCommunicatedBuffer(Operation *op) {
  if (auto send = dyn_cast<SendOp>(op))
    return std::pair(CollectiveKind::SendRecv,
                     getSizeInBytes(send.getInput().getType()));
  if (!isCommunicating(op))
    return std::nullopt;
  CollectiveKind kind =
      llvm::TypeSwitch<Operation *, CollectiveKind>(op)
          .Case([](ReduceScatterOp) { return CollectiveKind::ReduceScatter; })
          .Case([](AllGatherOp) { return CollectiveKind::AllGather; })
          .Case([](AllToAllOp) { return CollectiveKind::AllToAll; })
          .Default([](Operation *) { return CollectiveKind::AllReduce; });
  double bytes = getSizeInBytes(kind == CollectiveKind::AllGather
                                    ? op->getResult(0).getType()
                                    : op->getOperand(0).getType());
  return std::pair(kind, bytes);
}

StringRef mlir::dpc::getPlanAxis(StringRef axis) {
  for (StringRef suffix : {"_nodes", "_local"})
    if (axis.ends_with(suffix))
      return axis.drop_back(suffix.size());
  return axis;
}

/// Adds `bytes` to the axis of `volume` that a group along `axes` uses.
static void addAlong(CommunicationVolume &volume, ArrayAttr axes,
                     double bytes) {
  bool stage = false, data = false;
  for (Attribute axis : axes) {
    StringRef name = getPlanAxis(cast<StringAttr>(axis).getValue());
    stage |= name == kStageAxisName;
    data |= name == kDataAxisName;
  }
  (stage  ? volume.stageAxis
   : data ? volume.dataAxis
          : volume.tensorAxis) += bytes;
}

static CommunicationVolume
countSentBytes(func::FuncOp function,
               llvm::DenseMap<Operation *, CommunicationVolume> &counted) {
  if (auto it = counted.find(function); it != counted.end())
    return it->second;
  CommunicationVolume volume;
  function.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee)
        return;
      volume += countSentBytes(callee, counted);
      return;
    }
    std::optional<std::pair<CollectiveKind, double>> buffer =
        getCommunicatedBuffer(op);
    if (!buffer)
      return;
    auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
        op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
    auto axes = op->getAttrOfType<ArrayAttr>("axes");
    int64_t size = 1;
    for (Attribute axis : axes)
      size *= mesh.getShape()[*mesh.getAxisIndex(
          cast<StringAttr>(axis).getValue())];
    if (auto whole =
            op->getAttrOfType<ArrayAttr>(DpcDialect::kHierarchicalAttrName))
      axes = whole;
    addAlong(volume, axes, getSentBytes(buffer->first, buffer->second, size));
  });
  counted[function] = volume;
  return volume;
}

CommunicationVolume mlir::dpc::countSentBytes(func::FuncOp program) {
  llvm::DenseMap<Operation *, CommunicationVolume> counted;
  return ::countSentBytes(program, counted);
}

SmallVector<func::FuncOp> mlir::dpc::getPartitionedPrograms(ModuleOp module) {
  llvm::DenseSet<StringRef> called;
  module.walk([&](func::CallOp call) { called.insert(call.getCallee()); });
  SmallVector<func::FuncOp> programs;
  for (auto function : module.getOps<func::FuncOp>())
    if (function->hasAttr(DpcDialect::kPartitionedAttrName) &&
        !called.contains(function.getSymName()))
      programs.push_back(function);
  return programs;
}
