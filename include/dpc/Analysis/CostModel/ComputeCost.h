//===- ComputeCost.h - Roofline time of ops, and MFU ------------*- C++ -*-===//
//
// An op takes as long as the slower of its arithmetic (FLOPs over the
// device's peak for its element type, times the compute efficiency) and its
// memory traffic (bytes over the memory bandwidth, times the memory
// efficiency): the roofline model. FLOPs and bytes come from the op's
// CostOpInterface. MFU is counted as Megatron-LM and Alpa count it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_COSTMODEL_COMPUTECOST_H
#define DPC_ANALYSIS_COSTMODEL_COMPUTECOST_H

#include "dpc/Analysis/CostModel/Cluster.h"

namespace mlir {
class Operation;
class Type;
} // namespace mlir

namespace mlir::dpc {

/// The roofline estimate of some work on one device.
struct ComputeEstimate {
  double flops = 0.0;
  double bytes = 0.0;
  /// Seconds.
  double time = 0.0;
  /// Whether arithmetic, not memory traffic, sets the time.
  bool computeBound = false;
};

/// max(flops / (peak(type) * compute efficiency),
///     bytes / (memory bandwidth * memory efficiency)).
ComputeEstimate getRooflineEstimate(double flops, double bytes,
                                    NumericType type, const Cluster &cluster);

/// The numeric type whose peak prices arithmetic on elements of `type`:
/// f64, bf16 and f16 their own, everything else (f32, integers) f32.
NumericType getNumericTypeOf(Type type);

/// The roofline estimate of one execution of `op` on one device, its work
/// divided evenly over `shards` devices. Ops without CostOpInterface cost
/// nothing. The element type of the first result (else operand) picks the
/// peak.
ComputeEstimate getOpComputeEstimate(Operation *op, const Cluster &cluster,
                                     double shards = 1.0);

/// Same, with the op's memory traffic given (as FusedTraffic counts it).
ComputeEstimate getOpComputeEstimate(Operation *op, double bytes,
                                     const Cluster &cluster,
                                     double shards = 1.0);

/// Model FLOPs of one training step of a GPT (Megatron-LM's formula, no
/// recomputation): 72 B s L h^2 (1 + s / (6h) + V / (12 L h)).
double getGptModelFlops(double batch, double sequence, double layers,
                        double hidden, double vocabulary);

/// Achieved FLOP/s per device: model FLOPs of a step over its time and the
/// device count.
double getFlopsPerDevice(double modelFlops, double stepTime, int64_t devices);

/// Model FLOPs utilization: achieved FLOP/s per device over the dense
/// peak.
double getMfu(double modelFlops, double stepTime, int64_t devices,
              double peakFlops);

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_COSTMODEL_COMPUTECOST_H
