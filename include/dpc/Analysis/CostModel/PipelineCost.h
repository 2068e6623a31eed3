//===- PipelineCost.h - Pipeline schedules: bubble and memory ---*- C++ -*-===//
//
// Step time and activation memory of a pipeline of p stages running m
// micro-batches under a schedule (Narayanan et al., "Efficient Large-Scale
// Language Model Training on GPU Clusters Using Megatron-LM", SC'21,
// section 2.2): the bubble is (p - 1) micro-batch slots, divided by v when
// each device holds v interleaved model chunks.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_PIPELINECOST_H
#define DPC_ANALYSIS_COSTMODEL_PIPELINECOST_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::dpc {

enum class PipelineSchedule {
  /// All forwards, then all backwards (Huang et al., 2019).
  GPipe,
  /// One forward, one backward in the steady state (PipeDream-Flush).
  OneFOneB,
  /// 1F1B over v model chunks per device (Megatron-LM).
  Interleaved1F1B,
};

StringRef stringifyPipelineSchedule(PipelineSchedule schedule);
std::optional<PipelineSchedule> parsePipelineSchedule(StringRef name);

/// Idle time of a device over the ideal m * (tf + tb), as a fraction of
/// it: (p - 1) / (v m); v is 1 unless the schedule is interleaved.
double getBubbleFraction(PipelineSchedule schedule, int64_t stages,
                         int64_t microBatches, int64_t chunks = 1);

/// Time of one step: (m + (p - 1) / v) * (tf + tb) for a micro-batch's
/// forward and backward time on one device (all its chunks together).
double getPipelineTime(PipelineSchedule schedule, int64_t stages,
                       int64_t microBatches, double forwardTime,
                       double backwardTime, int64_t chunks = 1);

/// Micro-batches whose activations stage `stage` (0 first) holds at its
/// peak, in units of one micro-batch through all the layers of the stage:
/// GPipe m; 1F1B min(p - stage, m); interleaved, stage 0 holds
/// p + (p - 1) / v (Korthikanti et al., 2022, section 4.2.3), min m.
double getMicroBatchesInFlight(PipelineSchedule schedule, int64_t stages,
                               int64_t stage, int64_t microBatches,
                               int64_t chunks = 1);

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_PIPELINECOST_H
