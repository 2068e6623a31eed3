//===- ReshardingCost.h - Shardings and the time to change them -*- C++ -*-===//
//
// A stage of a plan runs on a data-parallel x tensor-parallel mesh; a
// tensor's sharding says which of those two axes split each dimension and
// over which axes the tensor is a pending partial sum. Changing sharding
// costs one collective per axis that changes: reduce a partial sum
// (all-reduce, or reduce-scatter into a split), gather a split (all-gather),
// move a split to another dimension (all-to-all); taking a slice of a
// replicated tensor is free.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_RESHARDINGCOST_H
#define DPC_ANALYSIS_COSTMODEL_RESHARDINGCOST_H

#include "dpc/Analysis/CostModel/Cluster.h"
#include "dpc/Analysis/CostModel/CommunicationCost.h"
#include "dpc/Interfaces/ReductionKind.h"

#include <optional>
#include <string>

namespace mlir::dpc {

/// The two axes of a stage's mesh, as bits.
enum StageAxis : unsigned { kDataAxis = 1, kTensorAxis = 2 };

/// The mesh one pipeline stage runs on: `dataParallel` x `tensorParallel`
/// devices, tensor-parallel innermost (neighbouring device ids) unless
/// `dataInner`, within a mesh of `stages` such blocks.
class StageMesh {
public:
  StageMesh(int64_t stages, int64_t dataParallel, int64_t tensorParallel,
            const Cluster &cluster, bool dataInner = false);

  int64_t getStages() const { return stages; }
  /// Whether data-parallel ranks are the neighbouring device ids.
  bool isDataInner() const { return dataInner; }
  int64_t getDataParallel() const { return dataParallel; }
  int64_t getTensorParallel() const { return tensorParallel; }
  int64_t getAxisSize(StageAxis axis) const {
    return axis == kDataAxis ? dataParallel : tensorParallel;
  }
  const GroupPlacement &getGroup(StageAxis axis) const {
    return axis == kDataAxis ? dataGroup : tensorGroup;
  }
  /// The devices of one stage: both axes.
  const GroupPlacement &getStageDevices() const { return stageDevices; }
  /// Two devices in neighbouring stages.
  const GroupPlacement &getStageGroup() const { return stageGroup; }
  const Cluster &getCluster() const { return *cluster; }

private:
  int64_t stages, dataParallel, tensorParallel;
  bool dataInner;
  GroupPlacement dataGroup, tensorGroup, stageDevices, stageGroup;
  const Cluster *cluster;
};

/// How one tensor lies on a stage mesh: the planner's compact form of a
/// #dpc.sharding over the axes `dp` and `tp` (PlanAttributes.h converts).
struct TensorSharding {
  /// Per dimension, the StageAxis bits that split it (both: data-parallel
  /// major unless `dataMinor`).
  SmallVector<unsigned, 4> dims;
  /// StageAxis bits over which the tensor is a partial result.
  unsigned partial = 0;
  /// How the partial results over each axis combine (data, tensor).
  ReductionKind partialKinds[2] = {ReductionKind::sum, ReductionKind::sum};
  /// Where both axes split one dimension, the data axis splits each
  /// tensor-parallel block (ZeRO's shard of a tensor-parallel weight, so
  /// that its gradient is reduce-scattered within the block it lies in).
  bool dataMinor = false;

  static TensorSharding replicated(unsigned rank) {
    return {SmallVector<unsigned, 4>(rank, 0), 0};
  }
  /// The dimension `axis` splits, or -1.
  int64_t getSplitDim(StageAxis axis) const;
  /// Whether one dimension is split by both axes, the data axis minor.
  bool isDataMinor() const {
    int64_t dim = getSplitDim(kDataAxis);
    return dataMinor && dim >= 0 && dim == getSplitDim(kTensorAxis);
  }
  /// Devices one element is spread over: product of the splitting axes.
  int64_t getShards(const StageMesh &mesh) const;
  ReductionKind getPartialKind(StageAxis axis) const {
    return partialKinds[axis == kDataAxis ? 0 : 1];
  }
  /// Marks the tensor partial over `axis`, combining by `kind`.
  void setPartial(StageAxis axis, ReductionKind kind) {
    partial |= axis;
    partialKinds[axis == kDataAxis ? 0 : 1] = kind;
  }
  /// Finishes the partial result over `axis`.
  void clearPartial(StageAxis axis) {
    partial &= ~unsigned(axis);
    partialKinds[axis == kDataAxis ? 0 : 1] = ReductionKind::sum;
  }
  /// As #dpc.sharding prints its body: `[dp, *, tp]`, `[(dp, tp), *]`,
  /// `[(tp, dp)]`, `[*], partial = [tp : sum]`.
  std::string str() const;

  bool operator==(const TensorSharding &other) const {
    return dims == other.dims && isDataMinor() == other.isDataMinor() &&
           partial == other.partial &&
           partialKinds[0] == other.partialKinds[0] &&
           partialKinds[1] == other.partialKinds[1];
  }
  bool operator!=(const TensorSharding &other) const {
    return !(*this == other);
  }
};

/// The collective that changes a tensor's layout along one axis, and the
/// bytes of its buffer on one device (CommunicationCost.h's convention).
struct ReshardingCollective {
  CollectiveKind kind;
  double bytes;
};

/// The collective that turns `from` into `to` along `axis` alone, the other
/// axis laid out as in `from`; none when nothing moves (the same layout, a
/// slice of a replicated tensor, a partial result left partial).
std::optional<ReshardingCollective>
getReshardingCollective(double bytes, const TensorSharding &from,
                        const TensorSharding &to, const StageMesh &mesh,
                        StageAxis axis);

/// Bytes one device sends for that change (getSentBytes).
double getReshardingSentBytes(double bytes, const TensorSharding &from,
                              const TensorSharding &to, const StageMesh &mesh,
                              StageAxis axis);

/// Seconds to turn a tensor of `bytes` bytes (whole, unsharded) laid out
/// as `from` into `to` on `mesh`: the tensor axis changes first, then the
/// data axis, each with the collective the change needs over that axis's
/// group and the fastest algorithm.
double getReshardingTime(double bytes, const TensorSharding &from,
                         const TensorSharding &to, const StageMesh &mesh);

/// The change along `axis` alone, the other axis laid out as in `from`.
double getReshardingTime(double bytes, const TensorSharding &from,
                         const TensorSharding &to, const StageMesh &mesh,
                         StageAxis axis);

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_RESHARDINGCOST_H
