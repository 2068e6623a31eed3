//===- DpcShardingRules.cpp - Sharding rules of the dpc ops ---------------===//
//
// The factor form of each op's legal splits (ShardingRule.h). Ops whose
// rule is elementwise share getElementwiseShardingRule.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dpc;

static ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Maps `operand`'s dimensions, aligned from the right, onto the factors of
/// `resultShape`; broadcast dimensions map to no factor.
static SmallVector<int64_t>
mapBroadcastOperand(ArrayRef<int64_t> operandShape,
                    ArrayRef<int64_t> resultShape,
                    ArrayRef<int64_t> resultFactors) {
  SmallVector<int64_t> factors;
  size_t offset = resultShape.size() - operandShape.size();
  for (auto [i, size] : llvm::enumerate(operandShape))
    factors.push_back(size == resultShape[offset + i]
                          ? resultFactors[offset + i]
                          : ShardingRule::kNoFactor);
  return factors;
}

ShardingRule mlir::dpc::getElementwiseShardingRule(Operation *op) {
  ShardingRule rule;
  ArrayRef<int64_t> resultShape = getShape(op->getResult(0));
  SmallVector<int64_t> factors;
  for (int64_t size : resultShape)
    factors.push_back(rule.addFactor(size, FactorKind::Parallel));
  for (Value operand : op->getOperands())
    rule.addOperand(
        mapBroadcastOperand(getShape(operand), resultShape, factors));
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    rule.addResult(factors);
  return rule;
}

ShardingRule mlir::dpc::getReductionShardingRule(Operation *op,
                                                 ArrayRef<int64_t> dims,
                                                 ReductionKind kind,
                                                 FactorKind reducedKind) {
  ShardingRule rule;
  ArrayRef<int64_t> inputShape = getShape(op->getOperand(0));
  ArrayRef<int64_t> resultShape = getShape(op->getResult(0));
  bool keepDims = resultShape.size() == inputShape.size();
  SmallVector<int64_t> inputFactors, resultFactors;
  for (auto [dim, size] : llvm::enumerate(inputShape)) {
    bool reduced = llvm::is_contained(dims, static_cast<int64_t>(dim));
    int64_t factor = rule.addFactor(
        size, reduced ? reducedKind : FactorKind::Parallel, kind);
    inputFactors.push_back(factor);
    if (!reduced)
      resultFactors.push_back(factor);
    else if (keepDims)
      resultFactors.push_back(ShardingRule::kNoFactor);
  }
  rule.addOperand(inputFactors);
  rule.addResult(resultFactors);
  return rule;
}

ShardingRule MatmulOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> lhs = getShape(getLhs()), rhs = getShape(getRhs());
  ArrayRef<int64_t> result = getShape(getResult());
  SmallVector<int64_t> resultFactors;
  for (int64_t size : result)
    resultFactors.push_back(rule.addFactor(size, FactorKind::Parallel));
  int64_t k = rule.addFactor(lhs.back(), FactorKind::Reduction);
  ArrayRef<int64_t> batch = result.drop_back(2);
  ArrayRef<int64_t> batchFactors = ArrayRef(resultFactors).drop_back(2);
  int64_t i = resultFactors[result.size() - 2], j = resultFactors.back();

  SmallVector<int64_t> lhsFactors =
      mapBroadcastOperand(lhs.drop_back(2), batch, batchFactors);
  lhsFactors.append({i, k});
  SmallVector<int64_t> rhsFactors =
      mapBroadcastOperand(rhs.drop_back(2), batch, batchFactors);
  rhsFactors.append({k, j});
  rule.addOperand(lhsFactors);
  rule.addOperand(rhsFactors);
  rule.addResult(resultFactors);
  return rule;
}

ShardingRule TransposeOp::getShardingRule() {
  ShardingRule rule;
  SmallVector<int64_t> inputFactors;
  for (int64_t size : getShape(getInput()))
    inputFactors.push_back(rule.addFactor(size, FactorKind::Parallel));
  SmallVector<int64_t> resultFactors;
  for (int64_t dim : getPermutation())
    resultFactors.push_back(inputFactors[dim]);
  rule.addOperand(inputFactors);
  rule.addResult(resultFactors);
  return rule;
}

