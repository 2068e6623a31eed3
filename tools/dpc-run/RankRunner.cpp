//===- RankRunner.cpp - One rank of a training job ------------------------===//

#include "RankRunner.h"
#include "Blocks.h"
#include "Checkpoint.h"
#include "OpProfile.h"

#include "dpc/Runtime/Checksum.h"
#include "dpc/Runtime/FileIO.h"
#include "dpc/Runtime/Npy.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::artifact;

void artifact::writeToStderr(const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0)
      return;
    done += size_t(n);
  }
}

int64_t artifact::hostStart(void *self, const DpcCollectiveCall *call) {
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

int32_t artifact::hostWait(void *self, int64_t ticket) {
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

int32_t artifact::hostGroupPosition(void *self, int32_t group) {
  return static_cast<HostState *>(self)->communicator->getGroupPosition(group);
}

void artifact::hostFail(void *self, const char *message) {
  static_cast<HostState *>(self)->error = message;
}

void artifact::hostMark(void *self, int32_t op) {
  auto *host = static_cast<HostState *>(self);
  Clock::time_point now = Clock::now();
  if (host->timingOps && op >= 0 && size_t(op) < host->opSeconds.size())
    host->opSeconds[op] +=
        std::chrono::duration<double>(now - host->lastMark).count();
  host->lastMark = now;
}

namespace {

double getPeakResidentBytes() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) * 1024.0;
}

/// Appends `value`'s bytes to `out`.
template <typename T> void append(std::string &out, const T &value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

} // namespace

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
  program = manifest.getProgram(rank);
  if (!program)
    return Status::error("the manifest gives rank " + std::to_string(rank) +
                         " no program");
  function =
      reinterpret_cast<DpcProgramFn>(::dlsym(handle, program->symbol.c_str()));
  if (!function)
    return Status::error(path.str().str() + ": has no program '" +
                         program->symbol + "'");
  // The node's cores are shared among its ranks: each runs its kernels
  // (OpenBLAS, oneDNN's OpenMP) on its share, unless the user said for
  // that library. (Setting OPENBLAS_NUM_THREADS alone once left oneDNN's
  // OpenMP a thread per core in every rank, spinning against the others:
  // resnet18 over two unbound ranks took 650-690 ms a step, not 186-202.)
  int threads = std::max(1u, std::thread::hardware_concurrency() /
                                 unsigned(std::max(1, ranksOnNode)));
  // Looked up through the library: its dependencies are loaded locally.
  if (!std::getenv("OMP_NUM_THREADS"))
    if (auto setOpenMp = reinterpret_cast<void (*)(int)>(
            ::dlsym(handle, "omp_set_num_threads")))
      setOpenMp(threads);
  if (!std::getenv("OPENBLAS_NUM_THREADS"))
    for (void *scope : {handle, RTLD_DEFAULT})
      if (auto setBlas = reinterpret_cast<void (*)(int)>(
              ::dlsym(scope, "openblas_set_num_threads")))
        setBlas(threads);
  if (auto getOpenMp =
          reinterpret_cast<int (*)()>(::dlsym(handle, "omp_get_max_threads")))
    openMpThreads = getOpenMp();
  if (auto getBlas = reinterpret_cast<int (*)()>(
          ::dlsym(handle, "openblas_get_num_threads")))
    blasThreads = getBlas();
  if (manifest.onDevice()) {
    if (Status status = openDevice(handle); status.isError())
      return status;
    // cudaMalloc'd memory is aligned beyond the plan's 64 bytes.
    arena = static_cast<char *>(cuda.allocate(program->arenaBytes));
    if (!arena)
      return Status::error("rank " + std::to_string(rank) +
                           ": out of GPU memory for the arena (" +
                           std::to_string(program->arenaBytes) + " bytes)");
    return Status::success();
  }
  // 64-byte aligned, as the buffer plan assumes.
  arenaStorage.resize(program->arenaBytes + 64);
  arena = reinterpret_cast<char *>(
      (reinterpret_cast<uintptr_t>(arenaStorage.data()) + 63) & ~uintptr_t(63));
  return Status::success();
}

