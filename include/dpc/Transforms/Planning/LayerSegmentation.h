//===- LayerSegmentation.h - Layers, and the layers that repeat -*- C++ -*-===//
//
// Cuts the forward pass where a single activation is live (between the
// blocks of a transformer, after each residual add), then finds runs of
// segments that repeat structurally (same ops, attributes, types and
// wiring) and maps every op of a repeat onto the op of the first unit, so
// that a 96-layer model is planned as one layer with weight 96.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_LAYERSEGMENTATION_H
#define DPC_TRANSFORMS_PLANNING_LAYERSEGMENTATION_H

#include "dpc/Transforms/Planning/TrainingGraph.h"

namespace mlir::dpc {

class LayerSegmentation {
public:
  explicit LayerSegmentation(const TrainingGraph &graph);

  struct Segment {
    /// Forward ops in program order (constants excluded: they are free
    /// and replicated).
    SmallVector<Operation *> ops;
    /// The one activation live after the segment (null for the last).
    Value output;
    /// Segments of the same class are structurally identical.
    unsigned structureClass = 0;
  };
  /// A run of segments: `repeats` units of `period` segments each, from
  /// segment `first`. Singletons have period 1 and repeats 1.
  struct Region {
    unsigned first = 0, period = 1, repeats = 1;
    unsigned getEnd() const { return first + period * repeats; }
  };

  ArrayRef<Segment> getSegments() const { return segments; }
  ArrayRef<Region> getRegions() const { return regions; }
  /// Per segment, whether recomputation keeps its output (Megatron-LM's
  /// full recomputation keeps each layer's input): the last segment of each
  /// repeat of a repeated layer, and every segment outside repeats.
  SmallVector<bool> getCheckpointedSegments() const;
  /// Ops derived from constants alone (a causal mask): in no segment.
  ArrayRef<Operation *> getGlobalOps() const { return globalOps; }
  /// Segment of a forward op, or -1 for constants and global ops.
  int64_t getSegmentOf(Operation *op) const {
    return segmentOf.lookup_or(op, -1);
  }
  /// The op (parameter) of the region's first unit that `op` (`param`)
  /// repeats; itself outside repeats.
  Operation *getRepresentative(Operation *op) const {
    return representativeOp.lookup_or(op, op);
  }
  Value getRepresentative(Value param) const {
    return representativeParam.lookup_or(param, param);
  }

private:
  SmallVector<Segment> segments;
  SmallVector<Region> regions;
  SmallVector<Operation *> globalOps;
  llvm::DenseMap<Operation *, int64_t> segmentOf;
  llvm::DenseMap<Operation *, Operation *> representativeOp;
  llvm::DenseMap<Value, Value> representativeParam;
};

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_LAYERSEGMENTATION_H
