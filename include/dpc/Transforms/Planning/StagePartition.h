//===- StagePartition.h - Contiguous pipeline stages, exactly ---*- C++ -*-===//
//
// Cuts a chain of layer segments into pipeline stages: contiguous,
// non-empty ranges, one per stage, that minimize the slowest stage's time
// (its segments' times plus the send after its last segment) while each
// range fits its stage's memory. Exact: a bisection on the bound over a
// reachability sweep that finds, stage by stage, every end a split within
// the bound can reach, each from the latest reachable start before it (a
// later start only shortens the range and keeps its send). A greedy fill
// that gives each stage its farthest end is not exact once sends differ:
// running ahead can leave a later stage ending just before a costly send.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_STAGEPARTITION_H
#define DPC_TRANSFORMS_PLANNING_STAGEPARTITION_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::dpc {

/// Whether segments [first, end) fit in the memory of stage `stage`. Must
/// be monotone: a range inside a fitting range (on the same stage) fits.
using StageFitsFn =
    function_ref<bool(unsigned first, unsigned end, unsigned stage)>;

/// The end of each of `stages` ranges (the last is times.size()) of the
/// best split, or nothing when no split fits. `sends[i]` is paid by the
/// stage whose last segment is i. The slowest stage is optimal to within
/// a relative 1e-9.
std::optional<SmallVector<unsigned>> partitionStages(ArrayRef<double> times,
                                                     ArrayRef<double> sends,
                                                     unsigned stages,
                                                     StageFitsFn fits);

/// The split of `times` into `parts` non-empty contiguous ranges whose
/// boundaries lie nearest to equal shares of the total time. Under an
/// interleaved schedule a stage runs several ranges, so its time is a sum:
/// ranges of equal time balance the stages where the split that only
/// bounds the slowest range may not.
SmallVector<unsigned> splitEvenly(ArrayRef<double> times, unsigned parts);

/// The slowest stage's time of the split `ends`.
double getSlowestStageTime(ArrayRef<double> times, ArrayRef<double> sends,
                           ArrayRef<unsigned> ends);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_STAGEPARTITION_H
