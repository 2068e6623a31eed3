//===- MemoryCost.h - Memory one device needs for training ------*- C++ -*-===//
//
// Model state (parameters, gradients, optimizer state) per device under a
// ZeRO stage (Rajbhandari et al., "ZeRO", SC'20, section 5), and stored
// activations with and without recomputation (Chen et al., 2016; Korthikanti
// et al., "Reducing Activation Recomputation in Large Transformer Models",
// 2022).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_MEMORYCOST_H
#define DPC_ANALYSIS_COSTMODEL_MEMORYCOST_H

#include <algorithm>
#include <cstdint>

namespace mlir::dpc {

/// Bytes each parameter costs in each kind of model state.
struct ModelStateBytes {
  /// Parameters as the forward reads them (2 for bf16).
  double parameter = 2.0;
  /// Gradients (2 for bf16; Megatron-LM keeps 4, fp32 main grads).
  double gradient = 2.0;
  /// Optimizer state (12 for Adam in mixed precision: fp32 master copy,
  /// first and second moments).
  double optimizer = 12.0;
  /// A copy of the parameters in the compute precision kept besides
  /// `parameter` (2 for bf16 when `parameter` is the fp32 master itself);
  /// sharded with the parameters.
  double computeCopy = 0.0;
  /// Of `parameter`, the bytes of masters that have a compute copy (all of
  /// it under mixed precision): read only by the optimizer and the copy,
  /// ZeRO-1/2 shard them as the optimizer state where the step gathers the
  /// copy once (Megatron-LM's distributed optimizer).
  double copiedMaster = 0.0;

  /// Pure fp32 training with Adam: 4 + 4 + 8.
  static ModelStateBytes fp32Adam() { return {4.0, 4.0, 8.0}; }
};

/// Bytes of each kind of memory on one device.
struct MemoryBreakdown {
  double parameters = 0.0;
  double gradients = 0.0;
  double optimizerState = 0.0;
  double activations = 0.0;
  /// Buffers alive only while one op's backward runs: the gradient of its
  /// output, those of its operands, and a weight's gradient made whole
  /// before it is reduced into the weight's shard.
  double temporaries = 0.0;
  /// Buffers of the optimizer phase, when the backward pass has freed the
  /// activations and its temporaries: under ZeRO-1/2 the updated parameter
  /// shards gathered whole, a bucket at a time, beside the bucket's
  /// concatenated shards.
  double optimizerTemporaries = 0.0;

  double getModelState() const {
    return parameters + gradients + optimizerState;
  }
  /// The peak: model state, and the larger of the two phases' buffers.
  double getTotal() const {
    return getModelState() +
           std::max(activations + temporaries, optimizerTemporaries);
  }
};

/// Model state of `parameters` parameters (those of the device's stage and
/// tensor-parallel shard) data-parallel over `dataParallel` devices: ZeRO
/// stage 0 replicates everything, 1 shards the optimizer state, 2 also the
/// gradients, 3 also the parameters. `shardCopiedMasters`: ZeRO-1/2 shard
/// the masters of compute copies too (dpc does in a step of one
/// micro-batch on one stage).
MemoryBreakdown getModelStateMemory(double parameters,
                                    const ModelStateBytes &bytes, int zeroStage,
                                    int64_t dataParallel,
                                    bool shardCopiedMasters = false);

/// Stored activations of `layers` layers for `microBatchesInFlight`
/// micro-batches, each layer storing `layerActivationBytes` for its
/// backward pass. With recomputation each layer keeps only its input
/// (`layerInputBytes`) and the layer being recomputed holds its full
/// activations once.
double getActivationMemory(double layerActivationBytes, double layerInputBytes,
                           int64_t layers, double microBatchesInFlight,
                           bool recompute);

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_MEMORYCOST_H