/// The rule of an op that normalizes over the dimensions from `firstWhole`
/// on: those must stay whole; the leading ones are parallel. Operands after
/// the first index the trailing dimensions only.
static ShardingRule getNormalizationRule(Operation *op, int64_t firstWhole,
                                         int64_t lastWhole) {
  ShardingRule rule;
  SmallVector<int64_t> factors;
  for (auto [dim, size] : llvm::enumerate(getShape(op->getOperand(0)))) {
    int64_t d = dim;
    bool whole = d >= firstWhole && d <= lastWhole;
    factors.push_back(rule.addFactor(size, whole ? FactorKind::NeedReplication
                                                 : FactorKind::Parallel));
  }
  rule.addOperand(factors);
  for (Value operand : op->getOperands().drop_front())
    rule.addOperand(ArrayRef(factors).take_back(getShape(operand).size()));
  rule.addResult(factors);
  return rule;
}

ShardingRule SoftmaxOp::getShardingRule() {
  return getNormalizationRule(*this, getAxis(), getAxis());
}

ShardingRule LogSoftmaxOp::getShardingRule() {
  return getNormalizationRule(*this, getAxis(), getAxis());
}

ShardingRule LayerNormOp::getShardingRule() {
  return getNormalizationRule(*this, getAxis(),
                              getInput().getType().getRank() - 1);
}

/// A factor per dimension of `shape`, all of kind `kind`.
static SmallVector<int64_t> addFactors(ShardingRule &rule,
                                       ArrayRef<int64_t> shape,
                                       FactorKind kind) {
  SmallVector<int64_t> factors;
  for (int64_t size : shape)
    factors.push_back(rule.addFactor(size, kind));
  return factors;
}

// Dimensions are grouped where the products of input and result sizes
// agree. Inside a group, splitting the outermost dimension of either side
// into t contiguous blocks splits the other side's outermost one the same
// way (when t divides both), so the two share a factor of their common
// divisor's size; the inner dimensions of a group must stay whole.
ShardingRule ReshapeOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> in = getShape(getInput()), out = getShape(getResult());
  SmallVector<int64_t> inFactors(in.size(), ShardingRule::kNoFactor);
  SmallVector<int64_t> outFactors(out.size(), ShardingRule::kNoFactor);
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    // Size-1 dimensions are in no group.
    if (i < in.size() && in[i] == 1) {
      ++i;
      continue;
    }
    if (o < out.size() && out[o] == 1) {
      ++o;
      continue;
    }
    if (i == in.size() || o == out.size())
      break;
    size_t groupIn = i, groupOut = o;
    int64_t inProduct = in[i++], outProduct = out[o++];
    while (inProduct != outProduct) {
      if (inProduct < outProduct)
        inProduct *= in[i++];
      else
        outProduct *= out[o++];
    }
    int64_t major = rule.addFactor(std::gcd(in[groupIn], out[groupOut]),
                                   FactorKind::Parallel);
    inFactors[groupIn] = major;
    outFactors[groupOut] = major;
    for (size_t d = groupIn + 1; d < i; ++d)
      inFactors[d] = rule.addFactor(in[d], FactorKind::NeedReplication);
    for (size_t d = groupOut + 1; d < o; ++d)
      outFactors[d] = rule.addFactor(out[d], FactorKind::NeedReplication);
  }
  rule.addOperand(inFactors);
  rule.addResult(outFactors);
  return rule;
}

// The pieces of a split (and the inputs of a concat) begin at different
// offsets of the axis, so the axis must stay whole; the other dimensions
// are shared and parallel.
ShardingRule SplitOp::getShardingRule() {
  ShardingRule rule;
  int64_t axis = getAxis();
  ArrayRef<int64_t> shape = getShape(getInput());
  SmallVector<int64_t> factors;
  for (auto [dim, size] : llvm::enumerate(shape))
    factors.push_back(rule.addFactor(
        size, static_cast<int64_t>(dim) == axis ? FactorKind::NeedReplication
                                                : FactorKind::Parallel));
  rule.addOperand(factors);
  SmallVector<int64_t> pieceFactors = factors;
  pieceFactors[axis] = ShardingRule::kNoFactor;
  for (unsigned i = 0; i < getNumResults(); ++i)
    rule.addResult(pieceFactors);
  return rule;
}