Status RankRunner::openDevice(void *library) {
  auto uniqueId = reinterpret_cast<DpcCudaUniqueIdFn>(
      ::dlsym(library, "dpc_cuda_unique_id"));
  auto create =
      reinterpret_cast<DpcCudaCreateFn>(::dlsym(library, "dpc_cuda_create"));
  cuda.allocate = reinterpret_cast<DpcCudaAllocateFn>(
      ::dlsym(library, "dpc_cuda_allocate"));
  cuda.free =
      reinterpret_cast<DpcCudaFreeFn>(::dlsym(library, "dpc_cuda_free"));
  cuda.copy =
      reinterpret_cast<DpcCudaCopyFn>(::dlsym(library, "dpc_cuda_copy"));
  if (!uniqueId || !create || !cuda.allocate || !cuda.free || !cuda.copy)
    return Status::error(manifest.dir +
                         ": a CUDA artifact whose library lacks the device "
                         "entry points; recompile it");
  char error[1024] = {0};
  // Rank 0 makes the job's NCCL id; every rank receives it over the
  // job's (token-checked) rendezvous.
  std::string id;
  if (rank == 0) {
    id.resize(DPC_CUDA_UNIQUE_ID_BYTES);
    if (uniqueId(id.data(), error, sizeof(error)) != 0)
      return Status::error(error);
  }
  std::vector<std::string> gathered;
  if (Status status = communicator->allGatherWorld(id, gathered);
      status.isError())
    return status;
  if (gathered.empty() || gathered[0].size() != DPC_CUDA_UNIQUE_ID_BYTES)
    return Status::error("rank 0 sent no NCCL id");
  // Each group kind's member list holding this rank: its number (the
  // communicator's color), the rank's position and the list's size.
  std::vector<int32_t> colors, positions, sizes;
  for (const std::vector<std::vector<int>> &lists : manifest.groups) {
    for (auto [color, members] : llvm::enumerate(lists)) {
      auto it = std::find(members.begin(), members.end(), rank);
      if (it == members.end())
        continue;
      colors.push_back(int32_t(color));
      positions.push_back(int32_t(it - members.begin()));
      sizes.push_back(int32_t(members.size()));
      break;
    }
  }
  if (colors.size() != manifest.groups.size())
    return Status::error("rank " + std::to_string(rank) +
                         " is missing from a group kind's member lists");
  DpcCudaConfig config{rank % std::max(1, ranksOnNode),
                       rank,
                       manifest.worldSize,
                       gathered[0].data(),
                       int32_t(colors.size()),
                       colors.data(),
                       positions.data(),
                       sizes.data(),
                       options.timeoutSeconds};
  if (create(&config, &device, error, sizeof(error)) != 0)
    return Status::error(error);
  return Status::success();
}

Status RankRunner::copyToDevice(void *to, const std::vector<std::byte> &from) {
  if (cuda.copy(to, from.data(), int64_t(from.size()), 1) != 0)
    return Status::error("rank " + std::to_string(rank) +
                         ": a copy to the GPU failed");
  return Status::success();
}

Status RankRunner::copyToHost(std::vector<std::byte> &to, const void *from) {
  if (cuda.copy(to.data(), from, int64_t(to.size()), 0) != 0)
    return Status::error("rank " + std::to_string(rank) +
                         ": a copy from the GPU failed");
  return Status::success();
}

Status RankRunner::uploadArguments() {
  auto allocate = [&](size_t bytes) -> void * {
    return cuda.allocate(int64_t(bytes));
  };
  bool outOfMemory = false;
  for (auto [index, block] : llvm::enumerate(arguments)) {
    void *buffer = program->holds[index] ? allocate(block.size()) : nullptr;
    outOfMemory |= program->holds[index] && !buffer;
    deviceArguments.push_back(buffer);
  }
  for (auto [block, spec] : llvm::zip_equal(results, program->results))
    deviceResults.push_back(spec.updates < 0 ? allocate(block.size())
                                             : deviceArguments[spec.updates]);
  if (outOfMemory || llvm::is_contained(deviceResults, nullptr))
    return Status::error("rank " + std::to_string(rank) +
                         ": out of GPU memory for the arguments and results");
  for (auto [block, buffer] : llvm::zip(arguments, deviceArguments))
    if (buffer)
      if (Status status = copyToDevice(buffer, block); status.isError())
        return status;
  hostArgumentsStale = false;
  return Status::success();
}

