//===- Partitioned.cpp - A partitioned step run as the whole step ---------===//
//
// Cuts each global argument into the blocks the ranks of the mesh hold,
// runs the ranks, and puts the result blocks back together: the check that
// a partitioned program computes what the step before partitioning does.
//
//===----------------------------------------------------------------------===//

#include "dpc/Interpreter/Interpreter.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "llvm/ADT/MapVector.h"

#include <cstring>
#include <deque>
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
  Box box;
  box.start = getBlockStart(sharding, mesh, device, shape);
  auto whole =
      RankedTensorType::get(shape, Float32Type::get(mesh.getContext()));
  llvm::append_range(box.size, getLocalType(sharding, whole, mesh).getShape());
  return box;
}

/// Calls `copy(wholeOffset, partOffset, bytes)` for each row of the box
/// `box` of a tensor of `shape` and elements of `element` bytes: rows along
/// the last dimension are contiguous both in the whole and in the box.
template <typename Fn>
void forEachRow(ArrayRef<int64_t> shape, const Box &box, size_t element,
                Fn copy) {
  int64_t rank = shape.size();
  if (rank == 0)
    return copy(0, 0, element);
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int64_t rows = 1;
  for (int64_t size : ArrayRef<int64_t>(box.size).drop_back())
    rows *= size;
  size_t rowBytes = box.size.back() * element;
  SmallVector<int64_t> index(rank, 0);
  for (int64_t row = 0; row < rows && rowBytes > 0; ++row) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += (box.start[d] + index[d]) * strides[d];
    copy(offset * element, row * rowBytes, rowBytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < box.size[d])
        break;
      index[d] = 0;
    }
  }
}

/// The box `box` of `whole`, as a dense tensor.
HostTensor extractBox(const HostTensor &whole, const Box &box) {
  HostTensor part(whole.dtype,
                  std::vector<int64_t>(box.size.begin(), box.size.end()));
  forEachRow(whole.shape, box, ::dpc::getDTypeSize(whole.dtype),
             [&](size_t from, size_t to, size_t bytes) {
               std::memcpy(part.data.data() + to, whole.data.data() + from,
                           bytes);
             });
  return part;
}

