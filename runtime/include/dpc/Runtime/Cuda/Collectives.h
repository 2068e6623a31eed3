//===- Collectives.h - A CUDA program's collectives -------------*- C++ -*-===//
//
// The collectives of ProgramAbi.h (DpcCollectiveCall, with the meaning
// MeshCommunicator.h gives them) on the GPU: each group kind has an NCCL
// communicator and a stream. Starting one makes its stream wait for the
// compute stream's work so far, enqueues the NCCL call (packing blocks
// that are not contiguous first, and unpacking after), and records an
// event; waiting makes the compute stream wait for that event. The host
// never blocks inside a step, so the planned overlap happens on the GPU.
// finish() ends a step: it waits for every stream, bounded by the
// context's timeout, watching NCCL for asynchronous errors (a peer that
// died), and reports the first fault a kernel recorded, naming its op.
//
// Under emulation the host's communicator runs them (Gloo), as for CPU
// programs.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_COLLECTIVES_H
#define DPC_RUNTIME_CUDA_COLLECTIVES_H

#include "dpc/Runtime/Cuda/Context.h"

#include <chrono>
#include <thread>

namespace dpc::cuda {

inline int32_t groupPosition(Context *context, int32_t group) {
#ifdef DPC_CUDA_EMULATION
  return context->host->groupPosition(context->host->self, group);
#else
  return context->groupPositions[group];
#endif
}

#ifdef DPC_CUDA_EMULATION

inline int64_t startCollective(Context *context,
                               const DpcCollectiveCall *call) {
  return context->host->start(context->host->self, call);
}

inline int32_t waitCollective(Context *context, int64_t ticket) {
  return context->host->wait(context->host->self, ticket);
}

/// Ends a step: reports the first fault of a kernel, naming its op
/// (`ops[i]` describes op i). Returns 0, or 1 after host->fail.
inline int32_t finish(Context *context, const char *const *ops) {
  const FaultRecord &record = *context->faults;
  if (record.op == 0)
    return 0;
  std::string message =
      std::string(ops[record.op - 1]) + ": " + describeFault(record);
  context->host->fail(context->host->self, message.c_str());
  return 1;
}

#else

namespace detail {
inline ncclDataType_t getNcclType(int32_t element) {
  return element == 1 ? ncclFloat64 : element == 2 ? ncclInt64 : ncclFloat32;
}
inline ncclRedOp_t getNcclReduction(int32_t reduction) {
  switch (reduction) {
  case 1:
    return ncclAvg;
  case 2:
    return ncclMax;
  case 3:
    return ncclMin;
  default:
    return ncclSum;
  }
}

/// Moves blocks between a tensor of shape [outer, parts * block, inner]
/// (cut along its dimension) and [parts, outer, block, inner] (the blocks
/// contiguous, as NCCL sends them); `pack` says which way.
inline void moveBlocks(cudaStream_t stream, const char *from, char *to,
                       int64_t outer, int64_t parts, int64_t block,
                       int64_t inner, int64_t elementBytes, bool pack) {
  int64_t run = block * inner * elementBytes; // bytes of one block row
  forEachOn(stream, outer * parts, [=] __device__(int64_t i) {
    int64_t o = i / parts, p = i % parts;
    int64_t cut = (o * parts + p) * run, packed = (p * outer + o) * run;
    const char *source = from + (pack ? cut : packed);
    char *target = to + (pack ? packed : cut);
    for (int64_t b = 0; b < run; ++b)
      target[b] = source[b];
  });
}
} // namespace detail

/// Starts `call` on its group's stream; returns its ticket, or -1 after
/// host->fail.
inline int64_t startCollective(Context *context,
                               const DpcCollectiveCall *call) {
  int32_t group = call->group;
  cudaStream_t stream = context->communication[group];
  ncclComm_t comm = context->communicators[group];
  int64_t size = context->groupSizes[group];
  int64_t position = context->groupPositions[group];
  int64_t count = 1;
  for (int32_t d = 0; d < call->rank; ++d)
    count *= call->shape[d];
  int64_t elementBytes = call->element == 0 ? 4 : 8;
  ncclDataType_t type = detail::getNcclType(call->element);
  ncclRedOp_t reduction = detail::getNcclReduction(call->reduction);
  // [outer, length, inner] around dimension `dim` of the local shape.
  auto around = [&](int64_t dim, int64_t &outer, int64_t &length,
                    int64_t &inner) {
    outer = 1;
    inner = 1;
    length = call->rank ? call->shape[dim] : 1;
    for (int32_t d = 0; d < dim; ++d)
      outer *= call->shape[d];
    for (int32_t d = int32_t(dim) + 1; d < call->rank; ++d)
      inner *= call->shape[d];
  };

  cudaEvent_t ready;
  cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
  cudaEventRecord(ready, context->compute);
  cudaStreamWaitEvent(stream, ready, 0);
  cudaEventDestroy(ready);

  ncclResult_t result = ncclSuccess;
  char *temporary = nullptr;
  auto allocate = [&](int64_t bytes) {
    cudaMallocAsync(reinterpret_cast<void **>(&temporary), size_t(bytes),
                    stream);
    return temporary;
  };
  const char *input = static_cast<const char *>(call->input);
  char *output = static_cast<char *>(call->output);
  int64_t outer = 1, length = 1, inner = 1;
  switch (call->kind) {
  case 0: // all-reduce
    result = ncclAllReduce(input, output, size_t(count), type, reduction, comm,
                           stream);
    break;
  case 1: { // reduce-scatter along dim
    around(call->dim, outer, length, inner);
    const char *source = input;
    if (outer != 1) {
      source = allocate(count * elementBytes);
      detail::moveBlocks(stream, input, temporary, outer, size, length / size,
                         inner, elementBytes, /*pack=*/true);
    }
    result = ncclReduceScatter(source, output, size_t(count / size), type,
                               reduction, comm, stream);
    break;
  }
  case 2: { // all-gather along dim
    around(call->dim, outer, length, inner);
    char *target = outer != 1 ? allocate(count * size * elementBytes) : output;
    result = ncclAllGather(input, target, size_t(count), type, comm, stream);
    if (outer != 1)
      detail::moveBlocks(stream, temporary, output, outer, size, length, inner,
                         elementBytes, /*pack=*/false);
    break;
  }
  case 3: { // all-to-all: split along dim, concatenated along concatDim
    around(call->dim, outer, length, inner);
    char *packed = allocate(2 * count * elementBytes);
    char *received = packed + count * elementBytes;
    detail::moveBlocks(stream, input, packed, outer, size, length / size, inner,
                       elementBytes, /*pack=*/true);
    int64_t blockCount = count / size;
    ncclGroupStart();
    for (int64_t peer = 0; peer < size; ++peer) {
      ncclSend(packed + peer * blockCount * elementBytes, size_t(blockCount),
               type, int(peer), comm, stream);
      ncclRecv(received + peer * blockCount * elementBytes, size_t(blockCount),
               type, int(peer), comm, stream);
    }
    result = ncclGroupEnd();
    // Each received block has the input's shape cut along dim; they are
    // concatenated along concatDim.
    int64_t concatOuter = 1, concatInner = 1;
    for (int32_t d = 0; d < call->rank; ++d) {
      int64_t extent = call->shape[d] / (d == call->dim ? size : 1);
      if (d < call->concatDim)
        concatOuter *= extent;
      else if (d > call->concatDim)
        concatInner *= extent;
    }
    int64_t concatLength = call->shape[call->concatDim] /
                           (call->concatDim == call->dim ? size : 1);
    detail::moveBlocks(stream, received, output, concatOuter, size,
                       concatLength, concatInner, elementBytes,
                       /*pack=*/false);
    break;
  }
  case 4: // send
    result = ncclSend(input, size_t(count), type,
                      int((position + call->shift) % size), comm, stream);
    break;
  case 5: // receive
    result = ncclRecv(output, size_t(count), type,
                      int(((position - call->shift) % size + size) % size),
                      comm, stream);
    break;
  }
  if (temporary)
    cudaFreeAsync(temporary, stream);
  if (result != ncclSuccess && result != ncclInProgress) {
    std::string message =
        std::string(call->name) + ": NCCL: " + ncclGetErrorString(result);
    context->host->fail(context->host->self, message.c_str());
    return -1;
  }
  cudaEvent_t done;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  cudaEventRecord(done, stream);
  context->done.push_back(done);
  return context->nextTicket++;
}

/// Makes the compute stream wait for collective `ticket`.
inline int32_t waitCollective(Context *context, int64_t ticket) {
  cudaStreamWaitEvent(context->compute, context->done[size_t(ticket)], 0);
  return 0;
}

/// Ends a step: waits for the compute and communication streams (bounded
/// by the timeout, aborting NCCL on a peer's failure or the deadline),
/// then reports the first CUDA, cuBLASLt or kernel fault. Returns 0, or 1
/// after host->fail.
inline int32_t finish(Context *context, const char *const *ops) {
  DpcHost *host = context->host;
  auto fail = [&](const std::string &message) {
    host->fail(host->self, message.c_str());
    return 1;
  };
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(context->timeoutSeconds);
  std::vector<cudaStream_t> streams = context->communication;
  streams.push_back(context->compute);
  for (cudaStream_t stream : streams) {
    while (true) {
      cudaError_t status = cudaStreamQuery(stream);
      if (status == cudaSuccess)
        break;
      if (status != cudaErrorNotReady)
        return fail(std::string("CUDA: ") + cudaGetErrorString(status));
      for (ncclComm_t comm : context->communicators) {
        ncclResult_t asyncError = ncclSuccess;
        ncclCommGetAsyncError(comm, &asyncError);
        if (asyncError != ncclSuccess && asyncError != ncclInProgress) {
          for (ncclComm_t each : context->communicators)
            ncclCommAbort(each);
          context->communicators.clear();
          return fail(std::string("NCCL: ") + ncclGetErrorString(asyncError) +
                      " (a peer failed or left)");
        }
      }
      if (std::chrono::steady_clock::now() > deadline) {
        for (ncclComm_t each : context->communicators)
          ncclCommAbort(each);
        context->communicators.clear();
        return fail("timed out after " +
                    std::to_string(int(context->timeoutSeconds)) +
                    " s waiting for the GPU and its collectives");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  for (cudaEvent_t event : context->done)
    cudaEventDestroy(event);
  context->done.clear();
  context->nextTicket = 0;
  if (cudaError_t status = cudaGetLastError(); status != cudaSuccess)
    return fail(std::string("CUDA: ") + cudaGetErrorString(status));
  if (!context->error.empty()) {
    std::string message = context->error;
    context->error.clear();
    return fail(message);
  }
  FaultRecord record = *context->faults;
  *context->faults = FaultRecord{};
  if (record.op != 0)
    return fail(std::string(ops[record.op - 1]) + ": " + describeFault(record));
  return 0;
}

#endif

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_COLLECTIVES_H
