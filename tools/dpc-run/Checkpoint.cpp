//===- Checkpoint.cpp - Checkpoints as shards -----------------------------===//

#include "Checkpoint.h"
#include "Blocks.h"

#include "dpc/Runtime/Checksum.h"
#include "dpc/Runtime/FileIO.h"
#include "dpc/Runtime/Npy.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir::dpc;
using namespace mlir::dpc::artifact;

std::string artifact::getBlockName(const TensorSpec &spec, int rank) {
  std::string name = spec.key() + "@";
  for (auto [i, start] : llvm::enumerate(spec.blocks[rank]))
    name += (i ? "," : "") + std::to_string(start);
  return name;
}

Status artifact::loadCheckpoint(const std::string &dir,
                                std::vector<::dpc::NamedTensor> &tensors,
                                int &step, std::string &where) {
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
        fits =
            start[d] >= 0 && start[d] + block.tensor.shape[d] <= whole.shape[d];
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
