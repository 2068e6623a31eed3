//===- Cluster.h - Devices, links and the mesh laid over them ---*- C++ -*-===//
//
// The cluster model the cost model prices a plan on: what one device can
// compute and hold, how fast the links inside a node and between nodes are,
// and the device mesh (`--mesh=AxB[xC]`) laid over the nodes row-major, so
// that outer axes cross nodes and inner axes stay within one.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_CLUSTER_H
#define DPC_ANALYSIS_COSTMODEL_CLUSTER_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace mlir::dpc {

/// Element types with their own peak rate on a device.
enum class NumericType { F64, F32, BF16, F16 };
constexpr unsigned kNumNumericTypes = 4;

/// "f64", "f32", "bf16", "f16".
StringRef stringifyNumericType(NumericType type);
std::optional<NumericType> parseNumericType(StringRef name);

/// A device mesh: the size of each axis, outermost first. Device ids are
/// row-major over the axes, and node n holds devices [n*D, (n+1)*D) for D
/// devices per node, so the innermost axes are the ones inside a node.
class Mesh {
public:
  explicit Mesh(ArrayRef<int64_t> shape) : shape(shape) {}
  Mesh(std::initializer_list<int64_t> shape) : shape(shape) {}

  /// The most devices a mesh may have: beyond the largest clusters built,
  /// and small enough that sizes multiplied by it cannot overflow.
  static constexpr int64_t kMaxDevices = int64_t(1) << 20;

  /// Parses `A`, `AxB`, `AxBxC`, ... (positive integers, at most
  /// kMaxDevices in all). On failure, `error` names the offending text.
  static FailureOr<Mesh> parse(StringRef text, std::string &error);

  ArrayRef<int64_t> getShape() const { return shape; }
  unsigned getRank() const { return shape.size(); }
  int64_t getAxisSize(unsigned axis) const { return shape[axis]; }
  int64_t getNumDevices() const;
  /// Distance between device ids that differ by one along `axis`.
  int64_t getStride(unsigned axis) const;
  /// `AxBxC`.
  std::string str() const;

private:
  SmallVector<int64_t, 4> shape;
};

/// One kind of link, seen from one device.
struct LinkSpec {
  /// Bytes per second one device can send (and, at the same time, receive)
  /// when every device of the node communicates at once.
  double bandwidth = 0.0;
  /// Seconds of fixed cost per message (software and wire latency).
  double latency = 0.0;
};

/// Which link a group of devices talks over.
enum class LinkLevel { IntraNode, InterNode };

/// What one accelerator (or CPU socket) offers.
struct DeviceSpec {
  /// Dense peak FLOP/s, indexed by NumericType.
  double peakFlops[kNumNumericTypes] = {0.0, 0.0, 0.0, 0.0};
  /// Bytes of device memory.
  double memoryCapacity = 0.0;
  /// Bytes per second of device memory bandwidth.
  double memoryBandwidth = 0.0;

  double getPeakFlops(NumericType type) const {
    return peakFlops[static_cast<unsigned>(type)];
  }
};

/// Fractions of the peaks that real kernels reach; the cost model multiplies
/// every peak by one of these.
struct Efficiency {
  /// Of peak FLOP/s, by compute-bound ops (large matrix multiplications).
  double compute = 1.0;
  /// Of memory bandwidth, by memory-bound ops.
  double memory = 1.0;
  /// Of link bandwidth, by collectives on large messages (NCCL bus bandwidth
  /// over the link rate).
  double communication = 1.0;
  /// Of a collective's time, the part that can run hidden behind compute
  /// where the schedule overlaps the two: 1 where communication has
  /// engines of its own (NCCL's copies and its few SMs, whose share is in
  /// `compute`), less where the collectives' copies, reductions and socket
  /// work take the cores that compute (Gloo with a core per rank).
  double overlap = 1.0;

  /// What contention leaves exposed of `hidden` seconds of communication
  /// that the schedule overlaps with compute.
  double getContendedTime(double hidden) const {
    return (1.0 - overlap) * hidden;
  }
};

/// A homogeneous cluster: nodes of `devicesPerNode` identical devices.
struct Cluster {
  std::string name;
  int64_t devicesPerNode = 1;
  DeviceSpec device;
  LinkSpec intraNode;
  LinkSpec interNode;
  Efficiency efficiency;
  /// Whether the backend that runs the plan has a fused attention kernel
  /// (FlashAttention: the scores never stored, recomputed in the backward
  /// pass). dpc's own backends have none, so plans they compile leave it
  /// off.
  bool fusedAttention = false;
  /// The runtime hides a step's data-parallel gradient reduction behind
  /// the backward passes of all its micro-batches (as Megatron-LM's
  /// published throughput is calibrated). dpc's own runtime reduces once,
  /// inside the last micro-batch's backward pass, so plans it compiles
  /// leave it off.
  bool gradientSyncBehindAllMicroBatches = false;
  /// How far the slowest rank lags behind the others' mean in a stretch of
  /// compute between two synchronizations, as a fraction of that stretch:
  /// the same work takes each rank a little more or less time (cores
  /// shared with other threads and tenants, frequency, cache), and every
  /// collective waits for the last. 0 for dedicated accelerators; the
  /// calibration measures it on a host.
  double rankSkew = 0.0;

  const LinkSpec &getLink(LinkLevel level) const {
    return level == LinkLevel::IntraNode ? intraNode : interNode;
  }
};

/// How the devices of one collective group sit on nodes.
struct GroupPlacement {
  /// Devices in the group.
  int64_t size = 1;
  /// Nodes the group spans.
  int64_t nodes = 1;
  /// Devices of the group on each of those nodes.
  int64_t devicesPerNode = 1;

  LinkLevel getLinkLevel() const {
    return nodes > 1 ? LinkLevel::InterNode : LinkLevel::IntraNode;
  }
};

/// Placement of the group of devices that differ only along `axes` (the
/// group containing device 0; all groups of a mesh axis set look alike when
/// the node size divides the mesh).
GroupPlacement getGroupPlacement(const Mesh &mesh, ArrayRef<unsigned> axes,
                                 const Cluster &cluster);

/// Names of the built-in clusters.
ArrayRef<StringRef> getClusterPresetNames();

/// A built-in cluster, or nothing when `name` is not one.
std::optional<Cluster> getClusterPreset(StringRef name);

/// Reads a cluster from JSON text (schema in docs/cluster.md); `fileName`
/// only labels errors. Every field is checked: a missing, mistyped,
/// negative or unknown one fails with a one-line `error` naming it.
FailureOr<Cluster> parseClusterJson(StringRef text, StringRef fileName,
                                    std::string &error);

/// Reads a cluster file.
FailureOr<Cluster> loadClusterFile(StringRef path, std::string &error);

/// Writes `cluster` in the schema parseClusterJson reads.
std::string printClusterJson(const Cluster &cluster);

/// Resolves `--cluster=PRESET|FILE.json`: a preset name, else a file path.
FailureOr<Cluster> resolveCluster(StringRef spec, std::string &error);

/// `cluster` as a job on `mesh` uses it: the mesh's shape is the topology.
/// `--mesh=AxB` runs B devices on each of A nodes when B is at most the
/// cluster's devices per node (a job that takes part of each node); a
/// larger innermost axis, or a mesh of one axis, fills whole nodes.
Cluster placeMeshOnCluster(Cluster cluster, const Mesh &mesh);

/// resolveCluster(spec), placed with the mesh `meshText` (as in dpc.plan).
FailureOr<Cluster> resolveClusterForMesh(StringRef spec, StringRef meshText,
                                         std::string &error);

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_CLUSTER_H
