//===- Context.h - What a CUDA program runs with ----------------*- C++ -*-===//
//
// A rank's device context: the compute stream the program's kernels run
// on in order, one communication stream per group kind (NCCL), the
// cuBLASLt handle and workspace, a scratch buffer for kernels that need
// one, and the error slot. Kernels cannot return an error to the host
// without a synchronization, so a kernel that meets bad data (a label out
// of range, NaN under --check-finite) records the first such fault in the
// slot, keeps its outputs defined, and the step reports it at its end
// (finish), naming the op.
//
// Under DPC_CUDA_EMULATION the context is host memory and forEach a loop;
// collectives then go through the host's communicator (ProgramAbi.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CONTEXT_H
#define DPC_RUNTIME_CUDA_CONTEXT_H

#include "dpc/Runtime/Cuda/Portability.h"
#include "dpc/Runtime/ProgramAbi.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#ifndef DPC_CUDA_EMULATION
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace dpc::cuda {

/// What went wrong in a kernel, read by the host after the step.
enum class Fault : int32_t {
  None = 0,
  LabelOutOfRange,  // a = label, b = its element
  IndexOutOfRange,  // a = index, b = the size indexed
  NotFinite,        // a = the result's number
  DivisionByZero,   // integer division
  CastOutOfRange,   // float to integer
  SingleValueBatch, // batch_norm training over one value per channel
};

/// The first fault of a step: `op` is the op's number in the program + 1
/// (0: none).
struct FaultRecord {
  int32_t op;
  Fault fault;
  int64_t a, b;
};

/// Records `fault` of op `op` unless a fault came first.
DPC_HOST_DEVICE inline void raise(FaultRecord *record, int32_t op, Fault fault,
                                  int64_t a = 0, int64_t b = 0) {
#ifdef __CUDA_ARCH__
  if (atomicCAS(&record->op, 0, op + 1) != 0)
    return;
#else
  if (record->op != 0)
    return;
  record->op = op + 1;
#endif
  record->fault = fault;
  record->a = a;
  record->b = b;
}

#ifdef DPC_CUDA_EMULATION

struct Context {
  DpcHost *host = nullptr;
  FaultRecord *faults = &faultStorage;
  FaultRecord faultStorage{};
  std::vector<double> scratch;
};

/// Calls `body(i)` for i in [0, count).
template <typename Body>
void forEach(Context *, int64_t count, const Body &body) {
  for (int64_t i = 0; i < count; ++i)
    body(i);
}

/// `count` doubles of scratch memory, valid until the next call.
inline double *getScratch(Context *context, int64_t count) {
  if (int64_t(context->scratch.size()) < count)
    context->scratch.resize(count);
  return context->scratch.data();
}

/// The context of the program called with `host`.
inline Context *getContext(DpcHost *host) {
  thread_local Context context;
  context.host = host;
  context.faultStorage = FaultRecord{};
  return &context;
}

#else

struct Context {
  DpcHost *host = nullptr;
  int device = 0;
  cudaStream_t compute = nullptr;
  /// One per group kind, in the manifest's order.
  std::vector<cudaStream_t> communication;
  std::vector<ncclComm_t> communicators;
  std::vector<int> groupPositions, groupSizes;
  cublasLtHandle_t blas = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  FaultRecord *faults = nullptr; // mapped host memory
  double *scratch = nullptr;
  int64_t scratchCount = 0;
  /// The event each started collective records when done, by ticket.
  std::vector<cudaEvent_t> done;
  int64_t nextTicket = 0;
  /// Bounds a step's wait for the GPU and its collectives.
  double timeoutSeconds = 300;
  std::string error;
};

template <typename Body>
__global__ void forEachKernel(int64_t count, Body body) {
  int64_t step = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step)
    body(i);
}

/// Runs `body(i)` for i in [0, count) on `stream`, a thread per index.
template <typename Body>
void forEachOn(cudaStream_t stream, int64_t count, const Body &body) {
  if (count <= 0)
    return;
  constexpr int kThreads = 256;
  int64_t blocks =
      std::min<int64_t>((count + kThreads - 1) / kThreads, int64_t(1) << 20);
  forEachKernel<<<unsigned(blocks), kThreads, 0, stream>>>(count, body);
}

/// Runs `body(i)` for i in [0, count) on the compute stream.
template <typename Body>
void forEach(Context *context, int64_t count, const Body &body) {
  forEachOn(context->compute, count, body);
}

/// `count` doubles of device memory for the compute stream's next
/// kernels; grown in stream order.
inline double *getScratch(Context *context, int64_t count) {
  if (context->scratchCount < count) {
    if (context->scratch)
      cudaFreeAsync(context->scratch, context->compute);
    cudaMallocAsync(reinterpret_cast<void **>(&context->scratch),
                    size_t(count) * sizeof(double), context->compute);
    context->scratchCount = count;
  }
  return context->scratch;
}

inline Context *getContext(DpcHost *host) {
  auto *context = static_cast<Context *>(host->device);
  if (!context) {
    host->fail(host->self, "a CUDA program runs under dpc-run, which gives "
                           "it a device");
    return nullptr;
  }
  context->host = host;
  return context;
}

#endif

/// The address, in the memory kernels read, of constant data declared
/// DPC_DEVICE_DATA.
template <typename T, size_t N> T *getDataAddress(const T (&data)[N]) {
#ifdef DPC_CUDA_EMULATION
  return const_cast<T *>(data);
#else
  void *address = nullptr;
  cudaGetSymbolAddress(&address, data);
  return static_cast<T *>(address);
#endif
}

/// What `record` says, in words.
inline std::string describeFault(const FaultRecord &record) {
  auto text = [](int64_t value) { return std::to_string(value); };
  switch (record.fault) {
  case Fault::None:
    return "no fault";
  case Fault::LabelOutOfRange:
    return "label " + text(record.a) + " (element " + text(record.b) +
           " of the labels) is neither a class nor the ignore_index";
  case Fault::IndexOutOfRange:
    return "index " + text(record.a) + " is out of range for a dimension of " +
           text(record.b);
  case Fault::NotFinite:
    return "result #" + text(record.a) + " holds NaN or Inf";
  case Fault::DivisionByZero:
    return "integer division by zero";
  case Fault::CastOutOfRange:
    return "a value out of the integer type's range";
  case Fault::SingleValueBatch:
    return "training-mode batch_norm needs more than one value per channel, "
           "got " +
           text(record.a);
  }
  return "an unknown fault";
}

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_CONTEXT_H
