//===- PipelineCost.cpp - Pipeline schedules: bubble and memory -----------===//

#include "dpc/Analysis/CostModel/PipelineCost.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dpc;

StringRef mlir::dpc::stringifyPipelineSchedule(PipelineSchedule schedule) {
  switch (schedule) {
  case PipelineSchedule::GPipe:
    return "gpipe";
  case PipelineSchedule::OneFOneB:
    return "1f1b";
  case PipelineSchedule::Interleaved1F1B:
    return "interleaved-1f1b";
  }
  llvm_unreachable("unknown pipeline schedule");
}

std::optional<PipelineSchedule>
mlir::dpc::parsePipelineSchedule(StringRef name) {
  for (PipelineSchedule schedule :
       {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB,
        PipelineSchedule::Interleaved1F1B})
    if (name == stringifyPipelineSchedule(schedule))
      return schedule;
  return std::nullopt;
}

/// Chunks per device that the schedule actually interleaves.
static double effectiveChunks(PipelineSchedule schedule, int64_t chunks) {
  return schedule == PipelineSchedule::Interleaved1F1B
             ? static_cast<double>(std::max<int64_t>(chunks, 1))
             : 1.0;
}

double mlir::dpc::getBubbleFraction(PipelineSchedule schedule, int64_t stages,
                                    int64_t microBatches, int64_t chunks) {
  if (stages <= 1 || microBatches < 1)
    return 0.0;
  return static_cast<double>(stages - 1) /
         (effectiveChunks(schedule, chunks) * microBatches);
}

double mlir::dpc::getPipelineTime(PipelineSchedule schedule, int64_t stages,
                                  int64_t microBatches, double forwardTime,
                                  double backwardTime, int64_t chunks) {
  double ideal = microBatches * (forwardTime + backwardTime);
  return ideal *
         (1.0 + getBubbleFraction(schedule, stages, microBatches, chunks));
}

double mlir::dpc::getMicroBatchesInFlight(PipelineSchedule schedule,
                                          int64_t stages, int64_t stage,
                                          int64_t microBatches,
                                          int64_t chunks) {
  double m = static_cast<double>(microBatches);
  switch (schedule) {
  case PipelineSchedule::GPipe:
    return m;
  case PipelineSchedule::OneFOneB:
    return std::min(static_cast<double>(stages - stage), m);
  case PipelineSchedule::Interleaved1F1B: {
    // Warm-up runs (p - stage - 1) * 2 + (v - 1) * p forwards of 1/v of the
    // stage each before the first backward (Megatron-LM's schedule).
    double v = effectiveChunks(schedule, chunks);
    double warmup = 2.0 * (stages - stage - 1) + (v - 1) * stages + 1;
    return std::min(warmup / v, m);
  }
  }
  llvm_unreachable("unknown pipeline schedule");
}
