//===- BuildTrainStep.cpp - The training step function --------------------===//
//
// Wraps @forward_backward into @train_step: micro-batch accumulation,
// global-norm clipping and the optimizer update. Arguments and results
// are classified by their dpc.* attributes only.
//
//===----------------------------------------------------------------------===//

#include "LossScaling.h"
#include "Optimizers.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::dpc {
#define GEN_PASS_DEF_BUILDTRAINSTEP
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// Where each kind of value sits in @forward_backward's signature.
struct Signature {
  SmallVector<unsigned> params, state, inputs;
  /// The step's random seed and the micro-batch index (for dropout).
  std::optional<unsigned> seed, microBatch;
  /// The loss scale the backward pass starts from (fp16).
  std::optional<unsigned> lossScale;
  SmallVector<unsigned> stateResults, gradResults;
  unsigned lossResult = 0;
};

FailureOr<Signature> readSignature(func::FuncOp function) {
  Signature signature;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    switch (mlir::dpc::getArgumentRole(function, i)) {
    case ArgumentRole::Parameter:
      signature.params.push_back(i);
      break;
    case ArgumentRole::State:
      signature.state.push_back(i);
      break;
    case ArgumentRole::Input:
      signature.inputs.push_back(i);
      break;
    case ArgumentRole::Hyper: {
      StringRef name = mlir::dpc::getArgumentName(function, i);
      if (name == "seed")
        signature.seed = i;
      else if (name == "micro_batch")
        signature.microBatch = i;
      else if (name == "loss_scale")
        signature.lossScale = i;
      else
        return function.emitError("argument #")
               << i << " is the unknown hyperparameter '" << name
               << "'; the step provides 'seed', 'micro_batch' and "
               << "'loss_scale'";
      break;
    }
    case ArgumentRole::Other:
      return function.emitError("argument #")
             << i << " is neither a parameter, state nor an input";
    }
  }
  bool hasLoss = false;
  for (unsigned i = 0; i < function.getNumResults(); ++i) {
    if (function.getResultAttr(i, DpcDialect::kLossAttrName)) {
      signature.lossResult = i;
      hasLoss = true;
    } else if (function.getResultAttr(i, DpcDialect::kGradAttrName)) {
      signature.gradResults.push_back(i);
    } else if (function.getResultAttr(i, DpcDialect::kStateAttrName)) {
      signature.stateResults.push_back(i);
    }
  }
  if (!hasLoss || signature.gradResults.size() != signature.params.size())
    return function.emitError("@forward_backward must return its loss "
                              "(dpc.loss) and one gradient per parameter; "
                              "run -dpc-differentiate first");
  return signature;
}

Value scalarF32(OpBuilder &b, Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

/// Micro-batch `k` of a step input that holds its micro-batches along a
/// leading dimension: `input[k]`, a view of consecutive rows. The leading
/// dimension lets the plan split each micro-batch's samples over the data
/// axis (dimension 1), so every rank slices its own micro-batches locally.
Value takeMicroBatch(OpBuilder &b, Location loc, Value input, int64_t k) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
      stride(type.getRank(), 1), shape(type.getShape());
  start[0] = k;
  limit[0] = k + 1;
  shape[0] = 1;
  Value slice = SliceOp::create(b, loc, type.clone(shape), input,
                                b.getDenseI64ArrayAttr(start),
                                b.getDenseI64ArrayAttr(limit),
                                b.getDenseI64ArrayAttr(stride));
  return ReshapeOp::create(b, loc, type.clone(type.getShape().drop_front()),
                           slice);
}

struct BuildTrainStepPass
    : public dpc::impl::BuildTrainStepBase<BuildTrainStepPass> {
  using BuildTrainStepBase::BuildTrainStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forwardBackward =
        module.lookupSymbol<func::FuncOp>("forward_backward");
    if (!forwardBackward) {
      module.emitError("no @forward_backward; run -dpc-differentiate first");
      return signalPassFailure();
    }
    if (failed(checkOptions(forwardBackward.getLoc())) ||
        failed(build(module, forwardBackward)))
      signalPassFailure();
  }

  LogicalResult build(ModuleOp module, func::FuncOp forwardBackward);
  /// Checks every option against its range, naming the option.
  LogicalResult checkOptions(Location loc);
};

/// The most micro-batches a step unrolls: each is a call in @train_step.
constexpr int64_t kMaxMicroBatches = 4096;

