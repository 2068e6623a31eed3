//===- ArtifactRun.cpp - Training from a compiled artifact ----------------===//
//
// The launcher reads the manifest, starts the rendezvous on node 0 and
// forks this node's ranks; LocalRanks ends them all when one fails. Each
// rank connects its communicator, opens the library, cuts its blocks out
// of the global initial values and batches (as the manifest's `blocks`
// say), and runs its program once per step, feeding the updated
// parameters, state and optimizer state back as the next step's
// arguments. Rank 0 gathers what the others hold to report and write.
//
//===----------------------------------------------------------------------===//

#include "ArtifactRun.h"

#include "dpc/Runtime/Checksum.h"
#include "dpc/Runtime/FileIO.h"
#include "dpc/Runtime/LocalRanks.h"
#include "dpc/Runtime/MeshCommunicator.h"
#include "dpc/Runtime/Npy.h"
#include "dpc/Runtime/ProgramAbi.h"
#include "dpc/Runtime/Rendezvous.h"
#include "dpc/Runtime/TensorBoard.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <thread>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::dpc;
namespace json = llvm::json;
using ::dpc::DType;
using ::dpc::HostTensor;
using ::dpc::Status;
using Clock = std::chrono::steady_clock;

namespace {

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// A tensor a program takes or returns.
struct TensorSpec {
  std::string role, name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape, localShape;
  /// Per rank, where its block starts.
  std::vector<std::vector<int64_t>> blocks;
  /// Pending partial reductions: kind and the groups of ranks.
  std::vector<std::pair<std::string, std::vector<std::vector<int>>>> partial;

  /// For integer inputs: synthetic values are drawn from [0, bound).
  int64_t bound = 2;

  std::string key() const { return role + ":" + name; }
};

struct ProgramSpec {
  std::string symbol;
  std::vector<int> ranks;
  int64_t arenaBytes = 0;
  std::vector<TensorSpec> results;
};

struct Manifest {
  std::string dir, library, step, initial;
  int worldSize = 1;
  std::vector<std::vector<std::vector<int>>> groups;
  std::vector<TensorSpec> arguments;
  std::vector<ProgramSpec> programs;
  double predictedStepSeconds = 0, predictedPeakBytes = 0;
};

Status parseError(const std::string &path, const std::string &what) {
  return Status::error(path + ": not a valid dpc artifact manifest: " + what);
}

std::optional<DType> parseDType(StringRef name) {
  static const std::pair<const char *, DType> names[] = {
      {"float32", DType::F32}, {"float64", DType::F64},
      {"float16", DType::F32}, {"bfloat16", DType::F32},
      {"int64", DType::I64},   {"int32", DType::I64},
      {"int16", DType::I64},   {"int8", DType::I64},
      {"bool", DType::I64}};
  for (auto [text, dtype] : names)
    if (name == text)
      return dtype;
  return std::nullopt;
}

bool readInts(const json::Value *value, std::vector<int64_t> &out) {
  const json::Array *array = value ? value->getAsArray() : nullptr;
  if (!array)
    return false;
  for (const json::Value &element : *array) {
    std::optional<int64_t> number = element.getAsInteger();
    if (!number)
      return false;
    out.push_back(*number);
  }
  return true;
}

bool readGroups(const json::Value *value,
                std::vector<std::vector<int>> &groups) {
  const json::Array *array = value ? value->getAsArray() : nullptr;
  if (!array)
    return false;
  for (const json::Value &group : *array) {
    std::vector<int64_t> members;
    if (!readInts(&group, members))
      return false;
    groups.emplace_back(members.begin(), members.end());
  }
  return true;
}

Status parseTensor(const std::string &path, const json::Object &object,
                   int worldSize, TensorSpec &spec) {
  std::optional<StringRef> role = object.getString("role");
  std::optional<StringRef> name = object.getString("name");
  std::optional<StringRef> dtype = object.getString("dtype");
  if (!role || !name || !dtype)
    return parseError(path, "a tensor lacks role, name or dtype");
  spec.role = role->str();
  spec.name = name->str();
  std::optional<DType> parsed = parseDType(*dtype);
  if (!parsed)
    return parseError(path, "tensor '" + spec.name + "' has dtype " +
                                dtype->str() + ", which dpc-run does not hold");
  spec.dtype = *parsed;
  if (!readInts(object.get("shape"), spec.shape) ||
      !readInts(object.get("local_shape"), spec.localShape) ||
      spec.shape.size() != spec.localShape.size())
    return parseError(path, "tensor '" + spec.name + "' has a bad shape");
  const json::Array *blocks = object.getArray("blocks");
  if (!blocks || int(blocks->size()) != worldSize)
    return parseError(path, "tensor '" + spec.name +
                                "' does not give a block for every rank");
  for (const json::Value &block : *blocks) {
    std::vector<int64_t> start;
    if (!readInts(&block, start) || start.size() != spec.shape.size())
      return parseError(path, "tensor '" + spec.name + "' has a bad block");
    for (size_t d = 0; d < start.size(); ++d)
      if (start[d] < 0 || start[d] + spec.localShape[d] > spec.shape[d])
        return parseError(path, "tensor '" + spec.name +
                                    "' has a block outside its shape");
    spec.blocks.push_back(std::move(start));
  }
  if (std::optional<int64_t> bound = object.getInteger("bound");
      bound && *bound > 0)
    spec.bound = *bound;
  if (const json::Array *partial = object.getArray("partial"))
    for (const json::Value &entry : *partial) {
      const json::Object *reduction = entry.getAsObject();
      std::vector<std::vector<int>> groups;
      if (!reduction || !reduction->getString("kind") ||
          !readGroups(reduction->get("groups"), groups))
        return parseError(path, "tensor '" + spec.name +
                                    "' has a bad partial reduction");
      spec.partial.push_back({reduction->getString("kind")->str(), groups});
    }
  return Status::success();
}

Status readManifest(const std::string &dir, Manifest &manifest) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::string file = path.str().str();
  auto buffer = llvm::MemoryBuffer::getFile(file);
  if (!buffer)
    return Status::error(dir + ": not a dpc artifact (no readable "
                               "manifest.json: " +
                         buffer.getError().message() + ")");
  llvm::Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed)
    return parseError(file, llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != StringRef("dpc-artifact"))
    return parseError(file, "its format is not dpc-artifact");
  if (root->getInteger("abi") != DPC_PROGRAM_ABI_VERSION)
    return parseError(file, "it was built for another dpc-run (ABI " +
                                std::to_string(root->getInteger("abi").value_or(0)) +
                                ", this one runs " +
                                std::to_string(DPC_PROGRAM_ABI_VERSION) + ")");
  if (root->getString("backend") != StringRef("cpu"))
    return parseError(file, "its backend is not cpu");
  manifest.dir = dir;
  manifest.library = root->getString("library").value_or("libmodel.so").str();
  manifest.step = root->getString("step").value_or("train_step").str();
  manifest.initial = root->getString("initial").value_or("").str();
  std::optional<int64_t> world = root->getInteger("world_size");
  if (!world || *world < 1 || *world > 65536)
    return parseError(file, "world_size is missing or out of [1, 65536]");
  manifest.worldSize = *world;
  if (const json::Array *groups = root->getArray("groups"))
    for (const json::Value &group : *groups) {
      const json::Object *object = group.getAsObject();
      std::vector<std::vector<int>> members;
      if (!object || !readGroups(object->get("members"), members))
        return parseError(file, "a group has no members");
      manifest.groups.push_back(std::move(members));
    }
  const json::Array *arguments = root->getArray("arguments");
  const json::Array *programs = root->getArray("programs");
  if (!arguments || !programs || programs->empty())
    return parseError(file, "it lists no arguments or no programs");
  for (const json::Value &argument : *arguments) {
    TensorSpec spec;
    if (!argument.getAsObject())
      return parseError(file, "an argument is not an object");
    if (Status status = parseTensor(file, *argument.getAsObject(),
                                    manifest.worldSize, spec);
        status.isError())
      return status;
    manifest.arguments.push_back(std::move(spec));
  }
  for (const json::Value &entry : *programs) {
    const json::Object *object = entry.getAsObject();
    ProgramSpec program;
    std::vector<int64_t> ranks;
    if (!object || !object->getString("symbol") ||
        !readInts(object->get("ranks"), ranks) ||
        !object->getInteger("arena_bytes") || !object->getArray("results"))
      return parseError(file, "a program lacks symbol, ranks, arena_bytes "
                              "or results");
    program.symbol = object->getString("symbol")->str();
    program.ranks.assign(ranks.begin(), ranks.end());
    program.arenaBytes = *object->getInteger("arena_bytes");
    for (const json::Value &result : *object->getArray("results")) {
      TensorSpec spec;
      if (!result.getAsObject())
        return parseError(file, "a result is not an object");
      if (Status status = parseTensor(file, *result.getAsObject(),
                                      manifest.worldSize, spec);
          status.isError())
        return status;
      program.results.push_back(std::move(spec));
    }
    manifest.programs.push_back(std::move(program));
  }
  if (const json::Object *plan = root->getObject("plan"))
  {
    manifest.predictedStepSeconds = plan->getNumber("step_time_s").value_or(0);
    manifest.predictedPeakBytes =
        plan->getNumber("peak_memory_bytes").value_or(0);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Blocks of global tensors
//===----------------------------------------------------------------------===//

/// Calls `copy(globalOffset, blockOffset, bytes)` for every row of the
/// block of `localShape` at `start` in a tensor of `shape`.
template <typename Fn>
void forEachRow(const std::vector<int64_t> &shape,
                const std::vector<int64_t> &localShape,
                const std::vector<int64_t> &start, size_t elementBytes,
                Fn copy) {
  int64_t rank = shape.size();
  if (rank == 0)
    return copy(0, 0, elementBytes);
  llvm::SmallVector<int64_t, 8> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d)
    rows *= localShape[d];
  size_t rowBytes = localShape.back() * elementBytes;
  llvm::SmallVector<int64_t, 8> index(rank, 0);
  for (int64_t row = 0; row < rows && rowBytes > 0; ++row) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += (start[d] + index[d]) * strides[d];
    copy(offset * elementBytes, row * rowBytes, rowBytes);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < localShape[d])
        break;
      index[d] = 0;
    }
  }
}

