//===- DeviceApi.h - A CUDA artifact's entry points for dpc-run -*- C++ -*-===//
//
// Included once, by the generated model.cu: the functions dpc-run calls
// (ProgramAbi.h) to give a rank its GPU and its communicators before the
// first step. The job's NCCL id comes from rank 0 through dpc-run's own
// token-checked rendezvous; one world communicator is made from it, and
// each group kind's communicator is split from the world one by the
// rank's member list.
//
// Under emulation the same entry points hand out host memory, so that
// dpc-run's handling of a CUDA artifact (its tensors uploaded, swapped
// between steps on the "device", and downloaded for checkpoints and
// outputs) runs where there is no GPU; the collectives then go through
// dpc-run's communicator.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_DEVICEAPI_H
#define DPC_RUNTIME_CUDA_DEVICEAPI_H

#ifndef DPC_CUDA_EMULATION

#include "dpc/Runtime/Cuda/Context.h"

#include <cstdio>

namespace dpc::cuda::detail {
inline int32_t report(char *error, int64_t errorBytes,
                      const std::string &what) {
  std::snprintf(error, size_t(errorBytes), "%s", what.c_str());
  return 1;
}
} // namespace dpc::cuda::detail

extern "C" int32_t dpc_cuda_unique_id(char *id, char *error,
                                      int64_t errorBytes) {
  static_assert(sizeof(ncclUniqueId) == DPC_CUDA_UNIQUE_ID_BYTES);
  ncclUniqueId unique;
  if (ncclResult_t result = ncclGetUniqueId(&unique); result != ncclSuccess)
    return dpc::cuda::detail::report(
        error, errorBytes,
        std::string("NCCL: cannot make the job's id: ") +
            ncclGetErrorString(result));
  std::memcpy(id, &unique, sizeof(unique));
  return 0;
}

extern "C" int32_t dpc_cuda_create(const DpcCudaConfig *config, void **out,
                                   char *error, int64_t errorBytes) {
  using namespace dpc::cuda;
  auto fail = [&](const std::string &what) {
    return detail::report(error, errorBytes,
                          "rank " + std::to_string(config->rank) + ": " + what);
  };
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    return fail("no CUDA device is visible (a CUDA artifact needs one GPU "
                "per local rank)");
  auto *context = new Context;
  context->device = config->localRank % devices;
  context->timeoutSeconds = config->timeoutSeconds;
  auto check = [&](cudaError_t status, const char *what) {
    if (status == cudaSuccess)
      return true;
    fail(std::string(what) + ": " + cudaGetErrorString(status));
    return false;
  };
  if (!check(cudaSetDevice(context->device), "cannot use the GPU") ||
      !check(
          cudaStreamCreateWithFlags(&context->compute, cudaStreamNonBlocking),
          "cannot make the compute stream") ||
      !check(cudaMallocManaged(reinterpret_cast<void **>(&context->faults),
                               sizeof(FaultRecord)),
             "cannot allocate the fault record (managed memory, read by "
             "the host after each step)"))
    return 1;
  *context->faults = FaultRecord{};
  context->workspaceBytes = size_t(32) << 20;
  if (!check(cudaMalloc(&context->workspace, context->workspaceBytes),
             "cannot allocate the cuBLASLt workspace"))
    return 1;
  if (cublasLtCreate(&context->blas) != CUBLAS_STATUS_SUCCESS)
    return fail("cannot initialize cuBLASLt");

  ncclUniqueId unique;
  std::memcpy(&unique, config->uniqueId, sizeof(unique));
  ncclComm_t world;
  if (ncclResult_t result =
          ncclCommInitRank(&world, config->worldSize, unique, config->rank);
      result != ncclSuccess)
    return fail(std::string("NCCL: cannot join the job: ") +
                ncclGetErrorString(result));
  for (int32_t group = 0; group < config->numGroups; ++group) {
    ncclComm_t comm;
    if (ncclResult_t result =
            ncclCommSplit(world, config->groupColors[group],
                          config->groupPositions[group], &comm, nullptr);
        result != ncclSuccess)
      return fail(std::string("NCCL: cannot make group kind ") +
                  std::to_string(group) +
                  "'s communicator: " + ncclGetErrorString(result));
    cudaStream_t stream;
    if (!check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
               "cannot make a communication stream"))
      return 1;
    context->communicators.push_back(comm);
    context->communication.push_back(stream);
    context->groupPositions.push_back(config->groupPositions[group]);
    context->groupSizes.push_back(config->groupSizes[group]);
  }
  *out = context;
  return 0;
}

extern "C" void *dpc_cuda_allocate(int64_t bytes) {
  void *pointer = nullptr;
  if (cudaMalloc(&pointer, size_t(bytes > 0 ? bytes : 1)) != cudaSuccess)
    return nullptr;
  return pointer;
}

extern "C" void dpc_cuda_free(void *pointer) { cudaFree(pointer); }

extern "C" int32_t dpc_cuda_copy(void *to, const void *from, int64_t bytes,
                                 int32_t toDevice) {
  if (bytes == 0)
    return 0;
  return cudaMemcpy(to, from, size_t(bytes),
                    toDevice ? cudaMemcpyHostToDevice
                             : cudaMemcpyDeviceToHost) == cudaSuccess
             ? 0
             : 1;
}

#else // DPC_CUDA_EMULATION

#include "dpc/Runtime/ProgramAbi.h"

#include <cstdlib>
#include <cstring>

extern "C" int32_t dpc_cuda_unique_id(char *id, char *, int64_t) {
  std::memset(id, 0, DPC_CUDA_UNIQUE_ID_BYTES);
  return 0;
}

extern "C" int32_t dpc_cuda_create(const DpcCudaConfig *, void **context,
                                   char *, int64_t) {
  static char emulatedDevice;
  *context = &emulatedDevice;
  return 0;
}

extern "C" void *dpc_cuda_allocate(int64_t bytes) {
  return std::aligned_alloc(64, size_t((bytes + 63) / 64 * 64 + 64));
}

extern "C" void dpc_cuda_free(void *pointer) { std::free(pointer); }

extern "C" int32_t dpc_cuda_copy(void *to, const void *from, int64_t bytes,
                                 int32_t) {
  std::memcpy(to, from, size_t(bytes));
  return 0;
}

#endif // DPC_CUDA_EMULATION

#endif // DPC_RUNTIME_CUDA_DEVICEAPI_H
