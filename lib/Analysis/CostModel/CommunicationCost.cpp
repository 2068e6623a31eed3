//===- CommunicationCost.cpp - Alpha-beta times of collectives ------------===//
//
// The formulas are those of Thakur, Rabenseifner and Gropp, "Optimization
// of Collective Communication Operations in MPICH" (IJHPCA 2005), with n
// devices, S bytes, latency a and seconds per byte b.
//
//===----------------------------------------------------------------------===//

#include "dpc/Analysis/CostModel/CommunicationCost.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dpc;

StringRef mlir::dpc::stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Broadcast:
    return "broadcast";
  case CollectiveKind::SendRecv:
    return "send_recv";
  }
  llvm_unreachable("unknown collective kind");
}

StringRef
mlir::dpc::stringifyCollectiveAlgorithm(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Tree:
    return "tree";
  case CollectiveAlgorithm::Direct:
    return "direct";
  case CollectiveAlgorithm::Hierarchical:
    return "hierarchical";
  }
  llvm_unreachable("unknown collective algorithm");
}

double mlir::dpc::getSentBytes(CollectiveKind kind, double bytes, int64_t n) {
  if (kind == CollectiveKind::SendRecv)
    return bytes;
  if (n <= 1)
    return 0.0;
  double share = double(n - 1) / double(n) * bytes;
  return kind == CollectiveKind::AllReduce ? 2.0 * share : share;
}

/// Ring (and, with the same bytes per link, direct): n-1 steps.
static double ringTime(CollectiveKind kind, double bytes, double n, double a,
                       double b) {
  double share = (n - 1) / n * bytes;
  switch (kind) {
  case CollectiveKind::AllReduce:
    // Reduce-scatter, then all-gather.
    return 2 * (n - 1) * a + 2 * share * b;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllGather:
    return (n - 1) * a + share * b;
  case CollectiveKind::AllToAll:
    // The block for the device k hops away travels k links: S/n * n(n-1)/2
    // bytes per link.
    return (n - 1) * a + (n - 1) / 2 * bytes * b;
  case CollectiveKind::Broadcast:
    // Pipelined chain: the message streams through n-1 hops.
    return (n - 1) * a + bytes * b;
  case CollectiveKind::SendRecv:
    return a + bytes * b;
  }
  llvm_unreachable("unknown collective kind");
}

/// Log-depth algorithms.
static double treeTime(CollectiveKind kind, double bytes, double n, double a,
                       double b) {
  double depth = std::ceil(std::log2(n));
  double share = (n - 1) / n * bytes;
  switch (kind) {
  case CollectiveKind::AllReduce:
    // Rabenseifner: recursive-halving reduce-scatter, recursive-doubling
    // all-gather.
    return 2 * depth * a + 2 * share * b;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllGather:
    return depth * a + share * b;
  case CollectiveKind::AllToAll:
    // Bruck: log2(n) rounds of half the buffer each.
    return depth * a + depth * bytes / 2 * b;
  case CollectiveKind::Broadcast:
    // Pipelined binary tree.
    return depth * a + bytes * b;
  case CollectiveKind::SendRecv:
    return a + bytes * b;
  }
  llvm_unreachable("unknown collective kind");
}

/// Every device sends to each of its n-1 peers directly.
static double directTime(CollectiveKind kind, double bytes, double n, double a,
                         double b) {
  double share = (n - 1) / n * bytes;
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2 * (n - 1) * a + 2 * share * b;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllGather:
  case CollectiveKind::AllToAll:
    // Each byte that leaves a device crosses one link.
    return (n - 1) * a + share * b;
  case CollectiveKind::Broadcast:
    // Scatter from the root, then all-gather (van de Geijn).
    return 2 * (n - 1) * a + 2 * share * b;
  case CollectiveKind::SendRecv:
    return a + bytes * b;
  }
  llvm_unreachable("unknown collective kind");
}

double mlir::dpc::getFlatCollectiveTime(CollectiveKind kind,
                                        CollectiveAlgorithm algorithm,
                                        double bytes, int64_t n, double alpha,
                                        double beta) {
  if (n <= 1 || bytes <= 0)
    return 0.0;
  double size = static_cast<double>(n);
  switch (algorithm) {
  case CollectiveAlgorithm::Ring:
  case CollectiveAlgorithm::Hierarchical:
    return ringTime(kind, bytes, size, alpha, beta);
  case CollectiveAlgorithm::Tree:
    return treeTime(kind, bytes, size, alpha, beta);
  case CollectiveAlgorithm::Direct:
    return directTime(kind, bytes, size, alpha, beta);
  }
  llvm_unreachable("unknown collective algorithm");
}