ShardingRule ConcatOp::getShardingRule() {
  ShardingRule rule;
  int64_t axis = getAxis();
  SmallVector<int64_t> factors;
  for (auto [dim, size] : llvm::enumerate(getShape(getResult())))
    factors.push_back(rule.addFactor(
        size, static_cast<int64_t>(dim) == axis ? FactorKind::NeedReplication
                                                : FactorKind::Parallel));
  SmallVector<int64_t> inputFactors = factors;
  inputFactors[axis] = ShardingRule::kNoFactor;
  for (unsigned i = 0; i < getInputs().size(); ++i)
    rule.addOperand(inputFactors);
  rule.addResult(factors);
  return rule;
}

// Dimensions the slice takes whole are shared; the others must stay whole
// in the input and are not split in the result.
ShardingRule SliceOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> shape = getShape(getInput());
  SmallVector<int64_t> inFactors, outFactors;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    bool whole = getStart()[dim] == 0 && getLimit()[dim] == size &&
                 getStride()[dim] == 1;
    int64_t factor = rule.addFactor(size, whole ? FactorKind::Parallel
                                                : FactorKind::NeedReplication);
    inFactors.push_back(factor);
    outFactors.push_back(whole ? factor : ShardingRule::kNoFactor);
  }
  rule.addOperand(inFactors);
  rule.addResult(outFactors);
  return rule;
}

/// The factors of an op that indexes `table` along `axis` with `indices`:
/// the table's, the indices', and those of the indexed tensor (the table
/// with `axis` replaced by the indices' dimensions). The dimensions beside
/// `axis` are parallel; `axis` and the indices' get the given kinds.
struct IndexedFactors {
  SmallVector<int64_t> table, indices, indexed;
};
static IndexedFactors addIndexedFactors(ShardingRule &rule,
                                        ArrayRef<int64_t> table, int64_t axis,
                                        ArrayRef<int64_t> indices,
                                        FactorKind axisKind,
                                        FactorKind indexKind) {
  IndexedFactors f;
  for (int64_t dim = 0; dim < axis; ++dim)
    f.table.push_back(rule.addFactor(table[dim], FactorKind::Parallel));
  f.indexed = f.table;
  f.table.push_back(rule.addFactor(table[axis], axisKind));
  f.indices = addFactors(rule, indices, indexKind);
  f.indexed.append(f.indices);
  for (int64_t size : table.drop_front(axis + 1)) {
    int64_t factor = rule.addFactor(size, FactorKind::Parallel);
    f.table.push_back(factor);
    f.indexed.push_back(factor);
  }
  return f;
}

// Splitting the gathered axis gives each device the rows it owns: it looks
// up the indices that fall in them and leaves zeros elsewhere, so the
// result is a partial sum (Megatron-LM's vocabulary-parallel embedding).
ShardingRule GatherOp::getShardingRule() {
  ShardingRule rule;
  IndexedFactors f = addIndexedFactors(
      rule, getShape(getInput()), getAxis(), getShape(getIndices()),
      FactorKind::Reduction, FactorKind::Parallel);
  rule.addOperand(f.table);
  rule.addOperand(f.indices);
  rule.addResult(f.indexed);
  return rule;
}

// The adjoint of gather's: the indices' dimensions are summed over (each
// rank adds its own tokens' updates into a partial result), the indexed
// dimension is whole, the others are parallel.
ShardingRule ScatterAddOp::getShardingRule() {
  ShardingRule rule;
  IndexedFactors f = addIndexedFactors(
      rule, getShape(getResult()), getAxis(), getShape(getIndices()),
      FactorKind::NeedReplication, FactorKind::Reduction);
  rule.addOperand(f.indexed);
  rule.addOperand(f.indices);
  rule.addResult(f.table);
  return rule;
}

