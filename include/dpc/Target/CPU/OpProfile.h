//===- OpProfile.h - What each emitted op is predicted to cost -*- C++ -*-===//
//
// A CPU program tells dpc-run as each op it emitted finishes (ProgramAbi.h's
// `mark`); the manifest lists those ops with the work the cost model sees
// in each and the time it predicts, so that `dpc-run --profile` can set
// every measured op beside its prediction and show where the plan's step
// time is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TARGET_CPU_OPPROFILE_H
#define DPC_TARGET_CPU_OPPROFILE_H

#include "dpc/Analysis/CostModel/Cluster.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/JSON.h"

namespace mlir::dpc {

/// The work of one emitted op as the backend runs it, and its price.
struct EmittedOpCost {
  /// Its own operations and those of the elementwise ops fused into it.
  double flops = 0;
  /// What it reads from and writes to memory: the values its loop reads
  /// (not those computed inside it) and its results.
  double bytes = 0;
  /// Ops computed inside it.
  int64_t fusedOps = 0;
  /// The roofline time of the above on the cluster's device; for a
  /// collective, the time its transfer takes on the links (which overlap
  /// may hide).
  double seconds = 0;
  bool collective = false;
};

/// Prices `op` as the backend emitted it, with `isFused` telling which of
/// its operands' producers are computed inside it (Fusion.h); `cluster`
/// null: the work only.
EmittedOpCost getEmittedOpCost(Operation *op,
                               function_ref<bool(Operation *)> isFused,
                               const Cluster *cluster);

/// The manifest's table of the ops a program marks, in mark order: each
/// op's name, location, work and predicted seconds.
llvm::json::Array describeMarkedOps(ArrayRef<Operation *> markedOps,
                                    function_ref<bool(Operation *)> isFused,
                                    const Cluster *cluster);

} // namespace mlir::dpc

#endif // DPC_TARGET_CPU_OPPROFILE_H