/// `tensor` converted to the storage of `spec` (float32, float64 or int64).
Status convertForSpec(const TensorSpec &spec, const HostTensor &tensor,
                      HostTensor &out) {
  if (tensor.shape != spec.shape) {
    std::string shape;
    for (int64_t size : tensor.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(size);
    std::string expected;
    for (int64_t size : spec.shape)
      expected += (expected.empty() ? "" : "x") + std::to_string(size);
    return Status::error(spec.role + " '" + spec.name + "' has shape [" +
                         shape + "], the step takes [" + expected + "]");
  }
  out = HostTensor(spec.dtype, spec.shape);
  int64_t n = tensor.getNumElements();
  auto read = [&](int64_t i) -> double {
    switch (tensor.dtype) {
    case DType::F32:
      return tensor.getData<float>()[i];
    case DType::F64:
      return tensor.getData<double>()[i];
    case DType::I64:
      return double(tensor.getData<int64_t>()[i]);
    case DType::I32:
      return tensor.getData<int32_t>()[i];
    case DType::Bool:
    case DType::U8:
      return tensor.getData<uint8_t>()[i];
    default:
      return std::nan("");
    }
  };
  if (spec.dtype == DType::I64 && tensor.dtype == DType::I64) {
    out.data = tensor.data;
    return Status::success();
  }
  for (int64_t i = 0; i < n; ++i) {
    double value = read(i);
    if (std::isnan(value) && !isFloatDType(tensor.dtype))
      return Status::error(spec.role + " '" + spec.name + "' has dtype " +
                           getDTypeName(tensor.dtype) +
                           ", which dpc-run does not convert");
    if (spec.dtype == DType::F32)
      out.getData<float>()[i] = float(value);
    else if (spec.dtype == DType::F64)
      out.getData<double>()[i] = value;
    else
      out.getData<int64_t>()[i] = int64_t(value);
  }
  return Status::success();
}

std::vector<std::byte> extractBlock(const TensorSpec &spec,
                                    const HostTensor &global, int rank) {
  size_t element = getDTypeSize(spec.dtype);
  int64_t count = 1;
  for (int64_t size : spec.localShape)
    count *= size;
  std::vector<std::byte> block(count * element);
  forEachRow(spec.shape, spec.localShape, spec.blocks[rank], element,
             [&](size_t from, size_t to, size_t bytes) {
               std::memcpy(block.data() + to, global.data.data() + from, bytes);
             });
  return block;
}

void insertBlock(const TensorSpec &spec, HostTensor &global, int rank,
                 const std::byte *block) {
  forEachRow(spec.shape, spec.localShape, spec.blocks[rank],
             getDTypeSize(spec.dtype),
             [&](size_t to, size_t from, size_t bytes) {
               std::memcpy(global.data.data() + to, block + from, bytes);
             });
}

//===----------------------------------------------------------------------===//
// One rank
//===----------------------------------------------------------------------===//

/// What the program's host callbacks need: the communicator and the time
/// spent waiting for it.
struct HostState {
  ::dpc::MeshCommunicator *communicator = nullptr;
  std::string error;
  double waitSeconds = 0;
  /// For --trace: the name of each ticket's collective, and the waits.
  bool tracing = false;
  std::map<int64_t, std::string> names;
  struct Span {
    std::string name, category;
    double begin, end; // seconds since the run started
  };
  std::vector<Span> spans;
  Clock::time_point origin = Clock::now();

  double now() const {
    return std::chrono::duration<double>(Clock::now() - origin).count();
  }
};

int64_t hostStart(void *self, const DpcCollectiveCall *call) {
  auto *state = static_cast<HostState *>(self);
  ::dpc::CollectiveRequest request;
  request.kind = static_cast<::dpc::CollectiveKind>(call->kind);
  request.group = call->group;
  request.reduction = static_cast<::dpc::CollectiveReduction>(call->reduction);
  request.element = static_cast<::dpc::CollectiveElement>(call->element);
  request.input = call->input;
  request.output = call->output;
  request.shape.assign(call->shape, call->shape + call->rank);
  request.dim = call->dim;
  request.concatDim = call->concatDim;
  request.shift = call->shift;
  request.name = call->name;
  int64_t ticket = state->communicator->start(std::move(request));
  if (state->tracing)
    state->names[ticket] = call->name;
  return ticket;
}

int32_t hostWait(void *self, int64_t ticket) {
  auto *state = static_cast<HostState *>(self);
  double begin = state->now();
  Status status = state->communicator->wait(ticket);
  double end = state->now();
  state->waitSeconds += end - begin;
  if (state->tracing) {
    auto it = state->names.find(ticket);
    std::string name = it == state->names.end() ? "wait" : it->second;
    // The op's name without its location.
    name = name.substr(0, name.find(" at "));
    state->spans.push_back({name, "communication", begin, end});
    if (it != state->names.end())
      state->names.erase(it);
  }
  if (status.isError()) {
    state->error = status.getMessage();
    return 1;
  }
  return 0;
}

int32_t hostGroupPosition(void *self, int32_t group) {
  return static_cast<HostState *>(self)->communicator->getGroupPosition(group);
}

void hostFail(void *self, const char *message) {
  static_cast<HostState *>(self)->error = message;
}

/// The learning rate of step `step` (1-based).
double getLearningRate(const ArtifactRunOptions &options, double base,
                       int step) {
  double lr = base;
  if (options.warmupSteps > 0 && step <= options.warmupSteps)
    return lr * step / options.warmupSteps;
  double progress =
      options.steps > options.warmupSteps
          ? double(step - options.warmupSteps) /
                double(options.steps - options.warmupSteps)
          : 1.0;
  if (options.lrSchedule == "cosine")
    return lr * 0.5 * (1 + std::cos(M_PI * progress));
  if (options.lrSchedule == "linear")
    return lr * (1 - progress);
  return lr;
}

/// The global batches of --data FILE.npz, by input name.
struct DataSource {
  llvm::StringMap<HostTensor> arrays;
  /// How many batches each array holds (its leading dimension over the
  /// batch's).
  int64_t batches = 1;
};

Status loadData(const ArtifactRunOptions &options, const Manifest &manifest,
                DataSource &data) {
  if (options.data == "synthetic")
    return Status::success();
  std::vector<::dpc::NamedTensor> tensors;
  if (Status status = ::dpc::readNpzFile(options.data, tensors);
      status.isError())
    return status;
  for (::dpc::NamedTensor &tensor : tensors)
    data.arrays[tensor.name] = std::move(tensor.tensor);
  data.batches = -1;
  for (const TensorSpec &spec : manifest.arguments) {
    if (spec.role != "input")
      continue;
    auto it = data.arrays.find(spec.name);
    if (it == data.arrays.end())
      return Status::error(options.data + ": has no array '" + spec.name +
                           "', an input of the step");
    const HostTensor &array = it->second;
    if (spec.shape.empty() || array.shape.size() != spec.shape.size() ||
        !std::equal(spec.shape.begin() + 1, spec.shape.end(),
                    array.shape.begin() + 1) ||
        array.shape[0] % spec.shape[0] != 0 || array.shape[0] == 0)
      return Status::error(options.data + ": array '" + spec.name +
                           "' is not a whole number of the step's batches "
                           "of its shape");
    int64_t count = array.shape[0] / spec.shape[0];
    data.batches = data.batches < 0 ? count : std::min(data.batches, count);
  }
  if (data.batches < 0)
    data.batches = 1;
  return Status::success();
}

/// The global value of input `spec` at step `step` (1-based).
Status getBatch(const ArtifactRunOptions &options, const TensorSpec &spec,
                const DataSource &data, int step, HostTensor &out) {
  if (options.data != "synthetic") {
    const HostTensor &array = data.arrays.find(spec.name)->second;
    HostTensor slice(array.dtype, spec.shape);
    size_t bytes = slice.data.size();
    int64_t index = (step - 1) % data.batches;
    std::memcpy(slice.data.data(), array.data.data() + index * bytes, bytes);
    return convertForSpec(spec, slice, out);
  }
  // Every rank draws the same global batch and keeps its block.
  out = HostTensor(spec.dtype, spec.shape);
  std::mt19937_64 engine(options.seed * 1000003 + step * 7919 +
                         std::hash<std::string>()(spec.name));
  int64_t n = out.getNumElements();
  if (spec.dtype == DType::I64) {
    // Labels and token ids: valid classes and rows of what they index.
    std::uniform_int_distribution<int64_t> draw(0, spec.bound - 1);
    for (int64_t i = 0; i < n; ++i)
      out.getData<int64_t>()[i] = draw(engine);
    return Status::success();
  }
  std::normal_distribution<double> draw(0.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    if (spec.dtype == DType::F64)
      out.getData<double>()[i] = draw(engine);
    else
      out.getData<float>()[i] = float(draw(engine));
  }
  return Status::success();
}

double getPeakResidentBytes() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) * 1024.0;
}