// Samples are parallel when the losses stay per sample and reduced away
// otherwise; the class dimension must stay whole. A split mean is finished
// by weighting each shard with its count of samples not ignored.
static ShardingRule getLossRule(Operation *op, LossReduction reduction) {
  ShardingRule rule;
  ArrayRef<int64_t> input = getShape(op->getOperand(0));
  FactorKind sampleKind = reduction == LossReduction::none
                              ? FactorKind::Parallel
                              : FactorKind::Reduction;
  ReductionKind partialKind = reduction == LossReduction::mean
                                  ? ReductionKind::mean
                                  : ReductionKind::sum;
  SmallVector<int64_t> inFactors, sampleFactors;
  for (auto [dim, size] : llvm::enumerate(input)) {
    int64_t factor = rule.addFactor(
        size, dim == 1 ? FactorKind::NeedReplication : sampleKind,
        partialKind);
    inFactors.push_back(factor);
    if (dim != 1)
      sampleFactors.push_back(factor);
  }
  rule.addOperand(inFactors);
  rule.addOperand(sampleFactors);
  rule.addResult(reduction == LossReduction::none ? sampleFactors
                                                  : SmallVector<int64_t>());
  return rule;
}

ShardingRule SoftmaxCrossEntropyOp::getShardingRule() {
  return getLossRule(*this, getReduction());
}

ShardingRule NllLossOp::getShardingRule() {
  return getLossRule(*this, getReduction());
}

/// A convolution from `input`'s channels to the result's: samples and
/// output channels are parallel, input channels are summed; grouped, the
/// channels stay whole (a group's channels are not one block of either
/// side). A window reads neighbouring pixels, so the spatial dimensions stay
/// whole. The filter is OIHW, or IOHW for the transposed convolution, its
/// second dimension per group.
static ShardingRule getConvolutionRule(Operation *op, Value input, Value filter,
                                       bool grouped, bool transposed) {
  ShardingRule rule;
  ArrayRef<int64_t> in = getShape(input);
  ArrayRef<int64_t> kernel = getShape(filter);
  ArrayRef<int64_t> result = getShape(op->getResult(0));
  int64_t n = rule.addFactor(in[0], FactorKind::Parallel);
  int64_t f = rule.addFactor(result[1], grouped ? FactorKind::NeedReplication
                                                : FactorKind::Parallel);
  int64_t c = rule.addFactor(in[1], grouped ? FactorKind::NeedReplication
                                            : FactorKind::Reduction);
  int64_t h = rule.addFactor(in[2], FactorKind::NeedReplication);
  int64_t w = rule.addFactor(in[3], FactorKind::NeedReplication);
  int64_t kh = rule.addFactor(kernel[2], FactorKind::NeedReplication);
  int64_t kw = rule.addFactor(kernel[3], FactorKind::NeedReplication);
  int64_t outer = transposed ? c : f;
  int64_t perGroup =
      grouped ? rule.addFactor(kernel[1], FactorKind::NeedReplication)
              : (transposed ? f : c);
  rule.addOperand({n, c, h, w});
  rule.addOperand({outer, perGroup, kh, kw});
  if (op->getNumOperands() > 2)
    rule.addOperand({f});
  rule.addResult({n, f, ShardingRule::kNoFactor, ShardingRule::kNoFactor});
  return rule;
}

ShardingRule Conv2DOp::getShardingRule() {
  return getConvolutionRule(*this, getInput(), getFilter(), getGroups() != 1,
                            /*transposed=*/false);
}

// The adjoint of conv2d.
ShardingRule ConvTranspose2DOp::getShardingRule() {
  return getConvolutionRule(*this, getInput(), getFilter(), getGroups() != 1,
                            /*transposed=*/true);
}

