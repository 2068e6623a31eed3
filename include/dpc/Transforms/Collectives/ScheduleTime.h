//===- ScheduleTime.h - The time of a partitioned program's schedule ------===//
//
// Prices the schedule the collective passes built, as it runs: one rank's
// ops in program order on a compute stream, its collectives in order on a
// communication thread, each started where the program starts it (an
// `async` one right away, a synchronous one blocking the compute stream)
// and waited for at its `dpc.wait`. The time a wait stalls is the exposed
// communication; what the compute stream ran meanwhile hid the rest, at
// the price of the cores the two share (the cluster's `overlap`): each op
// runs longer by (1 - overlap) of the communication it overlaps.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_COLLECTIVES_SCHEDULETIME_H
#define DPC_TRANSFORMS_COLLECTIVES_SCHEDULETIME_H

#include "dpc/Analysis/CostModel/Cluster.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dpc {

/// Seconds one rank spends in one run of a program, by the cost model's
/// op and collective times.
struct ScheduleTime {
  /// The compute stream's ops.
  double compute = 0.0;
  /// The communication thread's collectives, all of them.
  double communication = 0.0;
  /// The part of `communication` the compute stream waited for.
  double exposed = 0.0;
  /// The same, for collectives along the tensor axis alone.
  double tensorCommunication = 0.0, tensorExposed = 0.0;
  /// What the compute stream lost to communication it overlapped.
  double contention = 0.0;
  /// From the first op to the end of the last op or collective.
  double total = 0.0;
};

/// Simulates `program` on `cluster`: a function it calls runs in place,
/// once per call. A `dpc.send` takes the communication thread and returns
/// at once; a `dpc.recv` is taken as ready when it runs (the other stage's
/// timing is not simulated).
ScheduleTime getScheduleTime(func::FuncOp program, const Cluster &cluster);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_COLLECTIVES_SCHEDULETIME_H
