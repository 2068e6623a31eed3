//===- TrainingGraph.cpp - Forward ops, liveness and the batch ------------===//

#include "dpc/Transforms/Planning/TrainingGraph.h"
#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Interfaces/ShardableOpInterface.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::dpc;

static bool hasArgAttr(Value value, StringRef name) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return false;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func && func.getArgAttr(arg.getArgNumber(), name);
}

bool TrainingGraph::isParameter(Value value) const {
  return hasArgAttr(value, DpcDialect::kParamAttrName);
}

bool TrainingGraph::isInput(Value value) const {
  return hasArgAttr(value, DpcDialect::kInputAttrName);
}

/// Bytes of one element of a tensor type.
static double getElementBytes(Type type) {
  auto tensor = cast<ShapedType>(type);
  return getSizeInBytes(type) / std::max<int64_t>(tensor.getNumElements(), 1);
}

FailureOr<TrainingGraph> TrainingGraph::get(ModuleOp module,
                                            std::string &error,
                                            bool fusedAttention) {
  TrainingGraph graph;
  graph.func = module.lookupSymbol<func::FuncOp>("forward_backward");
  if (!graph.func) {
    error = "the planner splits the training step, and this module has no "
            "@forward_backward: build it with --train";
    return failure();
  }
  func::FuncOp func = graph.func;
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());

  // The forward pass is what autodiff marked so.
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands()))
    if (func.getResultAttr(i, DpcDialect::kGradAttrName))
      graph.gradientBytes = getElementBytes(value.getType());
  SmallVector<Operation *> unmarkedConstants;
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto phase = op.getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
    if (!phase && op.hasTrait<mlir::OpTrait::ConstantLike>()) {
      // Folding makes constants of its own, unmarked.
      unmarkedConstants.push_back(&op);
      continue;
    }
    if (!phase) {
      error = "'" + op.getName().getStringRef().str() +
              "' in @forward_backward has no dpc.phase: build the step "
              "with --train, which marks the forward and backward ops";
      return failure();
    }
    if (phase.getValue() == Phase::forward)
      graph.forwardSet.insert(&op);
  }
  // A constant belongs to the forward pass when the forward pass reads it.
  for (Operation *constant : unmarkedConstants)
    if (llvm::any_of(constant->getUsers(), [&](Operation *user) {
          return graph.forwardSet.contains(user);
        }))
      graph.forwardSet.insert(constant);
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (graph.forwardSet.contains(&op))
      graph.forwardOps.push_back(&op);
    else
      graph.backwardOps.push_back(&op);
  }
  for (Operation *op : graph.backwardOps)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (graph.forwardSet.contains(def))
          graph.stored.insert(operand);

  // Gradients flow to the float values made of parameters.
  auto isFloat = [](Value value) {
    auto type = dyn_cast<ShapedType>(value.getType());
    return type && isa<FloatType>(type.getElementType());
  };
  for (BlockArgument arg : func.getArguments())
    if (graph.isParameter(arg) && isFloat(arg))
      graph.differentiable.insert(arg);
  for (Operation *op : graph.forwardOps)
    if (llvm::any_of(op->getOperands(), [&](Value operand) {
          return graph.differentiable.contains(operand);
        }))
      for (Value result : op->getResults())
        if (isFloat(result))
          graph.differentiable.insert(result);

  // Forward ops on parameters alone (a weight's transpose, its cast), with
  // the parameters each is made from; the parameters the backward pass
  // reads, themselves or through such ops.
  llvm::DenseMap<Operation *, SmallVector<Value, 2>> viewSources;
  for (Operation *op : graph.forwardOps) {
    if (op->getNumOperands() == 0 || op->getNumRegions() != 0 ||
        !isMemoryEffectFree(op))
      continue;
    SmallVector<Value, 2> sources;
    bool view = llvm::all_of(op->getOperands(), [&](Value operand) {
      if (graph.isParameter(operand)) {
        sources.push_back(operand);
        return true;
      }
      auto it = viewSources.find(operand.getDefiningOp());
      if (it == viewSources.end())
        return false;
      sources.append(it->second);
      return true;
    });
    if (view)
      viewSources[op] = std::move(sources);
  }
  for (Operation *op : graph.backwardOps)
    for (Value operand : op->getOperands()) {
      if (graph.isParameter(operand))
        graph.readByBackward.insert(operand);
      else if (auto it = viewSources.find(operand.getDefiningOp());
               it != viewSources.end())
        graph.readByBackward.insert(it->second.begin(), it->second.end());
    }
  graph.parameterViews = std::move(viewSources);

  // Stored is what the backward pass reads: -dpc-recompute-pointwise has
  // already made the backward pass rebuild what it cheaply can.
  graph.fusedTraffic = std::make_shared<FusedTraffic>(
      func.getBody().front(),
      [&](Operation *op) { return graph.forwardSet.contains(op); },
      [&](Value value) { return graph.stored.contains(value); },
      fusedAttention);
  // What a fused attention kernel recomputes (the scores) is not stored.
  for (Value value : llvm::to_vector(graph.stored))
    if (graph.fusedTraffic->isRecomputed(value))
      graph.stored.erase(value);

  if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
    if (auto count = step->getAttrOfType<IntegerAttr>(
            DpcDialect::kMicroBatchesAttrName))
      graph.stepMicroBatches = std::max<int64_t>(count.getInt(), 1);
  bool haveBatch = false;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!graph.isInput(arg) || !type || type.getRank() == 0)
      continue;
    if (!haveBatch)
      graph.batchSize = type.getDimSize(0);
    haveBatch = true;
    if (type.getDimSize(0) == graph.batchSize)
      graph.batchDims[arg] = 0;
  }
  if (!haveBatch) {
    error = "@forward_backward has no batched input (an argument with "
            "dpc.input of rank 1 or more) to split over data parallelism";
    return failure();
  }
  // The batch follows the factor that indexes it through each rule.
  for (Operation *op : graph.forwardOps) {
    auto shardable = dyn_cast<ShardableOpInterface>(op);
    if (!shardable)
      continue;
    ShardingRule rule = shardable.getShardingRule();
    int64_t factor = -1;
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      int64_t dim = graph.getBatchDim(operand);
      if (dim >= 0 && rule.getOperandFactors(i)[dim] != ShardingRule::kNoFactor) {
        factor = rule.getOperandFactors(i)[dim];
        break;
      }
    }
    if (factor < 0)
      continue;
    graph.batchFactors[op] = factor;
    for (auto [j, result] : llvm::enumerate(op->getResults())) {
      ArrayRef<int64_t> factors = rule.getResultFactors(j);
      auto it = llvm::find(factors, factor);
      if (it != factors.end())
        graph.batchDims[result] = it - factors.begin();
    }
  }

  // Values made once per step from parameters and constants (a weight's
  // transpose or cast) are not per-sample activations: the CPU backend
  // folds a weight's transpose into its GEMMs, and they do not grow with
  // the micro-batch.
  for (Value value : llvm::to_vector(graph.stored))
    if (!graph.touchesBatch(value.getDefiningOp()))
      graph.stored.erase(value);

  // Model state per parameter element, from the step's own arguments.
  double paramElements = 0, paramBytes = 0, optBytes = 0, wireBytes = 0,
         copyBytes = 0, copiedBytes = 0;
  for (BlockArgument arg : func.getArguments())
    if (graph.isParameter(arg)) {
      double elements = cast<ShapedType>(arg.getType()).getNumElements();
      paramElements += elements;
      paramBytes += getSizeInBytes(arg.getType());
      // The precision the forward computes with: its compute copy's.
      double wire = getElementBytes(arg.getType());
      if (Operation *copy = graph.getComputeCopy(arg)) {
        wire = getElementBytes(copy->getResult(0).getType());
        copyBytes += elements * wire;
        copiedBytes += getSizeInBytes(arg.getType());
      }
      wireBytes += elements * wire;
    }
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
    for (BlockArgument arg : step.getArguments())
      if (step.getArgAttr(arg.getArgNumber(), DpcDialect::kOptStateAttrName))
        optBytes += getSizeInBytes(arg.getType());
  if (paramElements > 0) {
    graph.parameterBytes = paramBytes / paramElements;
    graph.optimizerBytes = optBytes / paramElements;
    graph.gradientWireBytes = wireBytes / paramElements;
    graph.computeCopyBytes = copyBytes / paramElements;
    graph.copiedMasterBytes = copiedBytes / paramElements;
  }
  graph.stateBytes = graph.parameterBytes + graph.computeCopyBytes +
                     graph.gradientBytes + graph.optimizerBytes;
  return graph;
}

Operation *TrainingGraph::getComputeCopy(Value param) const {
  if (!isParameter(param))
    return nullptr;
  Operation *copy = nullptr;
  for (Operation *user : param.getUsers()) {
    if (!forwardSet.contains(user))
      continue;
    if (copy)
      return nullptr;
    copy = user;
  }
  if (!copy || copy->getNumResults() != 1 || copy->getNumOperands() != 1 ||
      !isMemoryEffectFree(copy))
    return nullptr;
  auto from = cast<ShapedType>(param.getType());
  auto to = dyn_cast<ShapedType>(copy->getResult(0).getType());
  return to && to.getShape() == from.getShape() &&
                 getElementBytes(to) < getElementBytes(from)
             ? copy
             : nullptr;
}

SmallVector<Value, 2> TrainingGraph::getParameterSources(Value value) const {
  if (isParameter(value))
    return {value};
  auto it = parameterViews.find(value.getDefiningOp());
  return it == parameterViews.end() ? SmallVector<Value, 2>() : it->second;
}

bool TrainingGraph::isRemadeForBackward(Value value) const {
  return llvm::any_of(getParameterSources(value),
                      [&](Value param) { return isReadByBackward(param); });
}
