//===- TopologyAwareCollectives.cpp - -dpc-topology-aware-collectives -----===//
//
// A reduction among devices on several nodes is bound by the inter-node
// link. Reduce-scattered inside each node first, all-reduced across nodes
// on the 1/k each device then owns, and all-gathered inside the node again,
// it sends k times fewer bytes over that link. The cost model decides, per
// collective and message size, between that and the flat algorithms, whose
// choice (ring, tree, direct) is recorded on the op for the backends.
//
// The groups of the decomposition are along the node boundary, which need
// not fall between mesh axes (16 data-parallel devices on two nodes of 8):
// a refined mesh, the same devices with each straddling axis split into
// its across-nodes and within-node parts, names them.
//
//===----------------------------------------------------------------------===//

#include "Scheduling.h"

#include "dpc/Analysis/CostModel/CommunicationCost.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Transforms/Collectives/CommunicationVolume.h"
#include "dpc/Transforms/Collectives/PlanCluster.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_TOPOLOGYAWARECOLLECTIVES
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// The parts of a mesh axis on the refined mesh, major to minor.
struct AxisParts {
  SmallVector<std::string> across, within;
};

/// A mesh whose axes are split at the node boundary.
struct RefinedMesh {
  MeshOp op;
  llvm::StringMap<AxisParts> parts;
};

/// Splits the axes of `mesh` at the boundary of nodes of `perNode` devices
/// (devices lie on nodes by their position in the mesh, row-major). Fails
/// where the boundary cuts an axis unevenly.
FailureOr<RefinedMesh> refineMesh(MeshOp mesh, int64_t perNode,
                                  OpBuilder &builder) {
  SmallVector<std::pair<std::string, int64_t>> axes;
  RefinedMesh refined;
  int64_t inner = 1;
  ArrayRef<int64_t> shape = mesh.getShape();
  SmallVector<std::pair<std::string, int64_t>> reversed;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    std::string name = cast<StringAttr>(mesh.getAxisNames()[i]).str();
    int64_t size = shape[i];
    AxisParts &part = refined.parts[name];
    if (inner * size <= perNode) {
      if (perNode % (inner * size) != 0)
        return failure();
      inner *= size;
      part.within.push_back(name);
      reversed.push_back({name, size});
    } else if (inner < perNode) {
      int64_t local = perNode / inner;
      if (perNode % inner != 0 || size % local != 0)
        return failure();
      inner = perNode;
      part.across.push_back(name + "_nodes");
      part.within.push_back(name + "_local");
      reversed.push_back({name + "_local", local});
      reversed.push_back({name + "_nodes", size / local});
    } else {
      part.across.push_back(name);
      reversed.push_back({name, size});
    }
  }
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  for (auto &[name, size] : llvm::reverse(reversed)) {
    names.push_back(builder.getStringAttr(name));
    sizes.push_back(size);
  }
  builder.setInsertionPointAfter(mesh);
  refined.op = MeshOp::create(
      builder, mesh.getLoc(),
      builder.getStringAttr(mesh.getSymName() + "_by_node"),
      builder.getArrayAttr(names), builder.getDenseI64ArrayAttr(sizes),
      mesh.getDevicesAttr());
  return refined;
}

std::string getAlgorithmName(CollectiveAlgorithm algorithm) {
  return stringifyCollectiveAlgorithm(algorithm).lower();
}

/// The fastest algorithm that one flat collective can use.
CollectiveChoice getBestFlat(CollectiveKind kind, double bytes,
                             const Mesh &mesh, ArrayRef<unsigned> axes,
                             const Cluster &cluster) {
  CollectiveChoice best{CollectiveAlgorithm::Ring, -1.0};
  for (CollectiveAlgorithm algorithm :
       {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
        CollectiveAlgorithm::Direct}) {
    double time =
        getCollectiveTime(kind, algorithm, bytes, mesh, axes, cluster);
    if (best.time < 0 || time < best.time)
      best = {algorithm, time};
  }
  return best;
}

/// A collective as the cost model sees it: its kind, its group on its
/// mesh, and the bytes the model charges for (an all-gather's output, the
/// input of the others).
struct PricedCollective {
  CollectiveKind kind;
  MeshOp mesh;
  SmallVector<int64_t> shape;
  SmallVector<StringRef> axisNames;
  SmallVector<unsigned> axes;
  double bytes;

  explicit PricedCollective(Operation *op) {
    std::tie(kind, bytes) = *getCommunicatedBuffer(op);
    mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
        op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
    shape.assign(mesh.getShape().begin(), mesh.getShape().end());
    for (Attribute axis : op->getAttrOfType<ArrayAttr>("axes")) {
      axisNames.push_back(cast<StringAttr>(axis).getValue());
      axes.push_back(*mesh.getAxisIndex(axisNames.back()));
    }
  }

  double getTime(CollectiveAlgorithm algorithm, const Cluster &cluster) const {
    return getCollectiveTime(kind, algorithm, bytes, Mesh(shape), axes,
                             cluster);
  }

  /// Records, and returns, the fastest flat algorithm on `op`.
  CollectiveChoice annotate(Operation *op, const Cluster &cluster) const {
    CollectiveChoice best =
        getBestFlat(kind, bytes, Mesh(shape), axes, cluster);
    op->setAttr(
        "dpc.algorithm",
        StringAttr::get(op->getContext(), getAlgorithmName(best.algorithm)));
    return best;
  }
};