// A dimension padded nowhere is one parallel loop; a padded one stays whole
// (each rank's block would need its neighbours' padding and positions).
/// Resampling from `from` to `to`: a dimension with scale 1 and one size is
/// one parallel loop; a resampled one reads across its whole extent.
static ShardingRule getResamplingRule(ArrayRef<int64_t> from,
                                      ArrayRef<int64_t> to,
                                      ArrayRef<double> scales) {
  ShardingRule rule;
  SmallVector<int64_t> fromFactors, toFactors;
  for (auto [dim, size] : llvm::enumerate(from)) {
    bool kept = scales[dim] == 1.0 && size == to[dim];
    int64_t factor = rule.addFactor(size, kept ? FactorKind::Parallel
                                               : FactorKind::NeedReplication);
    fromFactors.push_back(factor);
    toFactors.push_back(
        kept ? factor : rule.addFactor(to[dim], FactorKind::NeedReplication));
  }
  rule.addOperand(fromFactors);
  rule.addResult(toFactors);
  return rule;
}

ShardingRule ResizeOp::getShardingRule() {
  return getResamplingRule(getShape(getInput()), getShape(getResult()),
                           getScales());
}

ShardingRule ResizeGradOp::getShardingRule() {
  return getResamplingRule(getShape(getOutGrad()), getShape(getResult()),
                           getScales());
}

ShardingRule PadOp::getShardingRule() {
  ShardingRule rule;
  SmallVector<int64_t> inFactors, outFactors;
  for (auto [dim, size] : llvm::enumerate(getShape(getInput()))) {
    bool padded = getLow()[dim] || getHigh()[dim] || getInterior()[dim];
    int64_t factor = rule.addFactor(size, padded ? FactorKind::NeedReplication
                                                 : FactorKind::Parallel);
    inFactors.push_back(factor);
    outFactors.push_back(padded ? ShardingRule::kNoFactor : factor);
  }
  rule.addOperand(inFactors);
  rule.addResult(outFactors);
  return rule;
}

// A filter's gradient sums over the samples (split, it is a pending sum:
// data parallelism's gradient reduction); its two channel dimensions are
// parallel unless grouped.
ShardingRule Conv2DFilterGradOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> input = getShape(getInput());
  ArrayRef<int64_t> outGrad = getShape(getOutGrad());
  ArrayRef<int64_t> result = getShape(getResult());
  bool grouped = getGroups() != 1;
  FactorKind channels =
      grouped ? FactorKind::NeedReplication : FactorKind::Parallel;
  int64_t n = rule.addFactor(input[0], FactorKind::Reduction);
  int64_t f = rule.addFactor(outGrad[1], channels);
  int64_t c = rule.addFactor(input[1], channels);
  int64_t h = rule.addFactor(input[2], FactorKind::NeedReplication);
  int64_t w = rule.addFactor(input[3], FactorKind::NeedReplication);
  int64_t oh = rule.addFactor(outGrad[2], FactorKind::NeedReplication);
  int64_t ow = rule.addFactor(outGrad[3], FactorKind::NeedReplication);
  rule.addOperand({n, c, h, w});
  rule.addOperand({n, f, oh, ow});
  rule.addResult(
      {f, grouped ? rule.addFactor(result[1], FactorKind::NeedReplication) : c,
       ShardingRule::kNoFactor, ShardingRule::kNoFactor});
  return rule;
}

/// The gradient of a pooling: samples and channels are parallel; the
/// windows' spatial dimensions stay whole. `input` is the pooled input
/// when the op reads it.
static ShardingRule getPoolGradRule(Value input, Value outGrad, Value result) {
  ShardingRule rule;
  ArrayRef<int64_t> in = getShape(result);
  ArrayRef<int64_t> out = getShape(outGrad);
  int64_t n = rule.addFactor(in[0], FactorKind::Parallel);
  int64_t c = rule.addFactor(in[1], FactorKind::Parallel);
  int64_t h = rule.addFactor(in[2], FactorKind::NeedReplication);
  int64_t w = rule.addFactor(in[3], FactorKind::NeedReplication);
  int64_t oh = rule.addFactor(out[2], FactorKind::NeedReplication);
  int64_t ow = rule.addFactor(out[3], FactorKind::NeedReplication);
  if (input)
    rule.addOperand({n, c, h, w});
  rule.addOperand({n, c, oh, ow});
  rule.addResult({n, c, h, w});
  return rule;
}

