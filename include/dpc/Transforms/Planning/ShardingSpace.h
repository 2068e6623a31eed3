//===- ShardingSpace.h - The strategies of every op on a stage --*- C++ -*-===//
//
// Builds the intra-op problem of one stage mesh and micro-batch size from
// the IR: each op's strategies come from its sharding rule (the data axis
// always splits the batch factor where the rule allows; the tensor axis
// splits any one factor it divides, or none), each strategy's time from the
// op's cost interface, its stored activations from the backward pass's
// uses, and each edge's cost from the resharding its two ends need.
// Parameters are nodes too: replicated, or split along one dimension.
// Shardings the user fixed in the IR leave only the strategies that give
// them; when none does, the space records why and the planner skips it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PLANNING_SHARDINGSPACE_H
#define DPC_TRANSFORMS_PLANNING_SHARDINGSPACE_H

#include "dpc/Analysis/CostModel/ReshardingCost.h"
#include "dpc/Interfaces/ShardableOpInterface.h"
#include "dpc/Interfaces/ShardingRule.h"
#include "dpc/Transforms/Planning/LayerSegmentation.h"
#include "dpc/Transforms/Planning/ShardingConstraints.h"
#include "dpc/Transforms/Planning/ShardingProblem.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::dpc {

/// How a tensor indexed by `factors` (one per dimension, from `rule`) lies
/// when the data axis splits `dataFactor` and the tensor axis
/// `tensorFactor` (-1: none; one factor may take both). A result whose
/// split factor is a reduction it does not index is a partial sum.
TensorSharding getFactorSharding(const ShardingRule &rule,
                                 ArrayRef<int64_t> factors, int64_t dataFactor,
                                 int64_t tensorFactor, bool isResult);

class ShardingSpace {
public:
  /// `backwardFactor` multiplies forward time into forward + backward;
  /// `exposedTensorComm` is the part of each tensor-parallel collective
  /// left on the critical path once it is overlapped with the contraction
  /// next to it.
  ShardingSpace(const TrainingGraph &graph,
                const LayerSegmentation &segmentation, const StageMesh &mesh,
                int64_t microBatchSize, double backwardFactor,
                double exposedTensorComm = 1.0,
                const ShardingConstraints *constraints = nullptr);

  struct Strategy {
    /// Factors split by the data and tensor axes (-1: none).
    int64_t dataFactor = -1, tensorFactor = -1;
    SmallVector<TensorSharding, 3> operands, results;
    /// Seconds per micro-batch, forward and backward.
    double time = 0.0;
    /// Ops that do not touch the batch (casts and transposes of weights)
    /// run once per step, not once per micro-batch.
    bool oncePerStep = false;
    /// Stored activations (bytes per device) or, for a parameter, elements
    /// per device.
    double activationBytes = 0.0, parameterElements = 0.0;
    /// Of the stored activations, those of an attention's core, which
    /// selective recomputation does not store; and the seconds per
    /// micro-batch of running the op forward again to remake them.
    double attentionCoreBytes = 0.0, attentionRerunTime = 0.0;
    /// Bytes per device of the gradients the op's backward holds at once
    /// (MemoryBreakdown::temporaries): those of its float results and of
    /// its operands made per micro-batch (a batch input has none), in
    /// this layout. 0 for an op that runs once per step, and for an
    /// elementwise op, whose backward the backends fuse with its
    /// neighbours' (the chain's ends are their gradients).
    double temporaryBytes = 0.0;
    /// The all-reduces the op's partition adds for its split factors
    /// (getSplitCollectives): seconds per micro-batch over each axis, and
    /// bytes each device sends.
    double ownDataTime = 0.0, ownTensorTime = 0.0;
    CommunicationVolume ownSent;
  };

  /// The problem over the representatives; weights count the repeats.
  const ShardingProblem &getProblem() const { return problem; }
  ArrayRef<Strategy> getStrategies(unsigned node) const {
    return strategies[node];
  }
  /// Node of a forward op's representative, of a parameter's or input's.
  std::optional<unsigned> getNode(Operation *op) const;
  std::optional<unsigned> getNode(Value argument) const;

  /// Bytes of `value` for one micro-batch of all data-parallel replicas.
  double getValueBytes(Value value) const;

