//===- MemoryCost.cpp - Memory one device needs for training --------------===//

#include "dpc/Analysis/CostModel/MemoryCost.h"

#include <algorithm>

using namespace mlir::dpc;

MemoryBreakdown mlir::dpc::getModelStateMemory(double parameters,
                                               const ModelStateBytes &bytes,
                                               int zeroStage,
                                               int64_t dataParallel,
                                               bool shardCopiedMasters) {
  double shards = static_cast<double>(std::max<int64_t>(dataParallel, 1));
  auto divided = [&](int fromStage) {
    return zeroStage >= fromStage ? shards : 1.0;
  };
  double shardedMasters = shardCopiedMasters && zeroStage >= 1 && zeroStage < 3
                              ? bytes.copiedMaster
                              : 0.0;
  MemoryBreakdown memory;
  memory.optimizerState = parameters * bytes.optimizer / divided(1);
  memory.gradients = parameters * bytes.gradient / divided(2);
  memory.parameters =
      parameters *
      ((bytes.parameter - shardedMasters + bytes.computeCopy) / divided(3) +
       shardedMasters / shards);
  return memory;
}

double mlir::dpc::getActivationMemory(double layerActivationBytes,
                                      double layerInputBytes, int64_t layers,
                                      double microBatchesInFlight,
                                      bool recompute) {
  double n = static_cast<double>(layers);
  if (!recompute)
    return n * layerActivationBytes * microBatchesInFlight;
  return n * layerInputBytes * microBatchesInFlight + layerActivationBytes;
}