struct TopologyAwareCollectivesPass
    : public dpc::impl::TopologyAwareCollectivesBase<
          TopologyAwareCollectivesPass> {
  using TopologyAwareCollectivesBase::TopologyAwareCollectivesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Cluster> resolved = resolvePlanCluster(module, cluster);
    if (failed(resolved))
      return signalPassFailure();
    SmallVector<Operation *> collectives;
    module.walk([&](Operation *op) {
      if (isCommunicating(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives)
      lower(op, *resolved);
  }

  void lower(Operation *op, const Cluster &cluster) {
    PricedCollective priced(op);
    CollectiveChoice flat = priced.annotate(op, cluster);
    auto reduce = dyn_cast<AllReduceOp>(op);
    if (!reduce || reduce.getAsync() ||
        !(priced.getTime(CollectiveAlgorithm::Hierarchical, cluster) <
          flat.time))
      return;
    FailureOr<RefinedMesh *> refined = getRefined(priced.mesh, cluster);
    if (failed(refined))
      return;
    SmallVector<StringRef> across, within;
    for (StringRef axis : priced.axisNames) {
      const AxisParts &parts = (*refined)->parts.find(axis)->second;
      for (const std::string &name : parts.across)
        across.push_back(name);
      for (const std::string &name : parts.within)
        within.push_back(name);
    }
    if (across.empty() || within.empty())
      return;
    decompose(reduce, (*refined)->op, across, within, cluster);
  }

  FailureOr<RefinedMesh *> getRefined(MeshOp mesh, const Cluster &cluster) {
    auto it = refinedMeshes.find(mesh);
    if (it == refinedMeshes.end()) {
      OpBuilder meshBuilder(mesh);
      FailureOr<RefinedMesh> refined =
          refineMesh(mesh, cluster.devicesPerNode, meshBuilder);
      if (failed(refined))
        return failure();
      it = refinedMeshes.try_emplace(mesh, std::move(*refined)).first;
    }
    return &it->second;
  }

  /// all_reduce(x) = all_gather_within(all_reduce_across(
  /// reduce_scatter_within(x))), on `x` flattened and padded to a multiple
  /// of the within-node group.
  void decompose(AllReduceOp op, MeshOp refined, ArrayRef<StringRef> across,
                 ArrayRef<StringRef> within, const Cluster &cluster) {
    OpBuilder builder(op);
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    Type element = type.getElementType();
    int64_t n = type.getNumElements(), k = 1;
    for (StringRef axis : within)
      k *= *refined.getAxisSize(axis);
    int64_t padded = llvm::alignTo(n, k);
    auto flatType = RankedTensorType::get({n}, element);
    Value flat = ReshapeOp::create(builder, loc, flatType, op.getInput());
    if (padded != n) {
      auto padType = RankedTensorType::get({padded - n}, element);
      Value zeros =
          ConstantOp::create(builder, loc, padType,
                             cast<ElementsAttr>(builder.getZeroAttr(padType)));
      flat = ConcatOp::create(
          builder, loc, RankedTensorType::get({padded}, element),
          ValueRange{flat, zeros}, builder.getI64IntegerAttr(0));
    }
    auto axesAttr = [&](ArrayRef<StringRef> names) {
      SmallVector<Attribute> attrs;
      for (StringRef name : names)
        attrs.push_back(builder.getStringAttr(name));
      return builder.getArrayAttr(attrs);
    };
    auto meshRef = FlatSymbolRefAttr::get(refined.getSymNameAttr());
    auto shardType = RankedTensorType::get({padded / k}, element);
    auto scattered = ReduceScatterOp::create(
        builder, loc, shardType, flat, meshRef, axesAttr(within),
        op.getKindAttr(), builder.getI64IntegerAttr(0), UnitAttr());
    auto reduced =
        AllReduceOp::create(builder, loc, shardType, scattered, meshRef,
                            axesAttr(across), op.getKindAttr(), UnitAttr());
    auto gathered = AllGatherOp::create(
        builder, loc, RankedTensorType::get({padded}, element), reduced,
        meshRef, axesAttr(within), builder.getI64IntegerAttr(0), UnitAttr());
    // Each level runs its fastest flat algorithm on its own link.
    for (Operation *made : {scattered.getOperation(), reduced.getOperation(),
                            gathered.getOperation()}) {
      PricedCollective(made).annotate(made, cluster);
      made->setAttr(DpcDialect::kHierarchicalAttrName, op.getAxesAttr());
      for (StringRef name :
           {DpcDialect::kStageAttrName, DpcDialect::kPhaseAttrName})
        if (Attribute attr = op->getAttr(name))
          made->setAttr(name, attr);
    }
    Value whole = gathered;
    if (padded != n)
      whole = SliceOp::create(
          builder, loc, flatType, whole, builder.getDenseI64ArrayAttr({0}),
          builder.getDenseI64ArrayAttr({n}), builder.getDenseI64ArrayAttr({1}));
    op.getResult().replaceAllUsesWith(
        ReshapeOp::create(builder, loc, type, whole).getResult());
    op.erase();
  }

  DenseMap<Operation *, RefinedMesh> refinedMeshes;
};

} // namespace
