//===- CommunicationVolume.h - Bytes a partitioned program sends -*- C++
//-*-===//
//
// What each rank of a partitioned module sends in one step, counted from
// its collectives and sends with the cost model's rule (getSentBytes), so
// that it can be held against what the planner charged for the plan.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_COLLECTIVES_COMMUNICATIONVOLUME_H
#define DPC_TRANSFORMS_COLLECTIVES_COMMUNICATIONVOLUME_H

#include "dpc/Analysis/CostModel/CommunicationCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dpc {

/// The collective `op` is, and the bytes of its buffer on one rank (an
/// all-gather's result, the operand of the others); none for an op that
/// moves no data between ranks. A `dpc.recv` is counted at its sender.
std::optional<std::pair<CollectiveKind, double>>
getCommunicatedBuffer(Operation *op);

/// The plan's axis a (possibly refined) mesh axis is part of: `dp` for
/// `dp_nodes` and `dp_local`.
StringRef getPlanAxis(StringRef axis);

/// Bytes each rank running `program` (a step, or one pipeline stage's
/// step) sends in one run of it, by the axis of the plan's mesh that
/// carries them: a function it calls counts once per call. A group along
/// a refined mesh's axis (`dp_nodes`, `dp_local`) is along the axis it is
/// part of; the parts of a hierarchical all-reduce (`dpc.hierarchical`)
/// count as the all-reduce they make. A collective along both the data
/// and tensor axes counts on the data axis.
CommunicationVolume countSentBytes(func::FuncOp program);

/// The programs of a partitioned module: its partitioned functions that no
/// other calls.
SmallVector<func::FuncOp> getPartitionedPrograms(ModuleOp module);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_COLLECTIVES_COMMUNICATIONVOLUME_H
