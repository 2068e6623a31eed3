//===- ComputeCost.cpp - Roofline time of ops, and MFU --------------------===//

#include "dpc/Analysis/CostModel/ComputeCost.h"

#include "dpc/Interfaces/CostOpInterface.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dpc;

ComputeEstimate mlir::dpc::getRooflineEstimate(double flops, double bytes,
                                               NumericType type,
                                               const Cluster &cluster) {
  ComputeEstimate estimate;
  estimate.flops = flops;
  estimate.bytes = bytes;
  double arithmetic =
      flops / (cluster.device.getPeakFlops(type) * cluster.efficiency.compute);
  double traffic =
      bytes / (cluster.device.memoryBandwidth * cluster.efficiency.memory);
  estimate.computeBound = arithmetic >= traffic;
  estimate.time = std::max(arithmetic, traffic);
  return estimate;
}

NumericType mlir::dpc::getNumericTypeOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF64())
    return NumericType::F64;
  if (element.isBF16())
    return NumericType::BF16;
  if (element.isF16())
    return NumericType::F16;
  return NumericType::F32;
}

ComputeEstimate mlir::dpc::getOpComputeEstimate(Operation *op,
                                                const Cluster &cluster,
                                                double shards) {
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost)
    return {};
  return getOpComputeEstimate(op, cost.getBytesAccessed(), cluster, shards);
}

ComputeEstimate mlir::dpc::getOpComputeEstimate(Operation *op, double bytes,
                                                const Cluster &cluster,
                                                double shards) {
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost)
    return {};
  Type type;
  if (op->getNumResults())
    type = op->getResult(0).getType();
  else if (op->getNumOperands())
    type = op->getOperand(0).getType();
  NumericType numeric = type ? getNumericTypeOf(type) : NumericType::F32;
  return getRooflineEstimate(cost.getFlops() / shards, bytes / shards, numeric,
                             cluster);
}

double mlir::dpc::getGptModelFlops(double batch, double sequence, double layers,
                                   double hidden, double vocabulary) {
  // Forward: 24 B s h^2 per layer for the GEMMs, 4 B s^2 h for attention,
  // 2 B s h V for the logits; backward twice the forward.
  return 72.0 * batch * sequence * layers * hidden * hidden *
         (1.0 + sequence / (6.0 * hidden) +
          vocabulary / (12.0 * layers * hidden));
}

double mlir::dpc::getFlopsPerDevice(double modelFlops, double stepTime,
                                    int64_t devices) {
  return modelFlops / (stepTime * static_cast<double>(devices));
}

double mlir::dpc::getMfu(double modelFlops, double stepTime, int64_t devices,
                         double peakFlops) {
  return getFlopsPerDevice(modelFlops, stepTime, devices) / peakFlops;
}