/// Appends `value`'s bytes to `out`.
template <typename T> void append(std::string &out, const T &value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// Reads the checkpoint in `dir` (its `latest`, or `dir` itself when it is
/// one step's directory): every tensor, whole, keyed "role:name", and the
/// step it was saved after. Shards are checked against the sizes and
/// CRC-32Cs meta.json records; `where` is set to the step's directory.
Status loadCheckpoint(const std::string &dir,
                      std::vector<::dpc::NamedTensor> &tensors, int &step,
                      std::string &where) {
  llvm::SmallString<128> stepDir(dir);
  std::string latest;
  llvm::SmallString<128> latestPath(dir);
  llvm::sys::path::append(latestPath, "latest");
  if (::dpc::readFile(latestPath.str().str(), latest).isSuccess())
    llvm::sys::path::append(stepDir, llvm::StringRef(latest).trim());
  where = stepDir.str().str();
  llvm::SmallString<128> metaPath(stepDir);
  llvm::sys::path::append(metaPath, "meta.json");
  std::string text;
  if (Status status = ::dpc::readFile(metaPath.str().str(), text);
      status.isError())
    return Status::error(dir + ": not a dpc checkpoint (" +
                         status.getMessage() + ")");
  llvm::Expected<json::Value> parsed = json::parse(text);
  const json::Object *meta = parsed ? parsed->getAsObject() : nullptr;
  if (!parsed)
    llvm::consumeError(parsed.takeError());
  if (!meta || meta->getString("format") != llvm::StringRef("dpc-checkpoint") ||
      !meta->getInteger("step") || !meta->getArray("tensors") ||
      !meta->getArray("shards"))
    return Status::error(metaPath.str().str() +
                         ": not a dpc checkpoint's meta.json");
  step = *meta->getInteger("step");
  // The whole tensors, filled block by block.
  llvm::StringMap<size_t> index;
  for (const json::Value &entry : *meta->getArray("tensors")) {
    const json::Object *object = entry.getAsObject();
    std::vector<int64_t> shape;
    std::optional<DType> dtype =
        object ? parseDType(object->getString("dtype").value_or(""))
               : std::nullopt;
    if (!object || !object->getString("key") || !dtype ||
        !readInts(object->get("shape"), shape))
      return Status::error(metaPath.str().str() + ": a tensor is malformed");
    index[*object->getString("key")] = tensors.size();
    tensors.push_back(
        {object->getString("key")->str(), HostTensor(*dtype, shape)});
  }
  for (const json::Value &entry : *meta->getArray("shards")) {
    const json::Object *object = entry.getAsObject();
    if (!object || !object->getString("file") || !object->getInteger("bytes") ||
        !object->getInteger("crc32c"))
      return Status::error(metaPath.str().str() + ": a shard is malformed");
    llvm::SmallString<128> file(stepDir);
    llvm::sys::path::append(file, *object->getString("file"));
    std::string bytes;
    if (Status status = ::dpc::readFile(file.str().str(), bytes);
        status.isError())
      return status;
    if (int64_t(bytes.size()) != *object->getInteger("bytes") ||
        int64_t(::dpc::crc32c(bytes.data(), bytes.size())) !=
            *object->getInteger("crc32c"))
      return Status::error(file.str().str() +
                           ": the checkpoint shard is corrupt (its size or "
                           "CRC-32C differs from meta.json's)");
    std::vector<::dpc::NamedTensor> blocks;
    if (Status status = ::dpc::readNpzFile(file.str().str(), blocks);
        status.isError())
      return status;
    for (::dpc::NamedTensor &block : blocks) {
      auto [key, startText] = llvm::StringRef(block.name).rsplit('@');
      auto it = index.find(key);
      std::vector<int64_t> start;
      llvm::SmallVector<llvm::StringRef> parts;
      startText.split(parts, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef part : parts) {
        int64_t value;
        if (part.getAsInteger(10, value))
          return Status::error(file.str().str() + ": block '" + block.name +
                               "' has a malformed name");
        start.push_back(value);
      }
      if (it == index.end())
        return Status::error(file.str().str() + ": block '" + block.name +
                             "' belongs to no tensor of meta.json");
      HostTensor &whole = tensors[it->second].tensor;
      bool fits = start.size() == whole.shape.size() &&
                  block.tensor.shape.size() == whole.shape.size() &&
                  block.tensor.dtype == whole.dtype;
      for (size_t d = 0; fits && d < start.size(); ++d)
        fits = start[d] >= 0 &&
               start[d] + block.tensor.shape[d] <= whole.shape[d];
      if (!fits)
        return Status::error(file.str().str() + ": block '" + block.name +
                             "' does not fit its tensor");
      forEachRow(whole.shape, block.tensor.shape, start,
                 getDTypeSize(whole.dtype),
                 [&](size_t to, size_t from, size_t size) {
                   std::memcpy(whole.data.data() + to,
                               block.tensor.data.data() + from, size);
                 });
    }
  }
  return Status::success();
}

class RankRunner {
public:
  RankRunner(const ArtifactRunOptions &options, const Manifest &manifest,
             int rank, int ranksOnNode)
      : options(options), manifest(manifest), rank(rank),
        ranksOnNode(ranksOnNode) {}

  /// Runs every step; `report` is rank 0's JSON report.
  Status run(const ::dpc::MeshCommunicator::Options &connection,
             std::string &report);

private:
  Status loadLibrary();
  Status initializeArguments();
  Status runStep(int step, double lr, double &loss, bool &hasLoss);
  /// The global values of every parameter, state and optimizer slot on
  /// rank 0 (empty elsewhere).
  Status gatherState(std::vector<::dpc::NamedTensor> &global);
  Status writeOutputs(const std::vector<::dpc::NamedTensor> &global,
                      const std::string &dir);
  /// Gathers every rank's spans; rank 0 writes them as a Chrome trace.
  Status writeTrace();
  /// Whether this rank's copy of argument `spec` is kept up to date: its
  /// program returns it, or no program does.
  bool keepsUpToDate(const TensorSpec &spec) const;
  /// Writes this rank's shard of the checkpoint of step `step`; rank 0
  /// then publishes it (Checkpoint layout: see saveCheckpoint).
  Status saveCheckpoint(int step);

  const ArtifactRunOptions &options;
  const Manifest &manifest;
  int rank, ranksOnNode;
  std::unique_ptr<::dpc::MeshCommunicator> communicator;
  HostState host;
  const ProgramSpec *program = nullptr;
  DpcProgramFn function = nullptr;
  std::vector<std::vector<std::byte>> arguments, results;
  std::vector<char, std::allocator<char>> arenaStorage;
  char *arena = nullptr;
  DataSource data;
  double defaultLr = 0.01;
  int firstStep = 1;
  /// The step's gradient norm, when the program returns it (clipping).
  double gradNorm = std::nan("");
  std::unique_ptr<::dpc::TensorBoardWriter> tensorboard;
  /// Compares the replicas of each block gathered; names the first that
  /// differ.
};

Status RankRunner::loadLibrary() {
  llvm::SmallString<128> path(manifest.dir);
  llvm::sys::path::append(path, manifest.library);
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status::error(std::string("cannot load the artifact's library: ") +
                         ::dlerror());
  auto version = reinterpret_cast<int32_t (*)()>(
      ::dlsym(handle, "dpc_program_abi_version"));
  if (!version || version() != DPC_PROGRAM_ABI_VERSION)
    return Status::error(path.str().str() +
                         ": built for another dpc-run ABI; recompile it");
  for (const ProgramSpec &candidate : manifest.programs)
    if (std::find(candidate.ranks.begin(), candidate.ranks.end(), rank) !=
        candidate.ranks.end())
      program = &candidate;
  if (!program)
    return Status::error("the manifest gives rank " + std::to_string(rank) +
                         " no program");
  function = reinterpret_cast<DpcProgramFn>(
      ::dlsym(handle, program->symbol.c_str()));
  if (!function)
    return Status::error(path.str().str() + ": has no program '" +
                         program->symbol + "'");
  // The node's cores are shared among its ranks: each runs its kernels
  // (OpenBLAS, oneDNN's OpenMP) on its share, unless the user said.
  if (!std::getenv("OMP_NUM_THREADS") && !std::getenv("OPENBLAS_NUM_THREADS")) {
    int threads = std::max(1u, std::thread::hardware_concurrency() /
                                   unsigned(std::max(1, ranksOnNode)));
    // Looked up through the library: its dependencies are loaded locally.
    if (auto setOpenMp = reinterpret_cast<void (*)(int)>(
            ::dlsym(handle, "omp_set_num_threads")))
      setOpenMp(threads);
    for (void *scope : {handle, RTLD_DEFAULT})
      if (auto setBlas = reinterpret_cast<void (*)(int)>(
              ::dlsym(scope, "openblas_set_num_threads")))
        setBlas(threads);
  }
  // 64-byte aligned, as the buffer plan assumes.
  arenaStorage.resize(program->arenaBytes + 64);
  arena = reinterpret_cast<char *>(
      (reinterpret_cast<uintptr_t>(arenaStorage.data()) + 63) & ~uintptr_t(63));
  return Status::success();
}

Status RankRunner::initializeArguments() {
  std::vector<::dpc::NamedTensor> initial;
  std::string initPath = options.init;
  if (options.resumeDir.empty() && initPath.empty() &&
      !manifest.initial.empty()) {
    llvm::SmallString<128> file(manifest.dir);
    llvm::sys::path::append(file, manifest.initial);
    initPath = file.str().str();
  }
  if (!options.resumeDir.empty()) {
    int step = 0;
    if (Status status = loadCheckpoint(options.resumeDir, initial, step,
                                       initPath);
        status.isError())
      return status;
    firstStep = step + 1;
  } else if (!initPath.empty()) {
    if (Status status = ::dpc::readNpzFile(initPath, initial); status.isError())
      return status;
  }
  llvm::StringMap<const HostTensor *> byName;
  for (const ::dpc::NamedTensor &tensor : initial)
    byName[tensor.name] = &tensor.tensor;

  for (const TensorSpec &spec : manifest.arguments) {
    std::vector<std::byte> block;
    size_t bytes = getDTypeSize(spec.dtype);
    for (int64_t size : spec.localShape)
      bytes *= size;
    if (spec.role == "param" || spec.role == "state" ||
        (spec.role == "opt_state" && !options.resumeDir.empty())) {
      // A checkpoint names tensors by role, an initial-values file by name.
      auto it = byName.find(options.resumeDir.empty() ? spec.name : spec.key());
      if (it == byName.end())
        return Status::error(
            (initPath.empty() ? std::string("the artifact has no initial "
                                            "values (compile it from ONNX, "
                                            "or pass --init FILE.npz)")
                              : initPath) +
            ": no value for " + spec.role + " '" + spec.name + "'");
      HostTensor converted;
      if (Status status = convertForSpec(spec, *it->second, converted);
          status.isError())
        return Status::error(initPath + ": " + status.getMessage());
      block = extractBlock(spec, converted, rank);
    } else {
      block.assign(bytes, std::byte(0));
    }
    arguments.push_back(std::move(block));
  }
  for (const TensorSpec &spec : program->results) {
    size_t bytes = getDTypeSize(spec.dtype);
    for (int64_t size : spec.localShape)
      bytes *= size;
    results.emplace_back(bytes);
  }
  return Status::success();
}

Status RankRunner::runStep(int step, double lr, double &loss, bool &hasLoss) {
  for (auto [index, spec] : llvm::enumerate(manifest.arguments)) {
    std::vector<std::byte> &block = arguments[index];
    if (spec.role == "input") {
      HostTensor global;
      if (Status status = getBatch(options, spec, data, step, global);
          status.isError())
        return status;
      block = extractBlock(spec, global, rank);
    } else if (spec.role == "hyper") {
      double value = spec.name == "lr"     ? lr
                     : spec.name == "step" ? double(step)
                     : spec.name == "seed" ? double(options.seed)
                                           : 0.0;
      if (spec.dtype == DType::F32) {
        float narrow = float(value);
        std::memcpy(block.data(), &narrow, sizeof(float));
      } else if (spec.dtype == DType::F64) {
        std::memcpy(block.data(), &value, sizeof(double));
      } else {
        int64_t integer = int64_t(value);
        std::memcpy(block.data(), &integer, sizeof(int64_t));
      }
    }
  }
  std::vector<void *> argPointers, resultPointers;
  for (std::vector<std::byte> &block : arguments)
    argPointers.push_back(block.data());
  for (std::vector<std::byte> &block : results)
    resultPointers.push_back(block.data());
  DpcHost callbacks{&host,    hostStart, hostWait, hostGroupPosition,
                    hostFail, options.checkFinite ? 1 : 0};
  if (function(&callbacks, argPointers.data(), resultPointers.data(), arena))
    return Status::error("rank " + std::to_string(rank) + ", step " +
                         std::to_string(step) + ": " + host.error);
  gradNorm = std::nan("");
  for (auto [index, spec] : llvm::enumerate(program->results))
    if (spec.role == "output" && spec.name == "grad_norm" &&
        spec.dtype == DType::F32)
      gradNorm = *reinterpret_cast<const float *>(results[index].data());

  // The updated values are the next step's arguments.
  hasLoss = false;
  for (auto [index, spec] : llvm::enumerate(program->results)) {
    if (spec.role == "output" && spec.name == "loss") {
      hasLoss = true;
      loss = spec.dtype == DType::F64
                 ? *reinterpret_cast<const double *>(results[index].data())
                 : *reinterpret_cast<const float *>(results[index].data());
      if (!std::isfinite(loss))
        return Status::error(
            "rank " + std::to_string(rank) + ", step " + std::to_string(step) +
            ": the loss is " + std::to_string(loss) +
            (options.checkFinite ? ""
                                 : "; rerun with --check-finite to find the "
                                   "first op that made a NaN or Inf"));
      continue;
    }
    for (auto [argIndex, argSpec] : llvm::enumerate(manifest.arguments))
      if (argSpec.key() == spec.key() &&
          arguments[argIndex].size() == results[index].size()) {
        std::swap(arguments[argIndex], results[index]);
        break;
      }
  }
  return Status::success();
}

bool RankRunner::keepsUpToDate(const TensorSpec &spec) const {
  // A pipeline stage holds the other stages' parameters, unused.
  auto updatedBy = [&](const ProgramSpec &candidate) {
    return llvm::any_of(candidate.results, [&](const TensorSpec &result) {
      return result.key() == spec.key();
    });
  };
  return updatedBy(*program) || llvm::none_of(manifest.programs, updatedBy);
}

/// The name of a block in a checkpoint shard: "role:name@start,start".
std::string getBlockName(const TensorSpec &spec, int rank) {
  std::string name = spec.key() + "@";
  for (auto [i, start] : llvm::enumerate(spec.blocks[rank]))
    name += (i ? "," : "") + std::to_string(start);
  return name;
}

Status RankRunner::saveCheckpoint(int step) {
  // DIR/step-<K>.partial/rank<r>.npz, one per rank, each written through a
  // temporary file, fsync and rename; then rank 0 writes meta.json (the
  // tensors, and every shard's size and CRC-32C), renames the directory to
  // DIR/step-<K> and points DIR/latest at it. A run killed at any point
  // leaves DIR/latest naming a whole checkpoint.
  std::string name = "step-" + std::to_string(step);
  llvm::SmallString<128> partial(options.saveDir);
  llvm::sys::path::append(partial, name + ".partial");
  if (std::error_code error = llvm::sys::fs::create_directories(partial))
    return Status::error(partial.str().str() + ": " + error.message());
  std::vector<::dpc::NamedTensor> shard;
  for (auto [index, spec] : llvm::enumerate(manifest.arguments)) {
    if ((spec.role != "param" && spec.role != "state" &&
         spec.role != "opt_state") ||
        !keepsUpToDate(spec))
      continue;
    HostTensor block(spec.dtype, spec.localShape);
    std::memcpy(block.data.data(), arguments[index].data(),
                arguments[index].size());
    shard.push_back({getBlockName(spec, rank), std::move(block)});
  }
  llvm::SmallString<128> file(partial);
  std::string shardName = "rank" + std::to_string(rank) + ".npz";
  llvm::sys::path::append(file, shardName);
  if (Status status = ::dpc::writeNpzFile(file.str().str(), shard);
      status.isError())
    return status;
  std::string written;
  if (Status status = ::dpc::readFile(file.str().str(), written);
      status.isError())
    return status;
  std::string summary = std::to_string(written.size()) + " " +
                        std::to_string(::dpc::crc32c(written.data(),
                                                     written.size()));
  std::vector<std::string> all;
  if (Status status = communicator->allGatherWorld(summary, all);
      status.isError())
    return status;
  if (rank == options.failRank && options.failStep == -step) {
    llvm::errs() << "dpc-run: rank " << rank << " stops while saving step "
                 << step << " (--fail-rank)\n";
    llvm::errs().flush();
    ::_exit(3);
  }
  if (rank == 0) {
    json::Array tensors, shards;
    for (const TensorSpec &spec : manifest.arguments)
      if (spec.role == "param" || spec.role == "state" ||
          spec.role == "opt_state") {
        json::Array shape;
        for (int64_t size : spec.shape)
          shape.push_back(size);
        tensors.push_back(json::Object{{"key", spec.key()},
                                       {"dtype", getDTypeName(spec.dtype)},
                                       {"shape", std::move(shape)}});
      }
    for (auto [from, text] : llvm::enumerate(all)) {
      auto [bytes, crc] = llvm::StringRef(text).split(' ');
      shards.push_back(json::Object{
          {"file", "rank" + std::to_string(from) + ".npz"},
          {"bytes", std::stoll(bytes.str())},
          {"crc32c", std::stoll(crc.str())}});
    }
    std::string meta;
    llvm::raw_string_ostream os(meta);
    os << llvm::formatv("{0:2}",
                        json::Value(json::Object{
                            {"format", "dpc-checkpoint"},
                            {"step", step},
                            {"world_size", manifest.worldSize},
                            {"tensors", std::move(tensors)},
                            {"shards", std::move(shards)}}));
    llvm::SmallString<128> metaPath(partial);
    llvm::sys::path::append(metaPath, "meta.json");
    if (Status status =
            ::dpc::writeFileAtomically(metaPath.str().str(), meta);
        status.isError())
      return status;
    llvm::SmallString<128> final(options.saveDir);
    llvm::sys::path::append(final, name);
    llvm::sys::fs::remove_directories(final);
    if (std::error_code error = llvm::sys::fs::rename(partial, final))
      return Status::error(final.str().str() + ": " + error.message());
    llvm::SmallString<128> latest(options.saveDir);
    llvm::sys::path::append(latest, "latest");
    std::string previous;
    (void)::dpc::readFile(latest.str().str(), previous);
    if (Status status =
            ::dpc::writeFileAtomically(latest.str().str(), name + "\n");
        status.isError())
      return status;
    // The previous checkpoint is kept, older ones are removed.
    std::error_code error;
    for (llvm::sys::fs::directory_iterator it(options.saveDir, error), end;
         !error && it != end; it.increment(error)) {
      std::string entry = llvm::sys::path::filename(it->path()).str();
      if (llvm::StringRef(entry).starts_with("step-") && entry != name &&
          entry + "\n" != previous)
        llvm::sys::fs::remove_directories(it->path());
    }
  }
  // Nobody writes the next checkpoint before this one is published.
  return communicator->barrier();
}

Status RankRunner::gatherState(std::vector<::dpc::NamedTensor> &global) {
  // Each rank sends the blocks it keeps up to date.
  std::string mine;
  for (auto [index, spec] : llvm::enumerate(manifest.arguments)) {
    if (spec.role != "param" && spec.role != "state" &&
        spec.role != "opt_state")
      continue;
    if (!keepsUpToDate(spec))
      continue;
    append(mine, uint64_t(index));
    append(mine, uint64_t(arguments[index].size()));
    mine.append(reinterpret_cast<const char *>(arguments[index].data()),
                arguments[index].size());
  }
  std::vector<std::string> all;
  if (Status status = communicator->allGatherWorld(mine, all);
      status.isError())
    return status;
  if (rank != 0)
    return Status::success();
  std::vector<HostTensor> tensors(manifest.arguments.size());
  std::vector<bool> present(manifest.arguments.size());
  // The first holder of each block, for comparing the replicas.
  std::vector<std::map<std::vector<int64_t>, std::pair<int, const char *>>>
      holders(manifest.arguments.size());
  for (auto [from, bytes] : llvm::enumerate(all)) {
    size_t at = 0;
    while (at + 16 <= bytes.size()) {
      uint64_t index, size;
      std::memcpy(&index, bytes.data() + at, 8);
      std::memcpy(&size, bytes.data() + at + 8, 8);
      at += 16;
      const TensorSpec &spec = manifest.arguments[index];
      if (!present[index]) {
        tensors[index] = HostTensor(spec.dtype, spec.shape);
        present[index] = true;
      }
      const char *block = bytes.data() + at;
      auto [holder, first] = holders[index].try_emplace(
          spec.blocks[from], std::make_pair(int(from), block));
      if (!first && options.checkSync &&
          std::memcmp(holder->second.second, block, size) != 0)
        return Status::error(
            "--check-sync: ranks " + std::to_string(holder->second.first) +
            " and " + std::to_string(from) + " hold different values for " +
            "the same block of " + spec.role + " '" + spec.name +
            "': the replicas have diverged");
      insertBlock(spec, tensors[index], from,
                  reinterpret_cast<const std::byte *>(block));
      at += size;
    }
  }
  for (auto [index, spec] : llvm::enumerate(manifest.arguments))
    if (present[index])
      global.push_back({spec.key(), std::move(tensors[index])});
  return Status::success();
}

Status RankRunner::writeOutputs(const std::vector<::dpc::NamedTensor> &global,
                                const std::string &dir) {
  if (std::error_code error = llvm::sys::fs::create_directories(dir))
    return Status::error(dir + ": cannot create the directory: " +
                         error.message());
  for (const ::dpc::NamedTensor &tensor : global) {
    // Named as the interpreter names results: by the attribute's value.
    std::string name = tensor.name.substr(tensor.name.find(':') + 1);
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, ::dpc::getNpyFileName(name));
    if (Status status = ::dpc::writeNpyFile(path.str().str(), tensor.tensor);
        status.isError())
      return status;
  }
  return Status::success();
}

