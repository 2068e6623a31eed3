//===- MeshCommunicator.h - One rank's collectives over a mesh --*- C++ -*-===//
//
// A rank of a partitioned program talks to the ranks of its mesh-axis
// groups: for each group kind (a set of mesh axes, numbered as the
// artifact's manifest numbers them) one Gloo context among the ranks that
// share the rank's coordinates on the other axes. Collectives run on
// communication threads, in the order they are started, so that a program
// can start one, compute, and wait for it later (the overlap the compiler
// planned happens). Each group kind has two: one for bulk transfers, one
// (with its own connections) for latency-bound collectives of at most
// 64 KiB, so that a tensor-parallel collective does not queue behind a
// data-parallel one, nor a batch norm's statistics behind a gradient
// bucket. Every rank of a group starts the group's collectives in the same
// order (the programs are SPMD), and picks their thread by their size,
// which is the same on each, so no queue can deadlock.
//
// Ranks meet through a TcpStore (Rendezvous.h) that checks the job's token.
// Failures (a peer that died, a timeout) end the wait with a Status that
// names the collective, the group and the peer when known.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_MESHCOMMUNICATOR_H
#define DPC_RUNTIME_MESHCOMMUNICATOR_H

#include "dpc/Runtime/Status.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dpc {

enum class CollectiveKind {
  AllReduce,
  ReduceScatter,
  AllGather,
  AllToAll,
  Send,
  Recv
};
enum class CollectiveReduction { Sum, Mean, Max, Min };
enum class CollectiveElement { F32, F64, I64 };

/// One collective, as the interpreter defines it (lib/Interpreter/
/// Collectives.cpp). `input` has the local shape `shape`; `output` is
/// dense, with the op's local result shape:
///  - AllReduce: the elementwise reduction over the group (Mean divides the
///    sum by the group size);
///  - ReduceScatter: the reduction cut along `dim` into group-size equal
///    blocks, block `position` kept;
///  - AllGather: the members' inputs concatenated along `dim`, in group
///    order;
///  - AllToAll: every member's input cut along `dim` into group-size
///    blocks; block `position` of each member, concatenated along
///    `concatDim` in group order;
///  - Send: `input` to member (position + shift) mod size; no output.
///  - Recv: `output` (of `shape`) from member (position - shift) mod size;
///    no input.
struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::AllReduce;
  /// The group kind: an index into Options::groups.
  int group = 0;
  CollectiveReduction reduction = CollectiveReduction::Sum;
  CollectiveElement element = CollectiveElement::F32;
  const void *input = nullptr;
  void *output = nullptr;
  std::vector<int64_t> shape;
  int64_t dim = 0, concatDim = 0, shift = 0;
  /// What to call it in errors ("dpc.all_reduce at step.mlir:12").
  std::string name;
};

class MeshCommunicator {
public:
  struct Options {
    int rank = 0, worldSize = 1;
    /// The rendezvous (a TcpStoreServer) and the job's token.
    std::string storeHost = "127.0.0.1";
    int storePort = 0;
    std::string token;
    /// The address this rank's Gloo device binds (its own host).
    std::string hostname = "127.0.0.1";
    /// groups[g] partitions the ranks 0..worldSize-1 into the member lists
    /// of group kind g, each in group order.
    std::vector<std::vector<std::vector<int>>> groups;
    /// Bounds connecting and every collective.
    std::chrono::milliseconds timeout{60000};
  };

  static Status connect(const Options &options,
                        std::unique_ptr<MeshCommunicator> &communicator);
  ~MeshCommunicator();

  int getRank() const;
  int getWorldSize() const;
  /// This rank's position in, and the size of, its group of kind `group`.
  int getGroupPosition(int group) const;
  int getGroupSize(int group) const;

  /// Queues `request` on the communication thread; returns its ticket.
  /// The buffers must stay valid until wait() returns for it.
  int64_t start(CollectiveRequest request);
  /// Waits for the collective `ticket` (and those started before it on
  /// its thread, which run in order); fails with the first failure of any
  /// collective so far. Collectives of different threads progress
  /// independently.
  Status wait(int64_t ticket);

  /// Waits for everything started, then for every rank of the world.
  Status barrier();
  /// Sums `count` doubles over the world, in place (reports, checks).
  Status allReduceWorld(double *data, size_t count);
  /// Every rank's `bytes`, in rank order (checkpoint and result assembly).
  Status allGatherWorld(const std::string &bytes,
                        std::vector<std::string> &gathered);

private:
  struct Impl;
  explicit MeshCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace dpc

#endif // DPC_RUNTIME_MESHCOMMUNICATOR_H