/// `value` as a person writes it: 0.9, 1e-08, inf, nan.
static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

LogicalResult BuildTrainStepPass::checkOptions(Location loc) {
  struct Range {
    StringRef name;
    double value, low, high;
    bool lowOpen, highOpen;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Range ranges[] = {
      {"lr", defaultLr, 0.0, inf, false, true},
      {"momentum", momentum, 0.0, 1.0, false, true},
      {"beta1", beta1, 0.0, 1.0, false, true},
      {"beta2", beta2, 0.0, 1.0, false, true},
      {"epsilon", epsilon, 0.0, inf, true, true},
      {"weight-decay", weightDecay, 0.0, inf, false, true},
      {"max-grad-norm", maxGradNorm, 0.0, inf, false, true}};
  for (const Range &range : ranges) {
    bool aboveLow =
        range.lowOpen ? range.value > range.low : range.value >= range.low;
    bool belowHigh =
        range.highOpen ? range.value < range.high : range.value <= range.high;
    // NaN fails both comparisons.
    if (!aboveLow || !belowHigh)
      return emitError(loc, "--")
             << range.name << "=" << formatNumber(range.value) << " is outside "
             << (range.lowOpen ? "(" : "[") << formatNumber(range.low) << ", "
             << formatNumber(range.high) << (range.highOpen ? ")" : "]");
  }
  int64_t count = microBatches, interval = lossScaleGrowthInterval;
  if (count < 1 || count > kMaxMicroBatches)
    return emitError(loc, "--micro-batches=")
           << count << " is outside [1, " << kMaxMicroBatches << "]";
  if (interval < 1)
    return emitError(loc, "--loss-scale-growth-interval=")
           << interval << " must be at least 1";
  return success();
}

LogicalResult BuildTrainStepPass::build(ModuleOp module,
                                        func::FuncOp forwardBackward) {
  FailureOr<Signature> signature = readSignature(forwardBackward);
  if (failed(signature))
    return failure();
  Location loc = forwardBackward.getLoc();
  OptimizerConfig config{optimizer, momentum, nesterov,   beta1,
                         beta2,     epsilon,  weightDecay};
  FailureOr<Optimizer> rule = Optimizer::get(config, loc);
  if (failed(rule))
    return failure();

  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  auto function =
      func::FuncOp::create(b, loc, "train_step", b.getFunctionType({}, {}));
  Block *body = function.addEntryBlock();
  b.setInsertionPointToStart(body);
  SmallVector<Attribute> argAttrs;
  auto addArgument = [&](Type type, StringRef role, StringRef name) {
    argAttrs.push_back(
        b.getDictionaryAttr(b.getNamedAttr(role, b.getStringAttr(name))));
    return body->addArgument(type, loc);
  };
  auto nameOf = [&](unsigned index) {
    return mlir::dpc::getArgumentName(forwardBackward, index);
  };
  ArrayRef<Type> argTypes = forwardBackward.getArgumentTypes();

  // train_step(params, opt_state, state, batch..., lr, step).
  SmallVector<Value> params, state, inputs;
  SmallVector<SmallVector<Value>> slots;
  for (unsigned i : signature->params)
    params.push_back(
        addArgument(argTypes[i], DpcDialect::kParamAttrName, nameOf(i)));
  for (unsigned i : signature->params) {
    slots.emplace_back();
    for (const std::string &slot : rule->getSlots())
      slots.back().push_back(addArgument(argTypes[i],
                                         DpcDialect::kOptStateAttrName,
                                         (nameOf(i) + ":" + slot).str()));
  }
  // Dynamic loss scaling keeps its scale and good-step count as optimizer
  // state.
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  Value lossScale, growthTracker;
  if (signature->lossScale) {
    lossScale = addArgument(scalarType, DpcDialect::kOptStateAttrName,
                            "amp:loss_scale");
    growthTracker = addArgument(scalarType, DpcDialect::kOptStateAttrName,
                                "amp:growth_tracker");
  }
  for (unsigned i : signature->state)
    state.push_back(
        addArgument(argTypes[i], DpcDialect::kStateAttrName, nameOf(i)));
  // @forward_backward sees one micro-batch; a step of several takes them
  // along a new leading dimension ([micro-batches, batch, ...]).
  for (unsigned i : signature->inputs) {
    auto type = cast<RankedTensorType>(argTypes[i]);
    if (type.getRank() == 0)
      return emitError(loc, "input '")
             << nameOf(i) << "' is a scalar; batch inputs need a batch "
             << "dimension";
    SmallVector<int64_t> shape(type.getShape());
    if (microBatches > 1)
      shape.insert(shape.begin(), microBatches);
    inputs.push_back(
        addArgument(type.clone(shape), DpcDialect::kInputAttrName, nameOf(i)));
  }
  Value lr = addArgument(scalarType, DpcDialect::kHyperAttrName, "lr");
  Value step = addArgument(scalarType, DpcDialect::kHyperAttrName, "step");
  auto indexType = RankedTensorType::get({}, b.getI64Type());
  Value seed;
  if (signature->seed)
    seed = addArgument(indexType, DpcDialect::kHyperAttrName, "seed");

  // Forward and backward over each micro-batch; state threads through.
  SmallVector<Value> gradients(params.size());
  Value loss;
  for (int64_t k = 0; k < microBatches; ++k) {
    SmallVector<Value> operands(forwardBackward.getNumArguments());
    for (auto [i, index] : llvm::enumerate(signature->params))
      operands[index] = params[i];
    for (auto [i, index] : llvm::enumerate(signature->state))
      operands[index] = state[i];
    for (auto [i, index] : llvm::enumerate(signature->inputs))
      operands[index] = microBatches == 1
                            ? inputs[i]
                            : takeMicroBatch(b, loc, inputs[i], k);
    if (signature->seed)
      operands[*signature->seed] = seed;
    if (signature->lossScale)
      operands[*signature->lossScale] = lossScale;
    if (signature->microBatch)
      operands[*signature->microBatch] = ConstantOp::create(
          b, loc, indexType,
          DenseElementsAttr::get(indexType, b.getI64IntegerAttr(k)));
    auto call = func::CallOp::create(b, loc, forwardBackward, operands);
    Value microLoss = call.getResult(signature->lossResult);
    loss = loss ? AddOp::create(b, loc, microLoss.getType(), loss, microLoss)
                      .getResult()
                : microLoss;
    for (auto [i, index] : llvm::enumerate(signature->gradResults)) {
      Value g = call.getResult(index);
      gradients[i] =
          gradients[i]
              ? AddOp::create(b, loc, g.getType(), gradients[i], g).getResult()
              : g;
    }
    // The forward returns the new value of each state argument by name.
    for (unsigned index : signature->stateResults) {
      auto name = forwardBackward.getResultAttrOfType<StringAttr>(
          index, DpcDialect::kStateAttrName);
      for (auto [i, argIndex] : llvm::enumerate(signature->state))
        if (nameOf(argIndex) == name.getValue())
          state[i] = call.getResult(index);
    }
  }
  auto average = [&](Value value) -> Value {
    if (microBatches == 1)
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    Value count = ConstantOp::create(
        b, loc, RankedTensorType::get({}, type.getElementType()),
        DenseElementsAttr::get(
            RankedTensorType::get({}, type.getElementType()),
            FloatAttr::get(type.getElementType(), microBatches)));
    return DivOp::create(b, loc, type, value, count).getResult();
  };
  loss = average(loss);
  for (Value &g : gradients)
    g = average(g);
  if (lossScale) {
    // The backward pass started from the scale (the loss itself is not
    // scaled): divide it out of the gradients.
    auto unscale = [&](Value value) -> Value {
      auto type = cast<RankedTensorType>(value.getType());
      Value scale = CastOp::create(
          b, loc, scalarType.clone(type.getElementType()), lossScale);
      return DivOp::create(b, loc, type, value, scale);
    };
    for (Value &g : gradients)
      g = unscale(g);
  }

  // Global gradient norm, and clipping as torch.nn.utils.clip_grad_norm_.
  Value sumOfSquares = scalarF32(b, loc, 0.0);
  for (Value g : gradients) {
    auto type = cast<RankedTensorType>(g.getType());
    Value square = MulOp::create(b, loc, type, g, g);
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    Value sum =
        ReduceSumOp::create(b, loc, type.clone(ArrayRef<int64_t>{}), square,
                            b.getDenseI64ArrayAttr(all), UnitAttr());
    sum = CastOp::create(b, loc, scalarType, sum);
    sumOfSquares = AddOp::create(b, loc, scalarType, sumOfSquares, sum);
  }
  Value gradNorm = SqrtOp::create(b, loc, sumOfSquares);
  std::optional<LossScaleUpdate> scaleUpdate;
  if (lossScale)
    scaleUpdate = updateLossScale(b, loc, sumOfSquares, lossScale,
                                  growthTracker, lossScaleGrowthInterval);
  if (maxGradNorm > 0.0) {
    Value coefficient = DivOp::create(
        b, loc, scalarType, scalarF32(b, loc, maxGradNorm),
        AddOp::create(b, loc, scalarType, gradNorm, scalarF32(b, loc, 1e-6)));
    coefficient =
        MinOp::create(b, loc, scalarType, coefficient, scalarF32(b, loc, 1.0));
    for (Value &g : gradients) {
      auto type = cast<RankedTensorType>(g.getType());
      Value scale = CastOp::create(
          b, loc, scalarType.clone(type.getElementType()), coefficient);
      g = MulOp::create(b, loc, type, g, scale);
    }
  }

  // The update, parameter by parameter.
  SmallVector<Value> results;
  SmallVector<Attribute> resultAttrs;
  SmallVector<Value> newSlots;
  auto addResult = [&](Value value, StringRef role, StringRef name) {
    results.push_back(value);
    resultAttrs.push_back(
        b.getDictionaryAttr(b.getNamedAttr(role, b.getStringAttr(name))));
  };
  for (auto [i, param] : llvm::enumerate(params)) {
    auto type = cast<RankedTensorType>(param.getType());
    Value paramLr =
        CastOp::create(b, loc, scalarType.clone(type.getElementType()), lr);
    Value paramStep =
        CastOp::create(b, loc, scalarType.clone(type.getElementType()), step);
    SmallVector<Value> slotValues(slots[i]);
    Value updated = rule->update(b, loc, param, gradients[i], paramLr,
                                 paramStep, slotValues);
    if (scaleUpdate) {
      // A step with an overflowed gradient leaves parameters and slots.
      updated = keepIfFinite(b, loc, scaleUpdate->finite, updated, param);
      for (auto [value, old] : llvm::zip(slotValues, slots[i]))
        value = keepIfFinite(b, loc, scaleUpdate->finite, value, old);
    }
    addResult(updated, DpcDialect::kParamAttrName,
              nameOf(signature->params[i]));
    llvm::append_range(newSlots, slotValues);
  }
  unsigned slotIndex = 0;
  for (unsigned i : signature->params)
    for (const std::string &slot : rule->getSlots())
      addResult(newSlots[slotIndex++], DpcDialect::kOptStateAttrName,
                (nameOf(i) + ":" + slot).str());
  if (scaleUpdate) {
    addResult(scaleUpdate->scale, DpcDialect::kOptStateAttrName,
              "amp:loss_scale");
    addResult(scaleUpdate->growthTracker, DpcDialect::kOptStateAttrName,
              "amp:growth_tracker");
  }
  for (auto [i, index] : llvm::enumerate(signature->state))
    addResult(state[i], DpcDialect::kStateAttrName, nameOf(index));
  addResult(loss, DpcDialect::kOutputAttrName, "loss");
  addResult(gradNorm, DpcDialect::kOutputAttrName, "grad_norm");
  if (scaleUpdate)
    addResult(scaleUpdate->skipped, DpcDialect::kOutputAttrName, "skipped");

  func::ReturnOp::create(b, loc, results);
  function.setFunctionType(b.getFunctionType(body->getArgumentTypes(),
                                             ValueRange(results).getTypes()));
  function.setAllArgAttrs(argAttrs);
  function.setAllResultAttrs(resultAttrs);
  // Around the calls of the forward and backward passes: the split into
  // micro-batches, gradient accumulation, clipping and the update.
  auto optimizerPhase = PhaseAttr::get(module.getContext(), Phase::optimizer);
  for (Operation &op : body->without_terminator())
    if (!isa<func::CallOp>(op))
      op.setAttr(DpcDialect::kPhaseAttrName, optimizerPhase);
  function->setAttr(DpcDialect::kDefaultLrAttrName,
                    b.getF64FloatAttr(defaultLr));
  function->setAttr(DpcDialect::kMicroBatchesAttrName,
                    b.getI64IntegerAttr(microBatches));
  return success();
}

} // namespace