Status RankRunner::writeTrace() {
  json::Array events;
  for (const HostState::Span &span : host.spans)
    events.push_back(json::Object{
        {"name", span.name},
        {"cat", span.category},
        {"ph", "X"},
        {"ts", span.begin * 1e6},
        {"dur", (span.end - span.begin) * 1e6},
        {"pid", rank},
        {"tid", span.category == "compute" ? 0 : 1}});
  std::string mine;
  llvm::raw_string_ostream os(mine);
  os << json::Value(std::move(events));
  std::vector<std::string> all;
  if (Status status = communicator->allGatherWorld(mine, all);
      status.isError())
    return status;
  if (rank != 0)
    return Status::success();
  json::Array trace;
  for (auto [from, text] : llvm::enumerate(all)) {
    trace.push_back(json::Object{{"name", "process_name"},
                                 {"ph", "M"},
                                 {"pid", int64_t(from)},
                                 {"args", json::Object{{"name", "rank " + std::to_string(from)}}}});
    for (const char *thread : {"compute", "exposed communication"})
      trace.push_back(json::Object{
          {"name", "thread_name"},
          {"ph", "M"},
          {"pid", int64_t(from)},
          {"tid", thread == std::string("compute") ? 0 : 1},
          {"args", json::Object{{"name", thread}}}});
    llvm::Expected<json::Value> parsed = json::parse(text);
    if (!parsed)
      return Status::error("rank " + std::to_string(from) +
                           " sent a broken trace: " +
                           llvm::toString(parsed.takeError()));
    if (json::Array *array = parsed->getAsArray())
      for (json::Value &event : *array)
        trace.push_back(std::move(event));
  }
  std::string text;
  llvm::raw_string_ostream out(text);
  out << json::Value(json::Object{{"traceEvents", std::move(trace)},
                                  {"displayTimeUnit", "ms"}});
  return ::dpc::writeFileAtomically(options.traceFile, text);
}

