//===- ReshardingCost.cpp - Collectives between two shardings -------------===//

#include "dpc/Analysis/CostModel/ReshardingCost.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::dpc;

StageMesh::StageMesh(int64_t stages, int64_t dataParallel,
                     int64_t tensorParallel, const Cluster &cluster)
    : stages(stages), dataParallel(dataParallel),
      tensorParallel(tensorParallel), cluster(&cluster) {
  Mesh mesh({stages, dataParallel, tensorParallel});
  stageGroup = getGroupPlacement(mesh, {0}, cluster);
  stageGroup.size = std::min<int64_t>(stageGroup.size, 2);
  dataGroup = getGroupPlacement(mesh, {1}, cluster);
  tensorGroup = getGroupPlacement(mesh, {2}, cluster);
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

std::string TensorSharding::str() const {
  auto names = [](unsigned axes) -> std::string {
    if (axes == (kDataAxis | kTensorAxis))
      return "dp+tp";
    if (axes == kDataAxis)
      return "dp";
    if (axes == kTensorAxis)
      return "tp";
    return "*";
  };
  std::string text = "[";
  for (auto [i, axes] : llvm::enumerate(dims))
    text += (i ? ", " : "") + names(axes);
  text += "]";
  if (partial)
    text += " partial(" + names(partial) + ")";
  return text;
}

/// Axes named `dp`, `tp`, `dp+tp` or `*`; 0 with `error` set otherwise.
static std::optional<unsigned> parseAxes(StringRef text, std::string &error) {
  text = text.trim();
  if (text == "*")
    return 0u;
  unsigned axes = 0;
  SmallVector<StringRef, 2> names;
  text.split(names, '+');
  for (StringRef name : names) {
    name = name.trim();
    unsigned axis = name == "dp"   ? unsigned(kDataAxis)
                    : name == "tp" ? unsigned(kTensorAxis)
                                   : 0u;
    if (!axis || (axes & axis)) {
      error = "'" + text.str() + "' is not a mesh axis (expected dp, tp, " +
              "dp+tp or *)";
      return std::nullopt;
    }
    axes |= axis;
  }
  return axes;
}

FailureOr<TensorSharding> TensorSharding::parse(StringRef text, unsigned rank,
                                                std::string &error) {
  StringRef rest = text.trim();
  auto bad = [&](const Twine &why) -> FailureOr<TensorSharding> {
    error = "sharding '" + text.str() + "': " + why.str() +
            " (expected e.g. \"[dp, *, tp]\" or \"[dp, *] partial(tp)\")";
    return failure();
  };
  if (!rest.consume_front("["))
    return bad("it does not start with '['");
  size_t close = rest.find(']');
  if (close == StringRef::npos)
    return bad("no closing ']'");
  StringRef list = rest.take_front(close).trim();
  rest = rest.drop_front(close + 1).trim();

  TensorSharding sharding = replicated(0);
  std::string axisError;
  if (!list.empty()) {
    SmallVector<StringRef, 4> entries;
    list.split(entries, ',');
    for (StringRef entry : entries) {
      std::optional<unsigned> axes = parseAxes(entry, axisError);
      if (!axes)
        return bad(axisError);
      sharding.dims.push_back(*axes);
    }
  }
  if (sharding.dims.size() != rank)
    return bad("it has " + Twine(sharding.dims.size()) +
               " dimensions, the tensor " + Twine(rank));
  if (rest.consume_front("partial")) {
    rest = rest.trim();
    if (!rest.consume_front("(") || !rest.consume_back(")"))
      return bad("'partial' takes its axes in parentheses");
    std::optional<unsigned> axes = parseAxes(rest, axisError);
    if (!axes || *axes == 0)
      return bad(axes ? "'partial(*)' names no axis" : axisError);
    sharding.partial = *axes;
    rest = "";
  }
  if (!rest.empty())
    return bad("unexpected '" + rest + "' after the dimensions");
  for (StageAxis axis : {kDataAxis, kTensorAxis}) {
    int uses = sharding.partial & axis ? 1 : 0;
    for (unsigned axes : sharding.dims)
      uses += axes & axis ? 1 : 0;
    if (uses > 1)
      return bad(Twine("axis ") + (axis == kDataAxis ? "dp" : "tp") +
                 " is used more than once");
  }
  return sharding;
}

double mlir::dpc::getReshardingTime(double bytes, const TensorSharding &from,
                                    const TensorSharding &to,
                                    const StageMesh &mesh, StageAxis axis) {
  if (mesh.getAxisSize(axis) == 1)
    return 0.0;
  StageAxis other = axis == kDataAxis ? kTensorAxis : kDataAxis;
  // Bytes one device holds when `axis` does not split the tensor.
  auto localWithout = [&](const TensorSharding &sharding) {
    return sharding.getSplitDim(other) >= 0 ? bytes / mesh.getAxisSize(other)
                                            : bytes;
  };
  int64_t fromDim = from.getSplitDim(axis), toDim = to.getSplitDim(axis);
  CollectiveKind kind;
  double collectiveBytes;
  if (from.partial & axis) {
    if (to.partial & axis)
      return 0.0;
    kind = toDim >= 0 ? CollectiveKind::ReduceScatter
                      : CollectiveKind::AllReduce;
    collectiveBytes = localWithout(from);
  } else if (fromDim == toDim || fromDim < 0) {
    // Unchanged, or a slice of a replicated tensor.
    return 0.0;
  } else if (toDim < 0) {
    kind = CollectiveKind::AllGather;
    collectiveBytes = localWithout(to);
  } else {
    kind = CollectiveKind::AllToAll;
    collectiveBytes = localWithout(from) / mesh.getAxisSize(axis);
  }
  return getBestCollective(kind, collectiveBytes, mesh.getGroup(axis),
                           mesh.getCluster())
      .time;
}

double mlir::dpc::getReshardingTime(double bytes, const TensorSharding &from,
                                    const TensorSharding &to,
                                    const StageMesh &mesh) {
  // The tensor axis (inside a node, fast) changes first, the data axis
  // then works on the result.
  TensorSharding middle = from;
  for (auto [dim, axes] : llvm::enumerate(middle.dims))
    axes = (axes & ~unsigned(kTensorAxis)) | (to.dims[dim] & kTensorAxis);
  middle.partial =
      (from.partial & ~unsigned(kTensorAxis)) | (to.partial & kTensorAxis);
  return getReshardingTime(bytes, from, middle, mesh, kTensorAxis) +
         getReshardingTime(bytes, middle, to, mesh, kDataAxis);
}
