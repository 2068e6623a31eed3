//===- CommunicationCost.h - Alpha-beta times of collectives ----*- C++ -*-===//
//
// How long a collective takes over a group of mesh axes, per algorithm, in
// the alpha-beta model: every message costs the latency alpha of the link
// it crosses, every byte 1 / (bandwidth * efficiency). A group that spans
// nodes is limited by the inter-node link; the hierarchical algorithm uses
// each link for the part of the work that stays on it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_COMMUNICATIONCOST_H
#define DPC_ANALYSIS_COSTMODEL_COMMUNICATIONCOST_H

#include "dpc/Analysis/CostModel/Cluster.h"

namespace mlir::dpc {

enum class CollectiveKind {
  AllReduce,
  ReduceScatter,
  AllGather,
  AllToAll,
  Broadcast,
  /// One point-to-point message (pipeline stages); the group size is moot.
  SendRecv,
};

enum class CollectiveAlgorithm {
  /// Bandwidth-optimal ring: n-1 steps of 1/n of the buffer each.
  Ring,
  /// Log-depth: recursive halving/doubling (Rabenseifner), Bruck's
  /// all-to-all, a pipelined binary-tree broadcast.
  Tree,
  /// Every device sends straight to every other (full-bisection switch,
  /// e.g. NVSwitch): one message per peer, each byte crosses one link.
  Direct,
  /// Two levels: the intra-node part over the node's link, the rest over
  /// the inter-node link on the 1/k of the data each device owns.
  Hierarchical,
};

constexpr CollectiveKind kAllCollectiveKinds[] = {
    CollectiveKind::AllReduce, CollectiveKind::ReduceScatter,
    CollectiveKind::AllGather, CollectiveKind::AllToAll,
    CollectiveKind::Broadcast, CollectiveKind::SendRecv};
constexpr CollectiveAlgorithm kAllCollectiveAlgorithms[] = {
    CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
    CollectiveAlgorithm::Direct, CollectiveAlgorithm::Hierarchical};

StringRef stringifyCollectiveKind(CollectiveKind kind);
StringRef stringifyCollectiveAlgorithm(CollectiveAlgorithm algorithm);

/// Time of one collective among `n` devices over one link (alpha = latency,
/// beta = seconds per byte). `bytes` is the whole buffer on one device: the
/// input of an all-reduce, reduce-scatter or all-to-all, the output of an
/// all-gather, the message of a broadcast or send/recv. Hierarchical is not
/// a single-link algorithm and is priced as Ring here.
double getFlatCollectiveTime(CollectiveKind kind, CollectiveAlgorithm algorithm,
                             double bytes, int64_t n, double alpha,
                             double beta);

/// Time of a collective over the devices that differ along `axes` of
/// `mesh`, on `cluster`. Inside one node everything uses the intra-node
/// link. Across g nodes with k group devices each, a ring or tree runs at
/// the slower of the intra-node link and the node's k NICs together, direct
/// sends the bytes bound for other nodes over each device's own NIC, and
/// hierarchical splits the work by link. A group of one device costs
/// nothing; a send/recv is one message between two devices of the group.
double getCollectiveTime(CollectiveKind kind, CollectiveAlgorithm algorithm,
                         double bytes, const Mesh &mesh,
                         ArrayRef<unsigned> axes, const Cluster &cluster);

/// Same, for a group already placed on nodes.
double getCollectiveTime(CollectiveKind kind, CollectiveAlgorithm algorithm,
                         double bytes, const GroupPlacement &group,
                         const Cluster &cluster);

/// Bytes each of `n` devices sends in one collective of `bytes` (as above).
/// The bandwidth-optimal algorithms (ring, recursive halving and doubling,
/// direct, hierarchical) all send as much: 2(n-1)/n of the buffer for an
/// all-reduce, (n-1)/n for the others, the message for a send; so the
/// figure is the same for the program dpc builds and the one it prices.
double getSentBytes(CollectiveKind kind, double bytes, int64_t n);

/// Bytes one device sends in one step, by the axis of the plan's mesh that
/// carries them: tensor-parallel, data-parallel, between pipeline stages.
struct CommunicationVolume {
  double tensorAxis = 0.0, dataAxis = 0.0, stageAxis = 0.0;

  double getTotal() const { return tensorAxis + dataAxis + stageAxis; }
  CommunicationVolume &operator+=(const CommunicationVolume &other) {
    tensorAxis += other.tensorAxis;
    dataAxis += other.dataAxis;
    stageAxis += other.stageAxis;
    return *this;
  }
};

struct CollectiveChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  double time = 0.0;
};

/// The fastest algorithm for this collective (ties go to the earlier one in
/// kAllCollectiveAlgorithms).
CollectiveChoice getBestCollective(CollectiveKind kind, double bytes,
                                   const Mesh &mesh, ArrayRef<unsigned> axes,
                                   const Cluster &cluster);
CollectiveChoice getBestCollective(CollectiveKind kind, double bytes,
                                   const GroupPlacement &group,
                                   const Cluster &cluster);

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_COMMUNICATIONCOST_H
