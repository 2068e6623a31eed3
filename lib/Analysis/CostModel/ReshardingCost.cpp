//===- ReshardingCost.cpp - Collectives between two shardings -------------===//

#include "dpc/Analysis/CostModel/ReshardingCost.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::dpc;

StageMesh::StageMesh(int64_t stages, int64_t dataParallel,
                     int64_t tensorParallel, const Cluster &cluster,
                     bool dataInner)
    : stages(stages), dataParallel(dataParallel),
      tensorParallel(tensorParallel), dataInner(dataInner), cluster(&cluster) {
  unsigned dataAxis = dataInner ? 2 : 1, tensorAxis = dataInner ? 1 : 2;
  Mesh mesh = dataInner ? Mesh({stages, tensorParallel, dataParallel})
                        : Mesh({stages, dataParallel, tensorParallel});
  stageGroup = getGroupPlacement(mesh, {0}, cluster);
  stageGroup.size = std::min<int64_t>(stageGroup.size, 2);
  dataGroup = getGroupPlacement(mesh, {dataAxis}, cluster);
  tensorGroup = getGroupPlacement(mesh, {tensorAxis}, cluster);
  stageDevices = getGroupPlacement(mesh, {1, 2}, cluster);
}

int64_t TensorSharding::getSplitDim(StageAxis axis) const {
  for (auto [dim, axes] : llvm::enumerate(dims))
    if (axes & axis)
      return dim;
  return -1;
}

int64_t TensorSharding::getShards(const StageMesh &mesh) const {
  int64_t shards = 1;
  for (StageAxis axis : {kDataAxis, kTensorAxis})
    if (getSplitDim(axis) >= 0)
      shards *= mesh.getAxisSize(axis);
  return shards;
}

static std::string getAxisNames(unsigned axes, bool dataMinor) {
  if (axes == (kDataAxis | kTensorAxis))
    return dataMinor ? "(tp, dp)" : "(dp, tp)";
  if (axes == kDataAxis)
    return "dp";
  if (axes == kTensorAxis)
    return "tp";
  return "*";
}

std::string TensorSharding::str() const {
  std::string text = "[";
  for (auto [i, axes] : llvm::enumerate(dims))
    text += (i ? ", " : "") + getAxisNames(axes, dataMinor);
  text += "]";
  if (!partial)
    return text;
  text += ", partial = [";
  bool first = true;
  for (StageAxis axis : {kDataAxis, kTensorAxis}) {
    if (!(partial & axis))
      continue;
    text += (first ? "" : ", ") + getAxisNames(axis, false) + " : " +
            stringifyReductionKind(getPartialKind(axis)).str();
    first = false;
  }
  return text + "]";
}

std::optional<ReshardingCollective>
mlir::dpc::getReshardingCollective(double bytes, const TensorSharding &from,
                                   const TensorSharding &to,
                                   const StageMesh &mesh, StageAxis axis) {
  if (mesh.getAxisSize(axis) == 1)
    return std::nullopt;
  StageAxis other = axis == kDataAxis ? kTensorAxis : kDataAxis;
  // Bytes one device holds when `axis` does not split the tensor.
  auto localWithout = [&](const TensorSharding &sharding) {
    return sharding.getSplitDim(other) >= 0 ? bytes / mesh.getAxisSize(other)
                                            : bytes;
  };
  int64_t fromDim = from.getSplitDim(axis), toDim = to.getSplitDim(axis);
  if (from.partial & axis) {
    if (to.partial & axis)
      return std::nullopt;
    return ReshardingCollective{toDim >= 0 ? CollectiveKind::ReduceScatter
                                           : CollectiveKind::AllReduce,
                                localWithout(from)};
  }
  // Unchanged, or a slice of a replicated tensor.
  if (fromDim == toDim || fromDim < 0)
    return std::nullopt;
  if (toDim < 0)
    return ReshardingCollective{CollectiveKind::AllGather, localWithout(to)};
  return ReshardingCollective{CollectiveKind::AllToAll,
                              localWithout(from) / mesh.getAxisSize(axis)};
}

double mlir::dpc::getReshardingTime(double bytes, const TensorSharding &from,
                                    const TensorSharding &to,
                                    const StageMesh &mesh, StageAxis axis) {
  std::optional<ReshardingCollective> collective =
      getReshardingCollective(bytes, from, to, mesh, axis);
  if (!collective)
    return 0.0;
  return getBestCollective(collective->kind, collective->bytes,
                           mesh.getGroup(axis), mesh.getCluster())
      .time;
}

double mlir::dpc::getReshardingSentBytes(double bytes,
                                         const TensorSharding &from,
                                         const TensorSharding &to,
                                         const StageMesh &mesh,
                                         StageAxis axis) {
  std::optional<ReshardingCollective> collective =
      getReshardingCollective(bytes, from, to, mesh, axis);
  if (!collective)
    return 0.0;
  return getSentBytes(collective->kind, collective->bytes,
                      mesh.getAxisSize(axis));
}

double mlir::dpc::getReshardingTime(double bytes, const TensorSharding &from,
                                    const TensorSharding &to,
                                    const StageMesh &mesh) {
  // The tensor axis (inside a node, fast) changes first, the data axis
  // then works on the result.
  TensorSharding middle = from;
  for (auto [dim, axes] : llvm::enumerate(middle.dims))
    axes = (axes & ~unsigned(kTensorAxis)) | (to.dims[dim] & kTensorAxis);
  if (to.partial & kTensorAxis)
    middle.setPartial(kTensorAxis, to.getPartialKind(kTensorAxis));
  else
    middle.clearPartial(kTensorAxis);
  return getReshardingTime(bytes, from, middle, mesh, kTensorAxis) +
         getReshardingTime(bytes, middle, to, mesh, kDataAxis);
}