Status RankRunner::downloadArguments() {
  if (!device || !hostArgumentsStale)
    return Status::success();
  for (auto [block, buffer] : llvm::zip(arguments, deviceArguments))
    if (buffer)
      if (Status status = copyToHost(block, buffer); status.isError())
        return status;
  hostArgumentsStale = false;
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
    if (Status status =
            loadCheckpoint(options.resumeDir, initial, step, initPath);
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

  for (auto [index, spec] : llvm::enumerate(manifest.arguments)) {
    std::vector<std::byte> block;
    // Another pipeline stage's tensor: neither held nor read here.
    if (!program->holds[index]) {
      arguments.push_back(std::move(block));
      continue;
    }
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
  // A result written over the argument it updates has no buffer here.
  for (const TensorSpec &spec : program->results) {
    size_t bytes = getDTypeSize(spec.dtype);
    for (int64_t size : spec.localShape)
      bytes *= size;
    results.emplace_back(spec.updates < 0 ? bytes : 0);
  }
  if (device)
    return uploadArguments();
  return Status::success();
}

Status RankRunner::runStep(int step, double lr, double &loss, bool &hasLoss) {
  for (auto [index, spec] : llvm::enumerate(manifest.arguments)) {
    std::vector<std::byte> &block = arguments[index];
    if (!program->holds[index])
      continue;
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
    if (device && (spec.role == "input" || spec.role == "hyper"))
      if (Status status = copyToDevice(deviceArguments[index], block);
          status.isError())
        return status;
  }
  std::vector<void *> argPointers, resultPointers;
  for (std::vector<std::byte> &block : arguments)
    argPointers.push_back(block.data());
  for (auto [block, spec] : llvm::zip_equal(results, program->results))
    resultPointers.push_back(spec.updates < 0 ? block.data()
                                              : arguments[spec.updates].data());
  if (device) {
    argPointers = deviceArguments;
    resultPointers = deviceResults;
  }
  DpcHost callbacks{&host,    hostStart,
                    hostWait, hostGroupPosition,
                    hostFail, options.checkFinite ? 1 : 0,
                    device,   host.profiling ? 1 : 0,
                    hostMark};
  if (function(&callbacks, argPointers.data(), resultPointers.data(), arena))
    return Status::error("rank " + std::to_string(rank) + ", step " +
                         std::to_string(step) + ": " + host.error);
  // The host reads the step's outputs (the loss, the gradient norm); the
  // rest stays on the GPU.
  if (device) {
    hostArgumentsStale = true;
    for (auto [index, spec] : llvm::enumerate(program->results))
      if (spec.role == "output")
        if (Status status = copyToHost(results[index], deviceResults[index]);
            status.isError())
          return status;
  }
  gradNorm = std::nan("");
  for (auto [index, spec] : llvm::enumerate(program->results))
    if (spec.role == "output" && spec.name == "grad_norm" &&
        spec.dtype == DType::F32)
      gradNorm = *reinterpret_cast<const float *>(results[index].data());

  // The updated values are the next step's arguments (most were written
  // over them).
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
    if (spec.updates >= 0)
      continue;
    for (auto [argIndex, argSpec] : llvm::enumerate(manifest.arguments))
      if (argSpec.key() == spec.key() &&
          arguments[argIndex].size() == results[index].size()) {
        std::swap(arguments[argIndex], results[index]);
        if (device)
          std::swap(deviceArguments[argIndex], deviceResults[index]);
        break;
      }
  }
  return Status::success();
}

bool RankRunner::keepsUpToDate(size_t index) const {
  // Another stage's tensor is not here at all.
  if (!program->holds[index])
    return false;
  // One that no program updates (a frozen one) is kept by every rank that
  // holds it.
  const TensorSpec &spec = manifest.arguments[index];
  auto updatedBy = [&](const ProgramSpec &candidate) {
    return llvm::any_of(candidate.results, [&](const TensorSpec &result) {
      return result.key() == spec.key();
    });
  };
  return updatedBy(*program) || llvm::none_of(manifest.programs, updatedBy);
}

Status RankRunner::saveCheckpoint(int step) {
  if (Status status = downloadArguments(); status.isError())
    return status;
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
        !keepsUpToDate(index))
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
  std::string summary =
      std::to_string(written.size()) + " " +
      std::to_string(::dpc::crc32c(written.data(), written.size()));
  std::vector<std::string> all;
  if (Status status = communicator->allGatherWorld(summary, all);
      status.isError())
    return status;
  if (rank == options.failRank && options.failStep == -step) {
    writeToStderr("dpc-run: rank " + std::to_string(rank) +
                  " stops while saving step " + std::to_string(step) +
                  " (--fail-rank)\n");
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
      shards.push_back(
          json::Object{{"file", "rank" + std::to_string(from) + ".npz"},
                       {"bytes", std::stoll(bytes.str())},
                       {"crc32c", std::stoll(crc.str())}});
    }
    std::string meta;
    llvm::raw_string_ostream os(meta);
    os << llvm::formatv(
        "{0:2}", json::Value(json::Object{{"format", "dpc-checkpoint"},
                                          {"step", step},
                                          {"world_size", manifest.worldSize},
                                          {"tensors", std::move(tensors)},
                                          {"shards", std::move(shards)}}));
    llvm::SmallString<128> metaPath(partial);
    llvm::sys::path::append(metaPath, "meta.json");
    if (Status status = ::dpc::writeFileAtomically(metaPath.str().str(), meta);
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
  if (Status status = downloadArguments(); status.isError())
    return status;
  // Each rank sends the blocks it keeps up to date.
  std::string mine;
  for (auto [index, spec] : llvm::enumerate(manifest.arguments)) {
    if (spec.role != "param" && spec.role != "state" &&
        spec.role != "opt_state")
      continue;
    if (!keepsUpToDate(index))
      continue;
    append(mine, uint64_t(index));
    append(mine, uint64_t(arguments[index].size()));
    mine.append(reinterpret_cast<const char *>(arguments[index].data()),
                arguments[index].size());
  }
  std::vector<std::string> all;
  if (Status status = communicator->allGatherWorld(mine, all); status.isError())
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
    return Status::error(dir +
                         ": cannot create the directory: " + error.message());
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
    events.push_back(json::Object{{"name", span.name},
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
  if (Status status = communicator->allGatherWorld(mine, all); status.isError())
    return status;
  if (rank != 0)
    return Status::success();
  json::Array trace;
  for (auto [from, text] : llvm::enumerate(all)) {
    trace.push_back(json::Object{
        {"name", "process_name"},
        {"ph", "M"},
        {"pid", int64_t(from)},
        {"args", json::Object{{"name", "rank " + std::to_string(from)}}}});
    for (const char *thread : {"compute", "exposed communication"})
      trace.push_back(
          json::Object{{"name", "thread_name"},
                       {"ph", "M"},
                       {"pid", int64_t(from)},
                       {"tid", thread == std::string("compute") ? 0 : 1},
                       {"args", json::Object{{"name", thread}}}});
    llvm::Expected<json::Value> parsed = json::parse(text);
    if (!parsed)
      return Status::error(
          "rank " + std::to_string(from) +
          " sent a broken trace: " + llvm::toString(parsed.takeError()));
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

Status RankRunner::writeProfile(int steps, double seconds) {
  std::vector<std::string> all;
  if (Status status = communicator->allGatherWorld(
          serializeOpTimes(host.opSeconds, seconds, steps), all);
      status.isError())
    return status;
  if (rank != 0)
    return Status::success();
  return writeOpProfile(manifest, all, steps, options.profileFile);
}

Status RankRunner::run(const ::dpc::MeshCommunicator::Options &connection,
                       std::string &report) {
  if (Status status =
          ::dpc::MeshCommunicator::connect(connection, communicator);
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
  double baseLr = options.lr >= 0 ? options.lr : manifest.defaultLr;
  host.tracing = !options.traceFile.empty();
  if (rank == 0 && !options.tensorboardDir.empty()) {
    tensorboard = std::make_unique<::dpc::TensorBoardWriter>();
    if (Status status = tensorboard->open(options.tensorboardDir);
        status.isError())
      return status;
  }

  json::Array losses, stepTimes, waitTimes;
  double totalSeconds = 0, totalWait = 0;
  // Samples a step takes: over several micro-batches, an input's first
  // dimension counts them and its second is a micro-batch's samples.
  int64_t batchSize = 0;
  for (const TensorSpec &spec : manifest.arguments)
    if (spec.role == "input" && !spec.shape.empty())
      batchSize = std::max(batchSize, manifest.microBatches > 1
                                          ? spec.shape[0] * spec.shape[1]
                                          : spec.shape[0]);
  int lastStep = firstStep + options.steps - 1;
  // --profile times every step but the first (which pages memory in),
  // unless there is only one.
  host.profiling = !options.profileFile.empty();
  host.opSeconds.assign(program->ops.size(), 0.0);
  int timedSteps = 0;
  double timedSeconds = 0;
  for (int step = firstStep; step <= lastStep; ++step) {
    host.timingOps = host.profiling && (step > firstStep || options.steps == 1);
    if (rank == options.failRank && step == options.failStep) {
      writeToStderr("dpc-run: rank " + std::to_string(rank) +
                    (options.hang ? " hangs" : " stops") + " at step " +
                    std::to_string(step) + " (--fail-rank)\n");
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
    if (Status status = runStep(step, getLearningRate(options, baseLr, step),
                                loss, hasLoss);
        status.isError())
      return status;
    double seconds =
        std::chrono::duration<double>(Clock::now() - begin).count();
    if (host.timingOps) {
      ++timedSteps;
      timedSeconds += seconds;
    }
    if (host.tracing)
      host.spans.push_back(
          {"step " + std::to_string(step), "compute", traceBegin, host.now()});
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
    if (rank == options.perturbRank && step == firstStep) {
      if (Status status = downloadArguments(); status.isError())
        return status;
      for (auto [index, spec] : llvm::enumerate(manifest.arguments))
        if (spec.role == "param" && !arguments[index].empty()) {
          arguments[index][0] ^= std::byte(1);
          if (device)
            if (Status status =
                    copyToDevice(deviceArguments[index], arguments[index]);
                status.isError())
              return status;
          break;
        }
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
      writeToStderr(llvm::formatv("{0}step {1,4}/{2}  loss {3,10:f6}  {4,9:f1} "
                                  "samples/s{5}",
                                  terminal ? "\r" : "", step, lastStep,
                                  meanLoss, batchSize / seconds,
                                  terminal ? "" : "\n")
                        .str());
    }
    if (!options.saveDir.empty() && options.saveEvery > 0 &&
        (step % options.saveEvery == 0 || step == lastStep))
      if (Status status = saveCheckpoint(step); status.isError())
        return status;
  }
  if (rank == 0 && ::isatty(STDERR_FILENO))
    writeToStderr("\n");

  if (host.tracing)
    if (Status status = writeTrace(); status.isError())
      return status;
  if (host.profiling)
    if (Status status = writeProfile(timedSteps, timedSeconds);
        status.isError())
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
  json::Array peaks, tensors, predictedTensors;
  double peakMax = 0, tensorMax = 0;
  // Each rank against its own stage's prediction: the largest ratio.
  double memoryRatio = 0;
  for (int r = 0; r < manifest.worldSize; ++r) {
    peaks.push_back(perRank[3 * r]);
    tensors.push_back(perRank[3 * r + 2]);
    double predicted = manifest.getPredictedBytes(r);
    predictedTensors.push_back(predicted);
    peakMax = std::max(peakMax, perRank[3 * r]);
    tensorMax = std::max(tensorMax, perRank[3 * r + 2]);
    if (predicted > 0)
      memoryRatio = std::max(memoryRatio, perRank[3 * r + 2] / predicted);
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
      {"kernel_threads",
       json::Object{{"openmp", openMpThreads}, {"openblas", blasThreads}}},
      {"predicted_step_seconds", manifest.predictedStepSeconds},
      {"predicted_peak_memory_bytes", manifest.predictedPeakBytes},
      {"predicted_memory_bytes", std::move(predictedTensors)}};
  // On GPUs the collectives run on their own streams inside the step: the
  // host sees no wait to measure, so no split is claimed.
  bool onGpu = manifest.onDevice() && !manifest.emulated;
  if (onGpu)
    object["communication_share"] = nullptr;
  llvm::raw_string_ostream os(report);
  os << json::Value(std::move(object));
  if (onGpu)
    llvm::outs() << llvm::formatv(
        "dpc-run: {0} steps on {1} GPUs: {2:f1} samples/s, {3:f2} ms/step "
        "(compute and communication overlap on the GPU, not yet measured "
        "apart), per rank (max): {4:f1} MiB in GPU tensors, {5:f1} MiB "
        "resident on the host\n",
        steps, manifest.worldSize, batchSize / meanStep, meanStep * 1e3,
        tensorMax / (1 << 20), peakMax / (1 << 20));
  else
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
        "{3:f2}{4})\n",
        manifest.predictedStepSeconds * 1e3,
        manifest.predictedPeakBytes / double(1 << 20),
        meanStep / manifest.predictedStepSeconds, memoryRatio,
        manifest.predictedStageBytes.size() > 1
            ? ", the largest of any rank against its stage's"
            : "");
  llvm::outs().flush();
  return Status::success();
}
