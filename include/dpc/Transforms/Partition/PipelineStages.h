//===- PipelineStages.h - One program per pipeline stage --------*- C++ -*-===//
//
// A step planned on several pipeline stages runs a different program on
// each stage's devices: the ops of its stage, in the order of a pipeline
// schedule over the step's micro-batches, with the values that cross
// stages sent and received.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PARTITION_PIPELINESTAGES_H
#define DPC_TRANSFORMS_PARTITION_PIPELINESTAGES_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::dpc {

/// Whether any op of `module` runs on a pipeline stage other than 0.
bool hasPipelineStages(ModuleOp module);

/// Replaces each step function of `module` (a planned function nobody
/// calls) by one program per stage, `@<name>.stage<s>` marked
/// `dpc.pipeline_stage = s`:
/// - the step's calls (one per micro-batch) are inlined, each op tagged with
///   its micro-batch (`dpc.micro_batch`);
/// - an op's `dpc.stage` is its pipeline position: with `chunks` model
///   chunks per stage, position k is chunk k / pp of stage k % pp; an op
///   without one runs where the last of the values it reads is made, or
///   on every stage when it reads none;
/// - each program keeps its stage's ops; a value one stage makes and
///   another reads is sent (`dpc.send` over the mesh's `pp` axis) right
///   after it is made and received (`dpc.recv`) where the reader needs it;
/// - each program is ordered by `schedule` (`gpipe`: every forward, then
///   every backward; `1f1b`: as many forwards as stages follow, then one
///   forward and one backward in turn; `interleaved-1f1b`: Megatron-LM's
///   schedule over the chunks), keeping every dependency;
/// - each program returns the results its stage computes.
/// Fails with an error where the schedule would reorder the messages
/// between two stages or make stages wait on each other in a cycle.
LogicalResult splitPipelineStages(ModuleOp module, StringRef schedule,
                                  int64_t chunks);

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PARTITION_PIPELINESTAGES_H