Status RankRunner::run(const ::dpc::MeshCommunicator::Options &connection,
                       std::string &report) {
  if (Status status = ::dpc::MeshCommunicator::connect(connection,
                                                       communicator);
      status.isError())
    return Status::error("rank " + std::to_string(rank) +
                         ": cannot join the job: " + status.getMessage());
  host.communicator = communicator.get();
  if (Status status = loadLibrary(); status.isError())
    return status;
  if (Status status = initializeArguments(); status.isError())
    return status;
  if (Status status = loadData(options, manifest, data); status.isError())
    return status;
  double baseLr = options.lr >= 0 ? options.lr : defaultLr;
  host.tracing = !options.traceFile.empty();
  if (rank == 0 && !options.tensorboardDir.empty()) {
    tensorboard = std::make_unique<::dpc::TensorBoardWriter>();
    if (Status status = tensorboard->open(options.tensorboardDir);
        status.isError())
      return status;
  }

  json::Array losses, stepTimes, waitTimes;
  double totalSeconds = 0, totalWait = 0;
  int64_t batchSize = 0;
  for (const TensorSpec &spec : manifest.arguments)
    if (spec.role == "input" && !spec.shape.empty())
      batchSize = std::max(batchSize, spec.shape[0]);
  int lastStep = firstStep + options.steps - 1;
  for (int step = firstStep; step <= lastStep; ++step) {
    if (rank == options.failRank && step == options.failStep) {
      llvm::errs() << "dpc-run: rank " << rank
                   << (options.hang ? " hangs" : " stops") << " at step "
                   << step << " (--fail-rank)\n";
      llvm::errs().flush();
      // A hung rank holds its connections open and never answers.
      while (options.hang)
        ::pause();
      ::_exit(3);
    }
    host.waitSeconds = 0;
    double traceBegin = host.now();
    Clock::time_point begin = Clock::now();
    double loss = 0;
    bool hasLoss = false;
    if (Status status =
            runStep(step, getLearningRate(options, baseLr, step), loss, hasLoss);
        status.isError())
      return status;
    double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    if (host.tracing)
      host.spans.push_back({"step " + std::to_string(step), "compute",
                            traceBegin, host.now()});
    // The loss and gradient norm live on the last pipeline stage: share
    // them with everyone.
    bool hasNorm = !std::isnan(gradNorm);
    double shared[4] = {hasLoss ? loss : 0.0, hasLoss ? 1.0 : 0.0,
                        hasNorm ? gradNorm : 0.0, hasNorm ? 1.0 : 0.0};
    if (Status status = communicator->allReduceWorld(shared, 4);
        status.isError())
      return status;
    double meanLoss = shared[1] > 0 ? shared[0] / shared[1] : std::nan("");
    double meanNorm = shared[3] > 0 ? shared[2] / shared[3] : std::nan("");
    if (tensorboard) {
      std::vector<std::pair<std::string, double>> scalars = {
          {"loss", meanLoss},
          {"samples_per_second", batchSize / seconds},
          {"communication_share", host.waitSeconds / seconds}};
      if (!std::isnan(meanNorm))
        scalars.push_back({"grad_norm", meanNorm});
      if (Status status = tensorboard->addScalars(step, scalars);
          status.isError())
        return status;
    }
    if (options.checkSync) {
      std::vector<::dpc::NamedTensor> ignored;
      if (Status status = gatherState(ignored); status.isError())
        return Status::error(status.getMessage() + " (after step " +
                             std::to_string(step) + ")");
    }
    totalSeconds += seconds;
    totalWait += host.waitSeconds;
    losses.push_back(meanLoss);
    stepTimes.push_back(seconds);
    waitTimes.push_back(host.waitSeconds);
    if (rank == 0) {
      // A progress line rewritten in place on a terminal; one per step in
      // a log.
      bool terminal = ::isatty(STDERR_FILENO);
      llvm::errs() << llvm::formatv(
          "{0}step {1,4}/{2}  loss {3,10:f6}  {4,9:f1} samples/s{5}",
          terminal ? "\r" : "", step, lastStep, meanLoss, batchSize / seconds,
          terminal ? "" : "\n");
      llvm::errs().flush();
    }
    if (!options.saveDir.empty() && options.saveEvery > 0 &&
        (step % options.saveEvery == 0 || step == lastStep))
      if (Status status = saveCheckpoint(step); status.isError())
        return status;
  }
  if (rank == 0 && ::isatty(STDERR_FILENO))
    llvm::errs() << "\n";

  if (host.tracing)
    if (Status status = writeTrace(); status.isError())
      return status;
  std::vector<::dpc::NamedTensor> global;
  if (!options.outputDir.empty()) {
    if (Status status = gatherState(global); status.isError())
      return status;
    if (rank == 0)
      if (Status status = writeOutputs(global, options.outputDir);
          status.isError())
        return status;
  }

  // Rank 0's report, with every rank's peak memory (resident, and held in
  // tensors: arguments, results and the arena) and waiting time.
  double tensorBytes = double(program->arenaBytes);
  for (const std::vector<std::byte> &block : arguments)
    tensorBytes += block.size();
  for (const std::vector<std::byte> &block : results)
    tensorBytes += block.size();
  std::vector<double> perRank(3 * manifest.worldSize, 0.0);
  perRank[3 * rank] = getPeakResidentBytes();
  perRank[3 * rank + 1] = totalWait;
  perRank[3 * rank + 2] = tensorBytes;
  if (Status status =
          communicator->allReduceWorld(perRank.data(), perRank.size());
      status.isError())
    return status;
  if (rank != 0)
    return Status::success();
  int steps = options.steps;
  double meanStep = totalSeconds / std::max(steps, 1);
  double exposed = totalWait / std::max(steps, 1);
  json::Array peaks, tensors;
  double peakMax = 0, tensorMax = 0;
  for (int r = 0; r < manifest.worldSize; ++r) {
    peaks.push_back(perRank[3 * r]);
    tensors.push_back(perRank[3 * r + 2]);
    peakMax = std::max(peakMax, perRank[3 * r]);
    tensorMax = std::max(tensorMax, perRank[3 * r + 2]);
  }
  json::Object object{
      {"steps", steps},
      {"world_size", manifest.worldSize},
      {"batch_size", batchSize},
      {"losses", std::move(losses)},
      {"step_seconds", std::move(stepTimes)},
      {"exposed_communication_seconds", std::move(waitTimes)},
      {"mean_step_seconds", meanStep},
      {"samples_per_second", batchSize / meanStep},
      {"communication_share", exposed / meanStep},
      {"peak_memory_bytes", std::move(peaks)},
      {"tensor_memory_bytes", std::move(tensors)},
      {"arena_bytes", program->arenaBytes},
      {"predicted_step_seconds", manifest.predictedStepSeconds},
      {"predicted_peak_memory_bytes", manifest.predictedPeakBytes}};
  llvm::raw_string_ostream os(report);
  os << json::Value(std::move(object));
  llvm::outs() << llvm::formatv(
      "dpc-run: {0} steps on {1} ranks: {2:f1} samples/s, {3:f2} ms/step "
      "(compute {4:f2} ms, exposed communication {5:f2} ms = {6:f1}%), "
      "per rank (max): {7:f1} MiB in tensors, {8:f1} MiB resident\n",
      steps, manifest.worldSize, batchSize / meanStep, meanStep * 1e3,
      (meanStep - exposed) * 1e3, exposed * 1e3, 100 * exposed / meanStep,
      tensorMax / (1 << 20), peakMax / (1 << 20));
  if (manifest.predictedStepSeconds > 0)
    llvm::outs() << llvm::formatv(
        "dpc-run: the plan predicted {0:f3} ms/step and {1:f1} MiB per "
        "device for its cluster (measured/predicted: time {2:f2}, memory "
        "{3:f2})\n",
        manifest.predictedStepSeconds * 1e3,
        manifest.predictedPeakBytes / double(1 << 20),
        meanStep / manifest.predictedStepSeconds,
        manifest.predictedPeakBytes > 0
            ? tensorMax / manifest.predictedPeakBytes
            : 0.0);
  llvm::outs().flush();
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

/// This process's place in a job started by another launcher (torchrun,
/// mpirun, Slurm), if the environment says so.
struct ExternalRank {
  int rank = 0, worldSize = 1;
};

std::optional<ExternalRank> getExternalRank() {
  static const std::pair<const char *, const char *> conventions[] = {
      {"RANK", "WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (auto [rankName, sizeName] : conventions) {
    const char *rankText = std::getenv(rankName);
    const char *sizeText = std::getenv(sizeName);
    if (rankText && sizeText)
      return ExternalRank{std::atoi(rankText), std::atoi(sizeText)};
  }
  return std::nullopt;
}

/// The bytes rank `rank` holds in tensors: its arguments, results and
/// arena, which the manifest gives exactly.
double getTensorBytes(const Manifest &manifest, int rank) {
  auto bytesOf = [](const TensorSpec &spec) {
    double bytes = double(getDTypeSize(spec.dtype));
    for (int64_t size : spec.localShape)
      bytes *= double(size);
    return bytes;
  };
  double total = 0;
  for (const TensorSpec &spec : manifest.arguments)
    total += bytesOf(spec);
  for (const ProgramSpec &program : manifest.programs)
    if (std::find(program.ranks.begin(), program.ranks.end(), rank) !=
        program.ranks.end()) {
      total += double(program.arenaBytes);
      for (const TensorSpec &spec : program.results)
        total += bytesOf(spec);
    }
  return total;
}

/// MemAvailable of /proc/meminfo, in bytes (0 when unknown).
double getAvailableMemory() {
  std::FILE *file = std::fopen("/proc/meminfo", "r");
  if (!file)
    return 0;
  char line[256];
  double bytes = 0;
  while (std::fgets(line, sizeof(line), file))
    if (std::strncmp(line, "MemAvailable:", 13) == 0)
      bytes = std::atof(line + 13) * 1024.0;
  std::fclose(file);
  return bytes;
}

Status parseAddress(const std::string &text, std::string &host, int &port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return Status::error("--master-addr=" + text + " is not HOST:PORT");
  host = text.substr(0, colon);
  char *end = nullptr;
  long value = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end || value < 1 || value > 65535)
    return Status::error("--master-addr=" + text +
                         ": the port is not in [1, 65535]");
  port = int(value);
  return Status::success();
}

} // namespace