double mlir::dpc::getCollectiveTime(CollectiveKind kind,
                                    CollectiveAlgorithm algorithm, double bytes,
                                    const GroupPlacement &group,
                                    const Cluster &cluster) {
  if (group.size <= 1 || bytes <= 0)
    return 0.0;
  double efficiency = cluster.efficiency.communication;
  double alphaIn = cluster.intraNode.latency;
  double betaIn = 1.0 / (cluster.intraNode.bandwidth * efficiency);
  double alphaOut = cluster.interNode.latency;
  double betaOut = 1.0 / (cluster.interNode.bandwidth * efficiency);
  int64_t k = group.devicesPerNode, g = group.nodes;
  if (group.nodes == 1)
    return getFlatCollectiveTime(kind, algorithm, bytes, group.size, alphaIn,
                                 betaIn);
  if (algorithm == CollectiveAlgorithm::Direct &&
      kind != CollectiveKind::SendRecv) {
    // Each device's traffic to other nodes, (g-1)/g of it, leaves on its
    // own NIC while the rest crosses the node's switch at the same time.
    double phases =
        kind == CollectiveKind::AllReduce || kind == CollectiveKind::Broadcast
            ? 2.0
            : 1.0;
    double n = static_cast<double>(group.size);
    double outBytes = (g - 1.0) / g * bytes, inBytes = (k - 1.0) / n * bytes;
    return phases * ((n - 1) * alphaOut +
                     std::max(outBytes * betaOut, inBytes * betaIn));
  }
  if (algorithm != CollectiveAlgorithm::Hierarchical ||
      kind == CollectiveKind::SendRecv) {
    // A ring or tree over several nodes crosses each node boundary once per
    // channel; the k devices of a node drive k channels over their k NICs,
    // so a step moves at the slower of the node link and k NICs.
    double beta = kind == CollectiveKind::SendRecv
                      ? betaOut
                      : std::max(betaIn, betaOut / static_cast<double>(k));
    return getFlatCollectiveTime(kind, algorithm, bytes, group.size, alphaOut,
                                 beta);
  }
  auto inside = [&](CollectiveKind phase, double phaseBytes,
                    CollectiveAlgorithm alg = CollectiveAlgorithm::Ring) {
    return getFlatCollectiveTime(phase, alg, phaseBytes, k, alphaIn, betaIn);
  };
  auto across = [&](CollectiveKind phase, double phaseBytes,
                    CollectiveAlgorithm alg = CollectiveAlgorithm::Ring) {
    return getFlatCollectiveTime(phase, alg, phaseBytes, g, alphaOut, betaOut);
  };
  double owned = bytes / static_cast<double>(k);
  switch (kind) {
  case CollectiveKind::AllReduce:
    // Reduce-scatter inside the node, all-reduce the owned 1/k across nodes
    // (the k devices of a node on their own NICs at once), all-gather inside.
    return inside(CollectiveKind::ReduceScatter, bytes) +
           across(CollectiveKind::AllReduce, owned) +
           inside(CollectiveKind::AllGather, bytes);
  case CollectiveKind::ReduceScatter:
    return inside(CollectiveKind::ReduceScatter, bytes) +
           across(CollectiveKind::ReduceScatter, owned);
  case CollectiveKind::AllGather:
    return across(CollectiveKind::AllGather, owned) +
           inside(CollectiveKind::AllGather, bytes);
  case CollectiveKind::AllToAll:
    // Exchange with the same-rank device of every other node, then inside.
    return across(CollectiveKind::AllToAll, bytes,
                  CollectiveAlgorithm::Direct) +
           inside(CollectiveKind::AllToAll, bytes, CollectiveAlgorithm::Direct);
  case CollectiveKind::Broadcast:
    return across(CollectiveKind::Broadcast, bytes) +
           inside(CollectiveKind::Broadcast, bytes);
  case CollectiveKind::SendRecv:
    break;
  }
  llvm_unreachable("send/recv is handled above");
}

double mlir::dpc::getCollectiveTime(CollectiveKind kind,
                                    CollectiveAlgorithm algorithm, double bytes,
                                    const Mesh &mesh, ArrayRef<unsigned> axes,
                                    const Cluster &cluster) {
  return getCollectiveTime(kind, algorithm, bytes,
                           getGroupPlacement(mesh, axes, cluster), cluster);
}

CollectiveChoice mlir::dpc::getBestCollective(CollectiveKind kind, double bytes,
                                              const GroupPlacement &group,
                                              const Cluster &cluster) {
  CollectiveChoice best;
  best.time = HUGE_VAL;
  for (CollectiveAlgorithm algorithm : kAllCollectiveAlgorithms) {
    double time = getCollectiveTime(kind, algorithm, bytes, group, cluster);
    if (time < best.time)
      best = {algorithm, time};
  }
  return best;
}

CollectiveChoice mlir::dpc::getBestCollective(CollectiveKind kind, double bytes,
                                              const Mesh &mesh,
                                              ArrayRef<unsigned> axes,
                                              const Cluster &cluster) {
  return getBestCollective(kind, bytes, getGroupPlacement(mesh, axes, cluster),
                           cluster);
}
