//===- Partitioned.cpp - A partitioned step run as the whole step ---------===//
//
// Cuts each global argument into the blocks the ranks of the mesh hold,
// runs the ranks, and puts the result blocks back together: the check that
// a partitioned program computes what the step before partitioning does.
//
//===----------------------------------------------------------------------===//

#include "dpc/Interpreter/Interpreter.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include <cstring>
#include <map>

using namespace mlir;
using namespace mlir::dpc;

bool mlir::dpc::isPartitioned(func::FuncOp func) {
  return func->hasAttr(DpcDialect::kPartitionedAttrName);
}

/// The global type of a value of local type `type` laid out as `sharding`.
static Type getGlobal(func::FuncOp func, ShardingAttr sharding, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  MeshOp mesh = sharding ? lookupMesh(sharding, func) : MeshOp();
  if (!isPartitioned(func) || !tensor || !mesh)
    return type;
  return getGlobalType(sharding, tensor, mesh);
}

Type mlir::dpc::getGlobalArgumentType(func::FuncOp func, unsigned index) {
  return getGlobal(
      func,
      func.getArgAttrOfType<ShardingAttr>(index, DpcDialect::kShardingAttrName),
      func.getArgumentTypes()[index]);
}

Type mlir::dpc::getGlobalResultType(func::FuncOp func, unsigned index) {
  return getGlobal(func,
                   func.getResultAttrOfType<ShardingAttr>(
                       index, DpcDialect::kShardingAttrName),
                   func.getResultTypes()[index]);
}

namespace {

/// A block of a tensor: per dimension, its start and size.
struct Box {
  SmallVector<int64_t> start, size;
};

/// The box of `shape` that `device` holds under `sharding` on `mesh`.
Box getBox(ShardingAttr sharding, MeshOp mesh, int64_t device,
           ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> meshShape = mesh.getShape();
  int64_t position = device;
  if (std::optional<ArrayRef<int64_t>> ids = mesh.getDevices())
    position = llvm::find(*ids, device) - ids->begin();
  SmallVector<int64_t> coordinates(meshShape.size());
  for (int64_t i = meshShape.size() - 1; i >= 0; --i) {
    coordinates[i] = position % meshShape[i];
    position /= meshShape[i];
  }
  Box box;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    int64_t block = 0, blocks = 1;
    for (StringRef axis : sharding.getDimAxes(dim)) {
      unsigned index = *mesh.getAxisIndex(axis);
      block = block * meshShape[index] + coordinates[index];
      blocks *= meshShape[index];
    }
    box.size.push_back(size / blocks);
    box.start.push_back(block * (size / blocks));
  }
  return box;
}

/// Copies between the box `box` of `whole` and the dense tensor `part`:
/// into `part` when `toPart`, else back into `whole`.
void copyBox(HostTensor &whole, HostTensor &part, const Box &box, bool toPart) {
  size_t element = ::dpc::getDTypeSize(whole.dtype);
  int64_t rank = whole.shape.size();
  if (rank == 0) {
    if (toPart)
      std::memcpy(part.data.data(), whole.data.data(), element);
    else
      std::memcpy(whole.data.data(), part.data.data(), element);
    return;
  }
  // Rows along the last dimension are contiguous in both.
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * whole.shape[d + 1];
  int64_t rows = part.getNumElements() / std::max<int64_t>(box.size.back(), 1);
  size_t rowBytes = box.size.back() * element;
  SmallVector<int64_t> index(rank, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += (box.start[d] + index[d]) * strides[d];
    std::byte *wholeRow = whole.data.data() + offset * element;
    std::byte *partRow = part.data.data() + row * rowBytes;
    if (toPart)
      std::memcpy(partRow, wholeRow, rowBytes);
    else
      std::memcpy(wholeRow, partRow, rowBytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < box.size[d])
        break;
      index[d] = 0;
    }
  }
}

/// Combines `values` (one block per rank of a group) by `kind`.
template <typename T>
void combine(ArrayRef<HostTensor *> values, ReductionKind kind,
             HostTensor &out) {
  T *result = out.getData<T>();
  int64_t n = out.getNumElements();
  for (int64_t i = 0; i < n; ++i) {
    T acc = values.front()->getData<T>()[i];
    for (HostTensor *value : values.drop_front()) {
      T x = value->getData<T>()[i];
      switch (kind) {
      case ReductionKind::sum:
      case ReductionKind::mean:
        acc += x;
        break;
      case ReductionKind::max:
        acc = std::max(acc, x);
        break;
      case ReductionKind::min:
        acc = std::min(acc, x);
        break;
      }
    }
    if (kind == ReductionKind::mean)
      acc /= static_cast<T>(values.size());
    result[i] = acc;
  }
}

} // namespace