LogicalResult mlir::dpc::runArtifact(const ArtifactRunOptions &options) {
  auto fail = [](const std::string &message) {
    llvm::errs() << "dpc-run: error: " << message << "\n";
    return failure();
  };
  Manifest manifest;
  if (Status status = readManifest(options.artifact, manifest);
      status.isError())
    return fail(status.getMessage());
  if (options.steps < 1 || options.steps > 100000000)
    return fail("--steps must be in [1, 100000000]");

  // --scaling: the one-rank run first, on the same data and steps.
  double baselineThroughput = 0;
  if (!options.scalingBaseline.empty()) {
    Manifest baseline;
    if (Status status = readManifest(options.scalingBaseline, baseline);
        status.isError())
      return fail("--scaling: " + status.getMessage());
    if (baseline.worldSize != 1)
      return fail("--scaling: " + options.scalingBaseline + " runs on " +
                  std::to_string(baseline.worldSize) +
                  " ranks; compile the step without --mesh for one");
    llvm::SmallString<128> reportPath;
    if (std::error_code error = llvm::sys::fs::createTemporaryFile(
            "dpc-scaling", "json", reportPath))
      return fail("--scaling: " + error.message());
    ArtifactRunOptions one = options;
    one.artifact = options.scalingBaseline;
    one.procsPerNode = 1;
    one.nodes = 1;
    one.nodeRank = 0;
    one.reportJson = reportPath.str().str();
    one.outputDir = one.saveDir = one.tensorboardDir = one.traceFile = "";
    one.scalingBaseline = "";
    one.saveEvery = 0;
    llvm::outs() << "dpc-run: --scaling: one rank first\n";
    if (failed(runArtifact(one)))
      return failure();
    auto text = llvm::MemoryBuffer::getFile(reportPath);
    llvm::Expected<json::Value> parsed =
        text ? json::parse((*text)->getBuffer())
             : llvm::Expected<json::Value>(nullptr);
    if (parsed && parsed->getAsObject())
      baselineThroughput =
          parsed->getAsObject()->getNumber("samples_per_second").value_or(0);
    else if (!parsed)
      llvm::consumeError(parsed.takeError());
    llvm::sys::fs::remove(reportPath);
  }

  // Who runs which ranks.
  int procsPerNode = options.procsPerNode, nodes = options.nodes,
      nodeRank = options.nodeRank, firstRank = 0;
  std::optional<ExternalRank> external =
      procsPerNode == 0 ? getExternalRank() : std::nullopt;
  if (external) {
    if (external->worldSize != manifest.worldSize)
      return fail("the launcher started " +
                  std::to_string(external->worldSize) +
                  " processes, the artifact's mesh has " +
                  std::to_string(manifest.worldSize) + " ranks");
    procsPerNode = 1;
    firstRank = external->rank;
  } else {
    if (procsPerNode == 0)
      procsPerNode = manifest.worldSize / std::max(nodes, 1);
    if (nodes < 1 || nodeRank < 0 || nodeRank >= nodes)
      return fail("--node-rank must be in [0, --nnodes)");
    if (procsPerNode < 1 || procsPerNode * nodes != manifest.worldSize)
      return fail("--nproc-per-node " + std::to_string(procsPerNode) + " x " +
                  "--nnodes " + std::to_string(nodes) + " is not the " +
                  std::to_string(manifest.worldSize) +
                  " ranks of the artifact's mesh");
    firstRank = nodeRank * procsPerNode;
  }

  // Bad data is reported once, before any rank starts.
  {
    DataSource probe;
    if (Status status = loadData(options, manifest, probe); status.isError())
      return fail(status.getMessage());
  }
  for (const std::string &file : {options.init, options.resumeDir})
    if (!file.empty() && !llvm::sys::fs::exists(file))
      return fail(file + ": no such file or directory");

  // A plan that cannot fit is refused before any rank starts.
  double needed = 0;
  for (int r = firstRank; r < firstRank + procsPerNode; ++r)
    needed += getTensorBytes(manifest, r);
  double available = options.memoryLimitBytes > 0 ? options.memoryLimitBytes
                                                 : getAvailableMemory();
  if (available > 0 && needed > available)
    return fail(llvm::formatv("the {0} ranks of this node need {1:f3} MiB "
                              "for their tensors (parameters, optimizer "
                              "state, batch and arena), but only {2:f3} MiB "
                              "is available; plan for more ranks or a "
                              "smaller batch",
                              procsPerNode, needed / (1 << 20),
                              available / (1 << 20))
                    .str());

  std::string masterHost = "127.0.0.1";
  int masterPort = 0;
  std::string masterText = options.masterAddress;
  if (masterText.empty() && external && std::getenv("MASTER_ADDR") &&
      std::getenv("MASTER_PORT"))
    masterText = std::string(std::getenv("MASTER_ADDR")) + ":" +
                 std::getenv("MASTER_PORT");
  if (!masterText.empty())
    if (Status status = parseAddress(masterText, masterHost, masterPort);
        status.isError())
      return fail(status.getMessage());
  bool multiProcessJob = nodes > 1 || external;
  if (multiProcessJob && masterText.empty())
    return fail("a job over several nodes or launched by torchrun, mpirun or "
                "Slurm needs the rendezvous address: --master-addr "
                "HOST:PORT, or MASTER_ADDR and MASTER_PORT");

  // The token: chosen here for a single node, shared through the
  // environment otherwise.
  std::string token;
  if (const char *given = std::getenv("DPC_JOB_TOKEN"))
    token = given;
  if (token.empty()) {
    if (multiProcessJob)
      return fail("set DPC_JOB_TOKEN to the same secret on every node: the "
                  "rendezvous refuses connections without it");
    token = ::dpc::makeJobToken();
  }

  std::unique_ptr<::dpc::TcpStoreServer> server;
  if (firstRank == 0) {
    if (Status status = ::dpc::TcpStoreServer::start(
            multiProcessJob ? "0.0.0.0" : masterHost, masterPort, token,
            server);
        status.isError())
      return fail("cannot start the rendezvous: " + status.getMessage());
    masterPort = server->getPort();
  }

  ::dpc::MeshCommunicator::Options connection;
  connection.worldSize = manifest.worldSize;
  connection.storeHost = masterHost;
  connection.storePort = masterPort;
  connection.token = token;
  connection.groups = manifest.groups;
  // Peers reach this rank on the address it binds: loopback for a job on
  // this host, else DPC_HOST_ADDR or the host's name.
  if (masterHost != "127.0.0.1" && masterHost != "localhost") {
    char name[256] = {};
    ::gethostname(name, sizeof(name) - 1);
    const char *given = std::getenv("DPC_HOST_ADDR");
    connection.hostname = given && *given ? given : name;
  }
  connection.timeout = std::chrono::milliseconds(
      int64_t(std::max(1.0, options.timeoutSeconds) * 1000));

  llvm::outs().flush();
  llvm::errs().flush();
  std::vector<std::string> reports;
  Status status = ::dpc::runLocalRanks(
      procsPerNode, std::chrono::hours(24 * 365),
      [&](int localRank, std::string &result) {
        int rank = firstRank + localRank;
        ::dpc::MeshCommunicator::Options mine = connection;
        mine.rank = rank;
        RankRunner runner(options, manifest, rank, procsPerNode);
        Status runStatus = runner.run(mine, result);
        if (runStatus.isError()) {
          llvm::errs() << "\ndpc-run: error: " << runStatus.getMessage()
                       << "\n";
          llvm::errs().flush();
          return false;
        }
        llvm::outs().flush();
        return true;
      },
      reports);
  if (status.isError())
    return fail(status.getMessage());
  if (reports.empty() || firstRank != 0)
    return success();
  std::string report = reports.front();
  if (baselineThroughput > 0) {
    llvm::Expected<json::Value> parsed = json::parse(report);
    if (!parsed)
      return fail("rank 0's report is broken: " +
                  llvm::toString(parsed.takeError()));
    json::Object &object = *parsed->getAsObject();
    double throughput = object.getNumber("samples_per_second").value_or(0);
    double efficiency = throughput / (manifest.worldSize * baselineThroughput);
    llvm::outs() << llvm::formatv(
        "dpc-run: scaling: {0:f1} samples/s on {1} ranks against {2:f1} on "
        "one: {3:f2}x, efficiency {4:f1}%\n",
        throughput, manifest.worldSize, baselineThroughput,
        throughput / baselineThroughput, 100 * efficiency);
    object["scaling_efficiency"] = efficiency;
    object["one_rank_samples_per_second"] = baselineThroughput;
    report.clear();
    llvm::raw_string_ostream os(report);
    os << json::Value(std::move(object));
  }
  if (!options.reportJson.empty())
    if (Status written = ::dpc::writeFileAtomically(options.reportJson, report);
        written.isError())
      return fail(written.getMessage());
  return success();
}
