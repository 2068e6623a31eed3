//===- ScheduleTime.cpp - The time of a partitioned program's schedule ----===//

#include "dpc/Transforms/Collectives/ScheduleTime.h"
#include "dpc/Transforms/Collectives/CommunicationVolume.h"

#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Transforms/Planning/PlanAttributes.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// The algorithm `-dpc-topology-aware-collectives` picked (ring if none).
CollectiveAlgorithm getAlgorithm(Operation *op) {
  auto name = op->getAttrOfType<StringAttr>("dpc.algorithm");
  for (CollectiveAlgorithm algorithm : kAllCollectiveAlgorithms)
    if (name && name.getValue() == stringifyCollectiveAlgorithm(algorithm))
      return algorithm;
  return CollectiveAlgorithm::Ring;
}

/// Whether a group along `axes` is along the tensor axis alone.
bool isTensorGroup(ArrayAttr axes) {
  return llvm::all_of(axes, [](Attribute axis) {
    return getPlanAxis(cast<StringAttr>(axis).getValue()) == kTensorAxisName;
  });
}

struct Simulation {
  explicit Simulation(const Cluster &cluster) : cluster(cluster) {}

  const Cluster &cluster;
  ScheduleTime time;
  /// The compute stream's clock and when the communication thread is free.
  double now = 0.0, commFree = 0.0;
  /// When each asynchronous collective's result is ready, and whether it
  /// runs along the tensor axis.
  llvm::DenseMap<Value, std::pair<double, bool>> ready;
  /// When the communication thread runs beside the compute stream: the
  /// (start, end) of each collective it has not finished by `now`.
  SmallVector<std::pair<double, double>> inFlight;

  /// Seconds of communication within [from, to).
  double getCommunicationWithin(double from, double to) const {
    double seconds = 0.0;
    for (auto [start, end] : inFlight)
      seconds += std::max(0.0, std::min(end, to) - std::max(start, from));
    return seconds;
  }

  /// Runs `seconds` of compute, slowed by the communication it overlaps.
  void runCompute(double seconds) {
    double overlapped = getCommunicationWithin(now, now + seconds);
    double contention = cluster.efficiency.getContendedTime(overlapped);
    time.compute += seconds;
    time.contention += contention;
    now += seconds + contention;
    llvm::erase_if(inFlight,
                   [&](auto interval) { return interval.second <= now; });
  }

  double getCollectiveSeconds(Operation *op, CollectiveKind kind,
                              double bytes) const {
    auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
        op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
    auto axes = op->getAttrOfType<ArrayAttr>("axes");
    if (!mesh || !axes)
      return 0.0;
    SmallVector<unsigned> indices;
    for (Attribute axis : axes)
      indices.push_back(*mesh.getAxisIndex(cast<StringAttr>(axis).getValue()));
    SmallVector<int64_t> shape(mesh.getShape());
    return getCollectiveTime(kind, getAlgorithm(op), bytes, Mesh(shape),
                             indices, cluster);
  }

  void run(Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr()))
        runBody(callee);
      return;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      auto it = ready.find(wait.getInput());
      if (it == ready.end())
        return;
      auto [at, tensor] = it->second;
      double stall = std::max(0.0, at - now);
      time.exposed += stall;
      if (tensor)
        time.tensorExposed += stall;
      now += stall;
      return;
    }
    if (std::optional<std::pair<CollectiveKind, double>> buffer =
            getCommunicatedBuffer(op)) {
      double seconds = getCollectiveSeconds(op, buffer->first, buffer->second);
      // A hierarchical all-reduce's parts count along the group they make.
      auto group =
          op->getAttrOfType<ArrayAttr>(DpcDialect::kHierarchicalAttrName);
      bool tensor =
          isTensorGroup(group ? group : op->getAttrOfType<ArrayAttr>("axes"));
      double start = std::max(now, commFree);
      commFree = start + seconds;
      inFlight.push_back({start, commFree});
      time.communication += seconds;
      if (tensor)
        time.tensorCommunication += seconds;
      if (op->hasAttr("async") && op->getNumResults() == 1) {
        ready[op->getResult(0)] = {commFree, tensor};
        return;
      }
      // A send returns at once (the receiver waits for it); a synchronous
      // collective holds the compute stream until it is done.
      if (isa<SendOp>(op))
        return;
      double stall = commFree - now;
      time.exposed += stall;
      if (tensor)
        time.tensorExposed += stall;
      now = commFree;
      return;
    }
    if (isa<CostOpInterface>(op))
      runCompute(getOpComputeEstimate(op, cluster, 1.0).time);
  }

  void runBody(func::FuncOp function) {
    for (Operation &op : function.getBody().front().without_terminator())
      run(&op);
  }
};

} // namespace

ScheduleTime mlir::dpc::getScheduleTime(func::FuncOp program,
                                        const Cluster &cluster) {
  Simulation simulation(cluster);
  simulation.runBody(program);
  simulation.time.total = std::max(simulation.now, simulation.commFree);
  return simulation.time;
}