/// Finishes the pending partial results of one result, whose blocks per
/// rank are `blocks`: afterwards every rank holds the reduced block.
static LogicalResult reducePartials(func::FuncOp func, unsigned index,
                                    ShardingAttr sharding, MeshOp mesh,
                                    std::vector<HostTensor> &blocks) {
  for (auto [axisAttr, kind] :
       llvm::zip_equal(sharding.getPartialAxes(), sharding.getPartialKinds())) {
    StringRef axis = cast<StringAttr>(axisAttr).getValue();
    std::vector<HostTensor> reduced(blocks.size());
    for (int64_t device = 0; device < int64_t(blocks.size()); ++device) {
      SmallVector<HostTensor *> group;
      for (int64_t member : mesh.getGroup(device, {axis}))
        group.push_back(&blocks[member]);
      HostTensor &out = reduced[device] = blocks[device];
      switch (out.dtype) {
      case ::dpc::DType::F32:
        combine<float>(group, kind, out);
        break;
      case ::dpc::DType::F64:
        combine<double>(group, kind, out);
        break;
      case ::dpc::DType::I64:
        combine<int64_t>(group, kind, out);
        break;
      default:
        return func.emitError("result #")
               << index << " is a pending partial result of type "
               << ::dpc::getDTypeName(out.dtype)
               << ", which the interpreter does not reduce";
      }
    }
    blocks = std::move(reduced);
  }
  return success();
}

FailureOr<std::vector<HostTensor>>
mlir::dpc::interpretPartitioned(func::FuncOp func,
                                ArrayRef<HostTensor> arguments,
                                const InterpreterOptions &options) {
  MeshOp mesh;
  auto shardingOf = [&](DictionaryAttr attrs) {
    return attrs ? attrs.getAs<ShardingAttr>(DpcDialect::kShardingAttrName)
                 : ShardingAttr();
  };
  SmallVector<ShardingAttr> argShardings, resultShardings;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argShardings.push_back(shardingOf(func.getArgAttrDict(i)));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    resultShardings.push_back(shardingOf(func.getResultAttrDict(i)));
  for (ShardingAttr sharding :
       llvm::concat<ShardingAttr>(argShardings, resultShardings)) {
    if (!sharding)
      return func.emitError("is partitioned, but an argument or result has no "
                            "sharding");
    if (!mesh)
      mesh = lookupMesh(sharding, func);
  }
  if (!mesh)
    return func.emitError("is partitioned, but names no dpc.mesh");
  if (arguments.size() != argShardings.size())
    return func.emitError("expects ")
           << argShardings.size() << " arguments, got " << arguments.size();

  int64_t numRanks = mesh.getNumDevices();
  std::vector<std::vector<HostTensor>> perRank(numRanks);
  for (int64_t device = 0; device < numRanks; ++device) {
    for (auto [argument, sharding] : llvm::zip_equal(arguments, argShardings)) {
      HostTensor whole = argument;
      Box box = getBox(sharding, mesh, device, whole.shape);
      HostTensor part(whole.dtype,
                      std::vector<int64_t>(box.size.begin(), box.size.end()));
      copyBox(whole, part, box, /*toPart=*/true);
      perRank[device].push_back(std::move(part));
    }
  }
  FailureOr<std::vector<std::vector<HostTensor>>> ranks =
      interpretRanks(func, perRank, options);
  if (failed(ranks))
    return failure();

  std::vector<HostTensor> results;
  for (auto [index, sharding] : llvm::enumerate(resultShardings)) {
    std::vector<HostTensor> blocks;
    for (std::vector<HostTensor> &rank : *ranks)
      blocks.push_back(std::move(rank[index]));
    if (failed(reducePartials(func, index, sharding, mesh, blocks)))
      return failure();
    auto globalType = cast<RankedTensorType>(getGlobalResultType(func, index));
    HostTensor whole(blocks.front().dtype,
                     std::vector<int64_t>(globalType.getShape().begin(),
                                          globalType.getShape().end()));
    // The first rank to hold each box writes it; replicas must agree.
    std::map<std::vector<int64_t>, int64_t> written;
    for (int64_t device = 0; device < numRanks; ++device) {
      Box box = getBox(sharding, mesh, device, whole.shape);
      std::vector<int64_t> key(box.start.begin(), box.start.end());
      auto [it, first] = written.try_emplace(key, device);
      if (first) {
        copyBox(whole, blocks[device], box, /*toPart=*/false);
        continue;
      }
      if (blocks[device].data != blocks[it->second].data)
        return func.emitError("result #")
               << index << " ('" << getResultName(func, index) << "'): ranks "
               << it->second << " and " << device
               << " hold different values for the same block";
    }
    results.push_back(std::move(whole));
  }
  return results;
}