/// Writes the dense tensor `part` into the box `box` of `whole`.
void insertBox(HostTensor &whole, const HostTensor &part, const Box &box) {
  forEachRow(whole.shape, box, ::dpc::getDTypeSize(whole.dtype),
             [&](size_t to, size_t from, size_t bytes) {
               std::memcpy(whole.data.data() + to, part.data.data() + from,
                           bytes);
             });
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
/// device are `blocks` (empty for devices that do not hold it): afterwards
/// every device that holds it holds the reduced block.
static LogicalResult reducePartials(func::FuncOp func, unsigned index,
                                    ShardingAttr sharding, MeshOp mesh,
                                    std::vector<HostTensor> &blocks) {
  for (auto [axisAttr, kind] :
       llvm::zip_equal(sharding.getPartialAxes(), sharding.getPartialKinds())) {
    StringRef axis = cast<StringAttr>(axisAttr).getValue();
    std::vector<HostTensor> reduced(blocks.size());
    for (int64_t device = 0; device < int64_t(blocks.size()); ++device) {
      if (blocks[device].shape.empty() && blocks[device].data.empty())
        continue;
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

static ShardingAttr getShardingOf(DictionaryAttr attrs) {
  return attrs ? attrs.getAs<ShardingAttr>(DpcDialect::kShardingAttrName)
               : ShardingAttr();
}

/// Runs `programs[d]` on each device `d` of `mesh`, each on its blocks of
/// `arguments`, and assembles every result (named by its attributes) from
/// the devices whose program returns it.
static FailureOr<std::vector<NamedResult>>
runOnMesh(ArrayRef<func::FuncOp> programs, MeshOp mesh,
          ArrayRef<HostTensor> arguments, const InterpreterOptions &options) {
  int64_t numRanks = mesh.getNumDevices();
  std::vector<std::vector<HostTensor>> perRank(numRanks);
  for (int64_t device = 0; device < numRanks; ++device) {
    func::FuncOp func = programs[device];
    if (arguments.size() != func.getNumArguments())
      return func.emitError("expects ")
             << func.getNumArguments() << " arguments, got "
             << arguments.size();
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      ShardingAttr sharding = getShardingOf(func.getArgAttrDict(index));
      if (!sharding)
        return func.emitError("is partitioned, but argument #")
               << index << " has no sharding";
      Box box = getBox(sharding, mesh, device, argument.shape);
      perRank[device].push_back(extractBox(argument, box));
    }
  }
  FailureOr<std::vector<std::vector<HostTensor>>> ranks =
      interpretRanks(programs, perRank, options);
  if (failed(ranks))
    return failure();

  // Each name's holders: (device, result index), in the order names appear.
  llvm::MapVector<StringRef, SmallVector<std::pair<int64_t, unsigned>>> holders;
  std::deque<std::string> names;
  for (int64_t device = 0; device < numRanks; ++device)
    for (unsigned i = 0, e = func::FuncOp(programs[device]).getNumResults();
         i < e; ++i) {
      func::FuncOp program = programs[device];
      std::string name = getResultName(program, i);
      if (name.empty())
        name = "result" + std::to_string(i);
      auto known = llvm::find(names, name);
      StringRef key = known != names.end()
                          ? StringRef(*known)
                          : StringRef(names.emplace_back(name));
      holders[key].push_back({device, i});
    }
  std::vector<NamedResult> results;
  for (auto &[name, held] : holders) {
    auto [firstDevice, firstIndex] = held.front();
    func::FuncOp func = programs[firstDevice];
    ShardingAttr sharding = getShardingOf(func.getResultAttrDict(firstIndex));
    if (!sharding)
      return func.emitError("is partitioned, but result #")
             << firstIndex << " has no sharding";
    std::vector<HostTensor> blocks(numRanks);
    for (auto [device, index] : held)
      blocks[device] = std::move((*ranks)[device][index]);
    if (failed(reducePartials(func, firstIndex, sharding, mesh, blocks)))
      return failure();
    auto globalType =
        cast<RankedTensorType>(getGlobalResultType(func, firstIndex));
    HostTensor whole(blocks[firstDevice].dtype,
                     std::vector<int64_t>(globalType.getShape().begin(),
                                          globalType.getShape().end()));
    // The first device to hold each box writes it; replicas must agree.
    std::map<std::vector<int64_t>, int64_t> written;
    for (auto [device, index] : held) {
      Box box = getBox(sharding, mesh, device, whole.shape);
      std::vector<int64_t> key(box.start.begin(), box.start.end());
      auto [it, first] = written.try_emplace(key, device);
      if (first) {
        insertBox(whole, blocks[device], box);
        continue;
      }
      if (blocks[device].data != blocks[it->second].data)
        return func.emitError("result '")
               << name << "': ranks " << it->second << " and " << device
               << " hold different values for the same block";
    }
    results.push_back({name.str(), std::move(whole)});
  }
  return results;
}

/// The mesh the arguments of `func` lie on.
static FailureOr<MeshOp> getMeshOf(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (ShardingAttr sharding = getShardingOf(func.getArgAttrDict(i)))
      if (MeshOp mesh = lookupMesh(sharding, func))
        return mesh;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (ShardingAttr sharding = getShardingOf(func.getResultAttrDict(i)))
      if (MeshOp mesh = lookupMesh(sharding, func))
        return mesh;
  return func.emitError("is partitioned, but names no dpc.mesh");
}

FailureOr<std::vector<HostTensor>>
mlir::dpc::interpretPartitioned(func::FuncOp func,
                                ArrayRef<HostTensor> arguments,
                                const InterpreterOptions &options) {
  FailureOr<MeshOp> mesh = getMeshOf(func);
  if (failed(mesh))
    return failure();
  SmallVector<func::FuncOp> programs(mesh->getNumDevices(), func);
  FailureOr<std::vector<NamedResult>> named =
      runOnMesh(programs, *mesh, arguments, options);
  if (failed(named))
    return failure();
  std::vector<HostTensor> results;
  for (NamedResult &result : *named)
    results.push_back(std::move(result.value));
  if (results.size() != func.getNumResults())
    return func.emitError("names two results alike");
  return results;
}

SmallVector<func::FuncOp> mlir::dpc::getPipelineStages(ModuleOp module,
                                                       StringRef name) {
  SmallVector<func::FuncOp> stages;
  for (int64_t s = 0;; ++s) {
    auto stage = module.lookupSymbol<func::FuncOp>(
        (name + ".stage" + llvm::Twine(s)).str());
    if (!stage || !stage->hasAttr(DpcDialect::kPipelineStageAttrName))
      return stages;
    stages.push_back(stage);
  }
}

FailureOr<std::vector<NamedResult>>
mlir::dpc::interpretPipeline(ArrayRef<func::FuncOp> stages,
                             ArrayRef<HostTensor> arguments,
                             const InterpreterOptions &options) {
  FailureOr<MeshOp> mesh = getMeshOf(func::FuncOp(stages.front()));
  if (failed(mesh))
    return failure();
  std::optional<unsigned> axis = mesh->getAxisIndex("pp");
  if (!axis || mesh->getShape()[*axis] != int64_t(stages.size()))
    return func::FuncOp(stages.front()).emitError("is one of ")
           << stages.size() << " pipeline stages, but its mesh's 'pp' axis "
           << "does not have as many";
  SmallVector<func::FuncOp> programs;
  for (int64_t device = 0; device < mesh->getNumDevices(); ++device)
    programs.push_back(stages[getDeviceCoordinates(*mesh, device)[*axis]]);
  return runOnMesh(programs, *mesh, arguments, options);
}
