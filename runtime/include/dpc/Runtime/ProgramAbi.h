//===- ProgramAbi.h - How dpc-run calls a compiled program ------*- C++ -*-===//
//
// The boundary between an artifact's library and the process that runs
// it: plain C, so that the library and dpc-run may come from different
// compilers. A program computes one training step of one rank; whatever
// needs peers (collectives, send/recv) or reports errors goes through the
// host's callbacks.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PROGRAMABI_H
#define DPC_RUNTIME_PROGRAMABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The version of this boundary; a library built against another is
/// refused.
#define DPC_PROGRAM_ABI_VERSION 5

/// One collective, in the terms of dpc::CollectiveRequest
/// (MeshCommunicator.h); the enums have its enumerators' values.
typedef struct DpcCollectiveCall {
  int32_t kind;
  /// An index into the manifest's "groups".
  int32_t group;
  int32_t reduction;
  int32_t element;
  const void *input;
  void *output;
  /// The local shape of `input` (of `output` for a receive).
  const int64_t *shape;
  int32_t rank;
  int64_t dim, concatDim, shift;
  /// The op and its location, for errors.
  const char *name;
} DpcCollectiveCall;

typedef struct DpcHost {
  void *self;
  /// Starts a collective; returns its ticket, or -1 after reporting.
  int64_t (*start)(void *self, const DpcCollectiveCall *call);
  /// Waits for a ticket; 0 on success, else the failure was reported.
  int32_t (*wait)(void *self, int64_t ticket);
  /// This rank's position in its group of kind `group`.
  int32_t (*groupPosition)(void *self, int32_t group);
  /// Reports an error of the program (a label out of range, ...).
  void (*fail)(void *self, const char *message);
  /// Non-zero: every float result is checked for NaN and Inf, and the
  /// first op to make one fails the step, named.
  int32_t checkFinite;
  /// A CUDA program's device context (dpc::cuda::Context, made by the
  /// artifact's dpc_cuda_create); null for CPU programs.
  void *device;
  /// Non-zero: a CPU program calls `mark` with -1 as it starts and with
  /// the index of each op it emitted (the manifest program's "ops") as
  /// that op finishes, so the host can time every op (dpc-run --profile).
  int32_t profile;
  void (*mark)(void *self, int32_t op);
} DpcHost;

/// One step of a program: `args` and `results` point to the dense local
/// tensors the manifest lists, `arena` to its "arena_bytes" bytes (64-byte
/// aligned); a result whose manifest entry "updates" an argument is given
/// that argument's buffer, and the program writes it there. Returns 0, or
/// non-zero after host->fail.
typedef int32_t (*DpcProgramFn)(DpcHost *host, void *const *args,
                                void *const *results, char *arena);

/// What a rank tells a CUDA artifact's library to make its device
/// context with (dpc_cuda_create): the GPU, the job's NCCL id (from rank
/// 0's dpc_cuda_unique_id), and for each group kind of the manifest the
/// rank's member list (`groupColors`, an index into the kind's lists), its
/// position in it and its size.
typedef struct DpcCudaConfig {
  int32_t localRank;
  int32_t rank, worldSize;
  const char *uniqueId; // DPC_CUDA_UNIQUE_ID_BYTES bytes
  int32_t numGroups;
  const int32_t *groupColors, *groupPositions, *groupSizes;
  /// Bounds a step's wait for the GPU and its collectives.
  double timeoutSeconds;
} DpcCudaConfig;

#define DPC_CUDA_UNIQUE_ID_BYTES 128

/// The entry points a CUDA artifact's library exports besides its
/// programs. Each returns 0, or non-zero with a message in `error`.
typedef int32_t (*DpcCudaUniqueIdFn)(char *id, char *error, int64_t errorBytes);
typedef int32_t (*DpcCudaCreateFn)(const DpcCudaConfig *config, void **context,
                                   char *error, int64_t errorBytes);
/// GPU memory for a rank's arguments, results and arena (null when out
/// of memory), and synchronous copies to (`toDevice`) or from the GPU.
typedef void *(*DpcCudaAllocateFn)(int64_t bytes);
typedef void (*DpcCudaFreeFn)(void *pointer);
typedef int32_t (*DpcCudaCopyFn)(void *to, const void *from, int64_t bytes,
                                 int32_t toDevice);

#ifdef __cplusplus
}
#endif

#endif // DPC_RUNTIME_PROGRAMABI_H
