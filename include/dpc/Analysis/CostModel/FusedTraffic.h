//===- FusedTraffic.h - Memory traffic once kernels are fused ---*- C++ -*-===//
//
// The bytes each op moves to and from device memory when the backend fuses
// what GPU compilers fuse (XLA's loop and input fusion, cuBLASLt
// epilogues, FlashAttention), instead of every op reading and writing its
// tensors: a value stays in registers, and costs nothing, when its
// producer is pointwise (or a contraction with a pointwise epilogue) and
// every user can take it on the fly. The kinds of op come from their
// sharding rules, never from their names:
//   - pointwise: every factor parallel and every result indexed by all of
//     them (elementwise, broadcasting, transposes, casts);
//   - contraction: a reduction factor indexed by two or more operands
//     (matmul, convolution); reads its operands from memory;
//   - row normalization: a whole factor, no reduction, result shaped like
//     its input (softmax, layer norm). Only where the backend has a fused
//     attention kernel does one run on the fly: a softmax of a contraction's
//     output along the keys' axis, summed over by the next contraction
//     (FlashAttention's online softmax, which recomputes the scores in the
//     backward pass). Such an attention core is recognized with or without
//     the kernel: selective recomputation stores none of it either.
// Reductions and ops without a rule take pointwise inputs on the fly and
// write their results.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_FUSEDTRAFFIC_H
#define DPC_ANALYSIS_COSTMODEL_FUSEDTRAFFIC_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::dpc {

class FusedTraffic {
public:
  /// Analyzes the ops of `block` that `inScope` accepts (the forward pass),
  /// in order. Values `mustStore` accepts (activations the backward pass
  /// reads) are written, unless `fusedAttention` is set and an online
  /// normalization consumes them: FlashAttention recomputes those in the
  /// backward pass.
  FusedTraffic(Block &block, llvm::function_ref<bool(Operation *)> inScope,
               llvm::function_ref<bool(Value)> mustStore,
               bool fusedAttention = false);

  /// Bytes `op` reads and writes once fused.
  double getBytes(Operation *op) const { return bytes.lookup(op); }
  /// Whether `value` is written to memory.
  bool isMaterialized(Value value) const {
    return !inRegisters.contains(value);
  }

  /// Whether the backward pass recomputes `value` instead of storing it.
  bool isRecomputed(Value value) const { return recomputed.contains(value); }
  /// Whether the backward pass runs `op` again (the scores' contraction of
  /// a fused attention).
  bool isRerunInBackward(Operation *op) const {
    return recomputedOps.contains(op);
  }

  /// Whether `value` is part of an attention's core, from the scores'
  /// contraction to the probabilities the next contraction sums over (the
  /// values a fused kernel keeps out of memory, and selective
  /// recomputation does not store), fused kernel or not.
  bool isAttentionCore(Value value) const {
    return attentionCore.contains(value);
  }

private:
  llvm::DenseSet<Value> inRegisters, recomputed, attentionCore;
  llvm::DenseSet<Operation *> recomputedOps, scoreContractions;
  llvm::DenseMap<Operation *, double> bytes;
};

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_FUSEDTRAFFIC_H