  /// What a choice costs, per segment (global ops count in segment 0).
  struct SegmentCost {
    double computeTime = 0.0, communicationTime = 0.0;
    /// Seconds once per step (ops on parameters alone).
    double perStepTime = 0.0;
    double activationBytes = 0.0;
    /// Of those, an attention core's, and the seconds of remaking them
    /// (Strategy::attentionCoreBytes, attentionRerunTime).
    double attentionCoreBytes = 0.0, attentionRerunTime = 0.0;
    /// The most bytes per device one op's backward holds besides stored
    /// activations and model state (MemoryBreakdown::temporaries); the
    /// same where gradients are kept sharded over the data axis (ZeRO-2
    /// and 3), so that every weight's gradient is made whole (in the op's
    /// layout) before it is reduce-scattered into its shard.
    double temporaryBytes = 0.0, temporaryBytesSharded = 0.0;
    /// Bytes each device sends per micro-batch in the segment's layout
    /// changes, forward and backward, by axis (stageAxis unused).
    CommunicationVolume sent;
    /// Elements per device of weights (parameters and what is made of them
    /// once per step) whose gradient is partial over the tensor axis: read
    /// where the axis splits a factor they lack (the batch, a layer norm's
    /// sequence). Reduced once per step, with the data-parallel gradients.
    double tensorPartialGradientElements = 0.0;
    /// Of those, elements per device of weights the tensor axis splits but
    /// the reader takes whole (gathered): each rank makes the whole
    /// gradient, which is reduce-scattered into the shards.
    double tensorGatheredGradientElements = 0.0;
    /// The segment's output (the activation sent to the next stage), per
    /// device.
    double outputBytes = 0.0;
    /// Parameters first used in the segment: elements per device and in
    /// all; elements per device of those the backward pass reads.
    double parameterElements = 0.0, parameters = 0.0;
    double backwardParameterElements = 0.0;
    /// Every parameter the segment reads, itself or through a view, with
    /// its elements per device: one read on two pipeline stages (a table
    /// tied to the output projection) crosses between them.
    SmallVector<std::pair<Value, double>, 4> parameterReads;
  };
  SmallVector<SegmentCost> evaluate(ArrayRef<unsigned> choice) const;

  const StageMesh &getMesh() const { return mesh; }

  /// Empty, or why the fixed shardings cannot be met on this mesh (the
  /// first value whose fixed sharding no strategy gives).
  StringRef getConflict() const { return conflict; }
  /// Where the conflicting sharding is written.
  std::optional<Location> getConflictLocation() const {
    return conflictLocation;
  }

private:
  /// Keeps the `options` whose results are `fixed`; when none is, keeps
  /// them all and records the conflict of `what`.
  void restrictTo(std::vector<Strategy> &options,
                  ArrayRef<TensorSharding> fixed, const Twine &what,
                  Location where);
  unsigned addOpNode(Operation *op, double weight);
  unsigned addParameterNode(Value param, double weight);
  unsigned addFixedNode(Value value);
  /// Source node and its sharding of `value` under `choice`.
  const TensorSharding *getProducedSharding(Value value,
                                            ArrayRef<unsigned> choice,
                                            std::optional<unsigned> &node) const;
  /// Seconds of the layout change of `value` from `from` to `to`, one
  /// way; over the tensor axis alone, or both.
  double getReshardingTime(Value value, const TensorSharding &from,
                           const TensorSharding &to, bool tensorAxisOnly) const;
  /// The layout change of `value`'s gradient in the backward pass of the
  /// edge from a producer that made it as `from` (a weight: a parameter or
  /// what is made of parameters once per step) into operand `operand` of
  /// `consumer`: (the layout the consumer's backward makes the gradient
  /// in, the one the producer's backward takes). None where no gradient
  /// flows.
  std::optional<std::pair<TensorSharding, TensorSharding>>
  getGradientResharding(Value value, const TensorSharding &from, bool weight,
                        const Strategy &consumer, unsigned operand) const;
  /// Prices in `s` the all-reduces `op`'s partition adds for the factors
  /// `s` splits; `scale` is the batch's (micro-batching).
  void addOwnCollectives(ShardableOpInterface op, Strategy &s,
                         double scale) const;
  /// Whether the backward pass changes operand `operand` of `consumer`
  /// into the consumer's layout again where the forward gathered it: a
  /// contraction reads it to make another operand's gradient (a
  /// weight's), and it is stored as its producer made it (as Megatron-LM's
  /// sequence parallelism gathers its input again, rather than keep it
  /// whole).
  bool isChangedAgainInBackward(Operation *consumer, unsigned operand) const;
  /// What one device sends to change `value`'s layout, one way.
  CommunicationVolume getReshardingSentBytes(Value value,
                                             const TensorSharding &from,
                                             const TensorSharding &to) const;

  const TrainingGraph &graph;
  const LayerSegmentation &segmentation;
  StageMesh mesh;
  int64_t microBatchSize;
  double backwardFactor;
  double exposedTensorComm;
  const ShardingConstraints *constraints;
  std::string conflict;
  std::optional<Location> conflictLocation;
  /// Micro-batch of all replicas over the IR's batch.
  double batchScale;

  ShardingProblem problem;
  std::vector<std::vector<Strategy>> strategies;
  llvm::DenseMap<Operation *, unsigned> opNodes;
  llvm::DenseMap<Value, unsigned> argNodes;
  /// (forward op, operand) pairs isChangedAgainInBackward holds for.
  llvm::DenseSet<std::pair<Operation *, unsigned>> changedAgain;
};

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PLANNING_SHARDINGSPACE_H
