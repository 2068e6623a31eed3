//===- Manifest.cpp - What an artifact says it holds ----------------------===//

#include "Manifest.h"

#include "dpc/Runtime/CpuFeatures.h"
#include "dpc/Runtime/ProgramAbi.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace mlir::dpc;
using namespace mlir::dpc::artifact;

static Status parseError(const std::string &path, const std::string &what) {
  return Status::error(path + ": not a valid dpc artifact manifest: " + what);
}

std::optional<DType> artifact::parseDType(llvm::StringRef name) {
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

bool artifact::readInts(const json::Value *value, std::vector<int64_t> &out) {
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

static bool readGroups(const json::Value *value,
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

static Status parseTensor(const std::string &path, const json::Object &object,
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

/// Refuses a library compiled for instruction-set extensions this CPU
/// lacks: it would die of an illegal instruction in the middle of a step.
static Status checkCpuFeatures(const std::string &dir, const std::string &file,
                               const json::Value &cpu) {
  const json::Object *object = cpu.getAsObject();
  const json::Array *features = object ? object->getArray("features") : nullptr;
  if (!features)
    return parseError(file, "its cpu entry lists no features");
  std::string arch = object->getString("arch").value_or("?").str();
  std::string missing;
  for (const json::Value &feature : *features) {
    std::optional<llvm::StringRef> name = feature.getAsString();
    if (!name)
      return parseError(file, "a cpu feature is not a string");
    std::optional<bool> present = ::dpc::hasCpuFeature(*name);
    if (!present)
      return parseError(file, "its library needs the CPU extension '" +
                                  name->str() +
                                  "', which this dpc-run cannot check");
    if (!*present)
      missing += (missing.empty() ? "" : ", ") + name->str();
  }
  if (missing.empty())
    return Status::success();
  return Status::error(
      dir + ": its library was compiled for --cpu-arch=" + arch + " and uses " +
      missing +
      ", which this CPU lacks; compile it on this machine, or with dpc-opt "
      "--cpu-arch=NAME for a CPU every node has (x86-64-v3: any AVX2 CPU)");
}

Status artifact::readManifest(const std::string &dir, Manifest &manifest) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::string file = path.str().str();
  auto buffer = llvm::MemoryBuffer::getFile(file);
  if (!buffer)
    return Status::error(dir +
                         ": not a dpc artifact (no readable "
                         "manifest.json: " +
                         buffer.getError().message() + ")");
  llvm::Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed)
    return parseError(file, llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != StringRef("dpc-artifact"))
    return parseError(file, "its format is not dpc-artifact");
  if (root->getInteger("abi") != DPC_PROGRAM_ABI_VERSION)
    return parseError(file,
                      "it was built for another dpc-run (ABI " +
                          std::to_string(root->getInteger("abi").value_or(0)) +
                          ", this one runs " +
                          std::to_string(DPC_PROGRAM_ABI_VERSION) + ")");
  std::optional<StringRef> backend = root->getString("backend");
  if (!backend || (*backend != "cpu" && *backend != "cuda"))
    return parseError(file, "its backend is neither cpu nor cuda");
  manifest.backend = backend->str();
  manifest.emulated = root->getBoolean("emulated").value_or(false);
  if (const json::Value *cpu = root->get("cpu"))
    if (Status status = checkCpuFeatures(dir, file, *cpu); status.isError())
      return status;
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
    // The arguments the program reads; absent in artifacts built before
    // it was written: all of them.
    program.holds.assign(manifest.arguments.size(), !object->get("reads"));
    if (const json::Value *reads = object->get("reads")) {
      std::vector<int64_t> indices;
      if (!readInts(reads, indices) ||
          llvm::any_of(indices, [&](int64_t index) {
            return index < 0 || index >= int64_t(manifest.arguments.size());
          }))
        return parseError(file, "a program's \"reads\" is not a list of "
                                "argument indices");
      for (int64_t index : indices)
        program.holds[index] = true;
    }
    if (const json::Value *ops = object->get("ops")) {
      if (!ops->getAsArray())
        return parseError(file, "a program's \"ops\" is not a list");
      for (const json::Value &entry : *ops->getAsArray()) {
        const json::Object *op = entry.getAsObject();
        if (!op || !op->getString("op") || !op->getString("at") ||
            !op->getNumber("flops") || !op->getNumber("bytes"))
          return parseError(file, "an entry of a program's \"ops\" lacks "
                                  "op, at, flops or bytes");
        MarkedOp marked;
        marked.op = op->getString("op")->str();
        marked.at = op->getString("at")->str();
        marked.flops = *op->getNumber("flops");
        marked.bytes = *op->getNumber("bytes");
        marked.fused = op->getInteger("fused").value_or(0);
        marked.predicted = op->getNumber("predicted_s");
        marked.collective = op->getBoolean("collective").value_or(false);
        program.ops.push_back(std::move(marked));
      }
    }
    for (const json::Value &result : *object->getArray("results")) {
      TensorSpec spec;
      if (!result.getAsObject())
        return parseError(file, "a result is not an object");
      if (Status status = parseTensor(file, *result.getAsObject(),
                                      manifest.worldSize, spec);
          status.isError())
        return status;
      const json::Value *updatesField = result.getAsObject()->get("updates");
      if (updatesField && !updatesField->getAsInteger())
        return parseError(file, "result '" + spec.name +
                                    "' has an \"updates\" that is not an "
                                    "argument index");
      if (std::optional<int64_t> updates =
              updatesField ? updatesField->getAsInteger() : std::nullopt) {
        // Written over an argument: one of the same key and size, which no
        // other result of the program is written over.
        const TensorSpec *argument =
            *updates >= 0 && *updates < int64_t(manifest.arguments.size())
                ? &manifest.arguments[*updates]
                : nullptr;
        bool claimed = llvm::any_of(program.results, [&](const TensorSpec &r) {
          return r.updates == *updates;
        });
        if (!argument || argument->key() != spec.key() ||
            argument->dtype != spec.dtype ||
            argument->localShape != spec.localShape || claimed)
          return parseError(file, "result '" + spec.name +
                                      "' updates no matching argument");
        spec.updates = int(*updates);
      }
      // The argument a result is the next value of is held where the
      // result is made.
      for (auto [index, argument] : llvm::enumerate(manifest.arguments))
        if (argument.key() == spec.key())
          program.holds[index] = true;
      program.results.push_back(std::move(spec));
    }
    manifest.programs.push_back(std::move(program));
  }
  manifest.defaultLr = root->getNumber("default_lr").value_or(0.01);
  // Absent in artifacts built before it was written: one micro-batch.
  if (const json::Value *field = root->get("micro_batches")) {
    std::optional<int64_t> count = field->getAsInteger();
    if (!count || *count < 1)
      return parseError(file, "micro_batches is not a whole number of at "
                              "least 1");
    manifest.microBatches = *count;
  }
  for (const TensorSpec &spec : manifest.arguments)
    if (spec.role == "input" && manifest.microBatches > 1 &&
        (spec.shape.size() < 2 || spec.shape[0] != manifest.microBatches))
      return parseError(file, "input '" + spec.name +
                                  "' does not hold the step's " +
                                  std::to_string(manifest.microBatches) +
                                  " micro-batches along its first dimension");
  if (const json::Object *plan = root->getObject("plan")) {
    manifest.predictedStepSeconds = plan->getNumber("step_time_s").value_or(0);
    manifest.predictedPeakBytes =
        plan->getNumber("peak_memory_bytes").value_or(0);
    // One figure per stage program (absent before the plan wrote it).
    if (const json::Array *stages = plan->getArray("stage_memory_bytes")) {
      for (const json::Value &stage : *stages)
        if (std::optional<double> bytes = stage.getAsNumber())
          manifest.predictedStageBytes.push_back(*bytes);
      if (manifest.predictedStageBytes.size() != manifest.programs.size())
        return parseError(file, "its plan's stage_memory_bytes does not give "
                                "one figure per program");
    }
  }
  return Status::success();
}

double artifact::getTensorBytes(const Manifest &manifest, int rank) {
  auto bytesOf = [](const TensorSpec &spec) {
    double bytes = double(getDTypeSize(spec.dtype));
    for (int64_t size : spec.localShape)
      bytes *= double(size);
    return bytes;
  };
  const ProgramSpec *program = manifest.getProgram(rank);
  if (!program)
    return 0;
  double total = double(program->arenaBytes);
  for (auto [index, spec] : llvm::enumerate(manifest.arguments))
    if (program->holds[index])
      total += bytesOf(spec);
  for (const TensorSpec &spec : program->results)
    if (spec.updates < 0)
      total += bytesOf(spec);
  return total;
}