ShardingRule MaxPool2DGradOp::getShardingRule() {
  return getPoolGradRule(getInput(), getOutGrad(), getResult());
}

ShardingRule AvgPool2DGradOp::getShardingRule() {
  return getPoolGradRule(Value(), getOutGrad(), getResult());
}

/// Samples and channels are parallel; the window's spatial dimensions stay
/// whole.
static ShardingRule getPoolRule(Operation *op) {
  ShardingRule rule;
  ArrayRef<int64_t> input = getShape(op->getOperand(0));
  int64_t n = rule.addFactor(input[0], FactorKind::Parallel);
  int64_t c = rule.addFactor(input[1], FactorKind::Parallel);
  int64_t h = rule.addFactor(input[2], FactorKind::NeedReplication);
  int64_t w = rule.addFactor(input[3], FactorKind::NeedReplication);
  rule.addOperand({n, c, h, w});
  rule.addResult({n, c, ShardingRule::kNoFactor, ShardingRule::kNoFactor});
  return rule;
}

ShardingRule MaxPool2DOp::getShardingRule() { return getPoolRule(*this); }
ShardingRule AvgPool2DOp::getShardingRule() { return getPoolRule(*this); }

// Every dimension is parallel: each output element is its input element
// normalized by its channel's statistics. Training-mode statistics are taken
// over every dimension but the channels, so where those are split the op
// reduces them across the devices itself when it is partitioned
// (synchronized batch norm): the numbers stay the single device's.
ShardingRule BatchNormOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> input = getShape(getInput());
  SmallVector<int64_t> factors;
  for (int64_t size : input)
    factors.push_back(rule.addFactor(size, FactorKind::Parallel));
  rule.addOperand(factors);
  for (unsigned i = 1; i < getOperation()->getNumOperands(); ++i)
    rule.addOperand({factors[1]});
  rule.addResult(factors);
  for (unsigned i = 1; i < getOperation()->getNumResults(); ++i)
    rule.addResult({factors[1]});
  return rule;
}

// Split samples (or pixels) in training: the partition all-reduces the
// channels' sums twice (mean, squared deviations) and the gradient rule's
// reductions over the batch twice more (the output gradient's sum and its
// product with the normalized input, in one call of both; it reads the
// forward's statistics, and the weights' own gradients are reduced with
// every other gradient).
SplitCollectives BatchNormOp::getSplitCollectives(int64_t factor) {
  if (!getTraining() || factor == 1)
    return {};
  return {4, {1}};
}

// The index is a position along the whole axis: that axis stays whole.
ShardingRule ArgMaxOp::getShardingRule() {
  return getReductionShardingRule(*this, {int64_t(getAxis())},
                                  ReductionKind::max,
                                  FactorKind::NeedReplication);
}

ShardingRule ArgMinOp::getShardingRule() {
  return getReductionShardingRule(*this, {int64_t(getAxis())},
                                  ReductionKind::min,
                                  FactorKind::NeedReplication);
}

// Beside the axis, a dimension where the input and the indices agree is one
// parallel loop; elsewhere (and along the axis, read at any position) the
// input stays whole and the indices split freely.
ShardingRule GatherElementsOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> input = getShape(getInput());
  ArrayRef<int64_t> indices = getShape(getIndices());
  SmallVector<int64_t> inFactors, indexFactors;
  for (auto [dim, sizes] : llvm::enumerate(llvm::zip_equal(input, indices))) {
    auto [inSize, indexSize] = sizes;
    if (int64_t(dim) != int64_t(getAxis()) && inSize == indexSize) {
      int64_t factor = rule.addFactor(inSize, FactorKind::Parallel);
      inFactors.push_back(factor);
      indexFactors.push_back(factor);
      continue;
    }
    inFactors.push_back(rule.addFactor(inSize, FactorKind::NeedReplication));
    indexFactors.push_back(rule.addFactor(indexSize, FactorKind::Parallel));
  }
  rule.addOperand(inFactors);
  rule.addOperand(indexFactors);
  rule.addResult(indexFactors);
  return rule;
}
