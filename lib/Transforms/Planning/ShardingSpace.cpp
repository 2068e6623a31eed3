//===- ShardingSpace.cpp - Strategies, their costs and the problem --------===//

#include "dpc/Transforms/Planning/ShardingSpace.h"
#include "dpc/Analysis/CostModel/ComputeCost.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Interfaces/ShardableOpInterface.h"

#include "mlir/IR/Matchers.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::dpc;

/// Whether changing `from` into `to` gathers a split dimension.
static bool isGather(const TensorSharding &from, const TensorSharding &to) {
  for (StageAxis axis : {kDataAxis, kTensorAxis})
    if (!(from.partial & axis) && from.getSplitDim(axis) >= 0 &&
        to.getSplitDim(axis) < 0)
      return true;
  return false;
}

static bool isConstant(Value value) {
  return value.getDefiningOp() && matchPattern(value, m_Constant());
}

TensorSharding mlir::dpc::getFactorSharding(const ShardingRule &rule,
                                            ArrayRef<int64_t> factors,
                                            int64_t dataFactor,
                                            int64_t tensorFactor,
                                            bool isResult) {
  TensorSharding sharding = TensorSharding::replicated(factors.size());
  for (auto [dim, factor] : llvm::enumerate(factors)) {
    if (factor == ShardingRule::kNoFactor)
      continue;
    if (factor == dataFactor)
      sharding.dims[dim] |= kDataAxis;
    if (factor == tensorFactor)
      sharding.dims[dim] |= kTensorAxis;
  }
  if (isResult)
    for (auto [factor, axis] : {std::pair(dataFactor, kDataAxis),
                                std::pair(tensorFactor, kTensorAxis)})
      if (factor >= 0 && rule.getFactorKind(factor) == FactorKind::Reduction &&
          !llvm::is_contained(factors, factor))
        sharding.setPartial(axis, rule.getFactorReduction(factor));
  return sharding;
}

ShardingSpace::ShardingSpace(const TrainingGraph &graph,
                             const LayerSegmentation &segmentation,
                             const StageMesh &mesh, int64_t microBatchSize,
                             double backwardFactor, double exposedTensorComm,
                             const ShardingConstraints *constraints)
    : graph(graph), segmentation(segmentation), mesh(mesh),
      microBatchSize(microBatchSize), backwardFactor(backwardFactor),
      exposedTensorComm(exposedTensorComm), constraints(constraints) {
  batchScale = double(microBatchSize * mesh.getDataParallel()) /
               double(graph.getBatchSize());

  // How many ops (parameters) each representative stands for.
  llvm::MapVector<Operation *, double> opWeights;
  llvm::MapVector<Value, double> paramWeights;
  for (Operation *op : graph.getForwardOps()) {
    if (matchPattern(op, m_Constant()))
      continue;
    opWeights[segmentation.getRepresentative(op)] += 1;
    for (Value operand : op->getOperands())
      if (graph.isParameter(operand) && !paramWeights.contains(operand))
        paramWeights[operand] = 0;
  }
  // (Keys are collected first: indexing the map while walking it would
  // invalidate the walk if a representative were missing.)
  SmallVector<Value> params(llvm::make_first_range(paramWeights));
  for (Value param : params)
    paramWeights[segmentation.getRepresentative(param)] += 1;
  for (auto &[param, weight] : paramWeights)
    if (weight > 0)
      addParameterNode(param, weight);
  for (auto &[op, weight] : opWeights)
    addOpNode(op, weight);

  // Edges, merged over repeats: (from, result, to, operand) -> count.
  struct Edge {
    double count = 0.0;
    Value value;
    bool changedAgain = false;
    /// Forward ops that read the value: their gradients are summed before
    /// one layout change, of which each edge bears its share.
    double readers = 1.0;
  };
  std::map<std::tuple<unsigned, unsigned, unsigned, unsigned>, Edge> edges;
  for (Operation *op : graph.getForwardOps()) {
    if (matchPattern(op, m_Constant()))
      continue;
    unsigned to = *getNode(segmentation.getRepresentative(op));
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      if (isConstant(operand))
        continue;
      unsigned from, result = 0;
      if (Operation *def = operand.getDefiningOp()) {
        from = *getNode(segmentation.getRepresentative(def));
        result = cast<OpResult>(operand).getResultNumber();
      } else if (graph.isParameter(operand)) {
        from = *getNode(segmentation.getRepresentative(operand));
      } else {
        std::optional<unsigned> node = getNode(operand);
        from = node ? *node : addFixedNode(operand);
      }
      Edge &edge = edges[{from, result, to, unsigned(i)}];
      edge.count += 1;
      edge.value = operand;
      edge.changedAgain = isChangedAgainInBackward(op, i);
      if (edge.changedAgain)
        changedAgain.insert({op, unsigned(i)});
      edge.readers = std::max<double>(
          1.0, llvm::count_if(operand.getUsers(), [&](Operation *user) {
            return graph.isForward(user);
          }));
    }
  }
  // An edge costs its layout change and its share of its gradient's: the
  // program sums the gradients of a value's readers before it changes
  // their layout, once where they are made alike, which the problem's
  // pairwise edges approximate by an equal share each.
  for (auto &[key, edge] : edges) {
    auto [from, result, to, operand] = key;
    Value value = edge.value;
    SmallVector<double> cost;
    for (const Strategy &a : strategies[from])
      for (const Strategy &b : strategies[to]) {
        bool again = edge.changedAgain &&
                     isGather(a.results[result], b.operands[operand]);
        double time =
            (again ? 2.0 : 1.0) * getReshardingTime(value, a.results[result],
                                                    b.operands[operand],
                                                    /*tensorAxisOnly=*/true);
        if (auto gradient = getGradientResharding(
                value, a.results[result],
                graph.isParameter(value) || a.oncePerStep, b, operand))
          time += getReshardingTime(value, gradient->first, gradient->second,
                                    /*tensorAxisOnly=*/true) /
                  edge.readers;
        cost.push_back(time);
      }
    problem.addEdge(from, to, std::move(cost), edge.count);
  }
}

double ShardingSpace::getValueBytes(Value value) const {
  double bytes = getSizeInBytes(value.getType());
  return graph.getBatchDim(value) >= 0 ? bytes * batchScale : bytes;
}

double ShardingSpace::getReshardingTime(Value value, const TensorSharding &from,
                                        const TensorSharding &to,
                                        bool tensorAxisOnly) const {
  double bytes = getValueBytes(value);
  double tensorTime =
      mlir::dpc::getReshardingTime(bytes, from, to, mesh, kTensorAxis);
  // The part overlapped with the contraction hides as far as the cores
  // allow.
  double time = exposedTensorComm * tensorTime +
                mesh.getCluster().efficiency.getContendedTime(
                    (1.0 - exposedTensorComm) * tensorTime);
  if (!tensorAxisOnly)
    time += mlir::dpc::getReshardingTime(bytes, from, to, mesh, kDataAxis);
  return time;
}

CommunicationVolume
ShardingSpace::getReshardingSentBytes(Value value, const TensorSharding &from,
                                      const TensorSharding &to) const {
  double bytes = getValueBytes(value);
  CommunicationVolume sent;
  sent.tensorAxis =
      mlir::dpc::getReshardingSentBytes(bytes, from, to, mesh, kTensorAxis);
  sent.dataAxis =
      mlir::dpc::getReshardingSentBytes(bytes, from, to, mesh, kDataAxis);
  return sent;
}

bool ShardingSpace::isChangedAgainInBackward(Operation *consumer,
                                             unsigned operand) const {
  // Stored as it was made, or a parameter or its view (a cast weight): a
  // parameter's layout change is made once per pass, as ZeRO-3's gathers
  // are, so that no whole copy lives from the forward pass to the backward.
  auto shardable = dyn_cast<ShardableOpInterface>(consumer);
  Value value = consumer->getOperand(operand);
  if (!shardable ||
      !(graph.isStoredForBackward(value) || graph.isRemadeForBackward(value)))
    return false;
  ShardingRule rule = shardable.getShardingRule();
  bool contracts = false;
  for (int64_t f = 0; f < rule.getNumFactors(); ++f)
    contracts |= rule.getFactorKind(f) == FactorKind::Reduction;
  bool othersLearn = false;
  for (auto [i, other] : llvm::enumerate(consumer->getOperands()))
    othersLearn |= i != operand && graph.hasGradient(other);
  return contracts && othersLearn;
}

std::optional<std::pair<TensorSharding, TensorSharding>>
ShardingSpace::getGradientResharding(Value value, const TensorSharding &from,
                                     bool weight, const Strategy &consumer,
                                     unsigned operand) const {
  if (!graph.hasGradient(value))
    return std::nullopt;
  // The consumer's backward makes the gradient in the operand's layout,
  // summed over the factors it splits that the operand lacks: a partial
  // sum over the tensor axis. (A weight's is reduced once per step, and
  // one over the data axis is the gradient reduction: both priced apart.)
  TensorSharding made = consumer.operands[operand];
  if (!weight && consumer.tensorFactor >= 0 &&
      made.getSplitDim(kTensorAxis) < 0)
    made.setPartial(kTensorAxis, ReductionKind::sum);
  // The producer's backward takes it as it made the value, whole where
  // that was a partial result (each part's gradient is the whole's).
  TensorSharding taken = from;
  taken.clearPartial(kTensorAxis);
  taken.clearPartial(kDataAxis);
  return std::pair(std::move(made), std::move(taken));
}

static bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// `'dpc.matmul' at loc("model.onnx":3:1)`, or the argument's position.
static std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "' at " << op->getLoc();
  return text;
}

static std::string describe(Value argument) {
  auto arg = cast<BlockArgument>(argument);
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  std::string text = "argument " + std::to_string(arg.getArgNumber());
  if (auto name =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dpc.param"))
    text += " ('" + name.str() + "')";
  return text;
}

void ShardingSpace::restrictTo(std::vector<Strategy> &options,
                               ArrayRef<TensorSharding> fixed,
                               const Twine &what, Location where) {
  std::vector<Strategy> kept;
  for (const Strategy &s : options)
    if (ArrayRef<TensorSharding>(s.results) == fixed)
      kept.push_back(s);
  if (!kept.empty()) {
    options = std::move(kept);
    return;
  }
  if (!conflict.empty())
    return;
  auto join = [](ArrayRef<TensorSharding> shardings) {
    std::string text;
    for (const TensorSharding &sharding : shardings)
      text += (text.empty() ? "" : ", ") + sharding.str();
    return text;
  };
  conflictLocation = where;
  conflict = "the sharding " + join(fixed) + " fixed on " + what.str() +
             " is none of its strategies at dp=" +
             std::to_string(mesh.getDataParallel()) +
             " tp=" + std::to_string(mesh.getTensorParallel()) + " (";
  for (auto [i, s] : llvm::enumerate(options))
    conflict += (i ? "; " : "") + join(s.results);
  conflict += ")";
}

std::optional<unsigned> ShardingSpace::getNode(Operation *op) const {
  if (auto it = opNodes.find(op); it != opNodes.end())
    return it->second;
  return std::nullopt;
}

std::optional<unsigned> ShardingSpace::getNode(Value argument) const {
  if (auto it = argNodes.find(argument); it != argNodes.end())
    return it->second;
  return std::nullopt;
}

unsigned ShardingSpace::addFixedNode(Value value) {
  auto type = cast<ShapedType>(value.getType());
  Strategy strategy;
  TensorSharding sharding = TensorSharding::replicated(type.getRank());
  if (int64_t dim = graph.getBatchDim(value); dim >= 0)
    sharding.dims[dim] = kDataAxis;
  strategy.results.push_back(sharding);
  std::vector<Strategy> options = {strategy};
  if (const TensorSharding *fixed =
          constraints ? constraints->lookup(value) : nullptr)
    restrictTo(options, *fixed, describe(value),
               graph.getFunction().getLoc());
  strategies.push_back(std::move(options));
  unsigned node = problem.addNode({0.0});
  argNodes[value] = node;
  return node;
}

unsigned ShardingSpace::addParameterNode(Value param, double weight) {
  auto type = cast<ShapedType>(param.getType());
  int64_t t = mesh.getTensorParallel();
  std::vector<Strategy> options;
  Strategy replicated;
  replicated.results.push_back(TensorSharding::replicated(type.getRank()));
  replicated.parameterElements = type.getNumElements();
  options.push_back(replicated);
  if (t > 1)
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      if (size % t != 0)
        continue;
      Strategy split = replicated;
      split.tensorFactor = dim;
      split.results.front().dims[dim] = kTensorAxis;
      split.parameterElements = double(type.getNumElements()) / t;
      options.push_back(split);
    }
  if (const TensorSharding *fixed =
          constraints ? constraints->lookup(param) : nullptr)
    restrictTo(options, *fixed, describe(param),
               graph.getFunction().getLoc());
  SmallVector<double> time;
  SmallVector<StrategyMemory> memory;
  for (const Strategy &s : options) {
    time.push_back(0.0);
    memory.push_back(
        {s.parameterElements * graph.getModelStateBytesPerParameter(), 0.0});
  }
  strategies.push_back(std::move(options));
  unsigned node = problem.addNode(std::move(time), std::move(memory), weight);
  argNodes[param] = node;
  return node;
}

unsigned ShardingSpace::addOpNode(Operation *op, double weight) {
  const Cluster &cluster = mesh.getCluster();
  int64_t d = mesh.getDataParallel(), t = mesh.getTensorParallel();
  bool touchesBatch = graph.touchesBatch(op);
  double scale = touchesBatch ? batchScale : 1.0;

  std::vector<Strategy> options;
  auto shardable = dyn_cast<ShardableOpInterface>(op);
  if (!shardable) {
    // No rule: every device runs the whole op on replicated tensors.
    Strategy whole;
    for (Value operand : op->getOperands())
      whole.operands.push_back(TensorSharding::replicated(
          cast<ShapedType>(operand.getType()).getRank()));
    for (Value result : op->getResults())
      whole.results.push_back(TensorSharding::replicated(
          cast<ShapedType>(result.getType()).getRank()));
    options.push_back(whole);
  } else {
    ShardingRule rule = shardable.getShardingRule();
    int64_t batchFactor = graph.getBatchFactor(op);
    int64_t dataFactor =
        batchFactor >= 0 &&
                rule.getFactorKind(batchFactor) != FactorKind::NeedReplication
            ? batchFactor
            : -1;
    SmallVector<int64_t> tensorFactors = {-1};
    if (t > 1)
      for (int64_t f = 0; f < rule.getNumFactors(); ++f) {
        if (rule.getFactorKind(f) == FactorKind::NeedReplication)
          continue;
        // Size of the factor on one data-parallel replica.
        double size = rule.getFactorSize(f);
        if (f == batchFactor)
          size *= scale;
        if (f == dataFactor)
          size /= d;
        int64_t whole = std::llround(size);
        if (whole > 1 && std::abs(size - whole) < 1e-9 && whole % t == 0)
          tensorFactors.push_back(f);
      }
    auto shardingOf = [&](ArrayRef<int64_t> factors, int64_t tensorFactor,
                          bool isResult) {
      return getFactorSharding(rule, factors, dataFactor, tensorFactor,
                               isResult);
    };
    for (int64_t tensorFactor : tensorFactors) {
      Strategy s;
      s.dataFactor = dataFactor;
      s.tensorFactor = tensorFactor;
      for (unsigned i = 0; i < rule.getNumOperands(); ++i)
        s.operands.push_back(
            shardingOf(rule.getOperandFactors(i), tensorFactor, false));
      for (unsigned j = 0; j < rule.getNumResults(); ++j)
        s.results.push_back(
            shardingOf(rule.getResultFactors(j), tensorFactor, true));
      options.push_back(std::move(s));
    }
  }
  if (const SmallVector<TensorSharding, 1> *fixed =
          constraints ? constraints->lookup(op) : nullptr)
    restrictTo(options, *fixed, describe(op), op->getLoc());

  // Whether the op's backward holds gradients of its own
  // (Strategy::temporaryBytes).
  bool holdsGradients =
      touchesBatch && !(shardable && shardable.getShardingRule().isPointwise());
  SmallVector<double> time;
  SmallVector<StrategyMemory> memory;
  for (Strategy &s : options) {
    double shards = (s.dataFactor >= 0 ? d : 1) * (s.tensorFactor >= 0 ? t : 1);
    // A fused attention's backward runs its scores' contraction again.
    double passes =
        backwardFactor + (graph.isRerunInBackward(op) ? 1.0 : 0.0);
    s.time = getOpComputeEstimate(op, graph.getFusedBytes(op), cluster,
                                  shards / scale)
                 .time *
             passes;
    bool remade = false;
    for (auto [j, result] : llvm::enumerate(op->getResults())) {
      remade |= graph.isAttentionCore(result);
      if (!graph.isStoredForBackward(result))
        continue;
      double bytes = getValueBytes(result) / s.results[j].getShards(mesh);
      s.activationBytes += bytes;
      if (graph.isAttentionCore(result))
        s.attentionCoreBytes += bytes;
    }
    // Selective recomputation runs the core's ops forward once more.
    if (remade)
      s.attentionRerunTime = s.time / passes;
    s.oncePerStep = !touchesBatch;
    if (holdsGradients) {
      for (auto [j, result] : llvm::enumerate(op->getResults()))
        if (isFloatTensor(result))
          s.temporaryBytes +=
              getValueBytes(result) / s.results[j].getShards(mesh);
      for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
        Operation *def = operand.getDefiningOp();
        if (isFloatTensor(operand) && def && !isConstant(operand) &&
            graph.touchesBatch(def))
          s.temporaryBytes +=
              getValueBytes(operand) / s.operands[i].getShards(mesh);
      }
    }
    if (shardable)
      addOwnCollectives(shardable, s, scale);
    // The ILP prices the tensor axis (as its edges); the data axis splits
    // the batch alike in every strategy.
    time.push_back(s.time + s.ownTensorTime);
    memory.push_back({0.0, s.activationBytes});
  }
  strategies.push_back(std::move(options));
  unsigned node = problem.addNode(std::move(time), std::move(memory), weight);
  opNodes[op] = node;
  return node;
}

void ShardingSpace::addOwnCollectives(ShardableOpInterface op, Strategy &s,
                                      double scale) const {
  ShardingRule rule = op.getShardingRule();
  int64_t batchFactor = graph.getBatchFactor(op);
  auto elementBytes = double(getSizeInBytes(op->getOperand(0).getType())) /
                      double(getNumElements(op->getOperand(0).getType()));
  for (auto [axis, factor] : {std::pair{kDataAxis, s.dataFactor},
                              std::pair{kTensorAxis, s.tensorFactor}}) {
    if (factor < 0 || mesh.getAxisSize(axis) <= 1)
      continue;
    SplitCollectives collectives = op.getSplitCollectives(factor);
    if (collectives.allReduces == 0)
      continue;
    // Each all-reduced tensor on one device: its factors' sizes, less
    // what the strategy splits.
    double elements = 1.0;
    for (int64_t f : collectives.factors) {
      double size = rule.getFactorSize(f) * (f == batchFactor ? scale : 1.0);
      if (f == s.dataFactor)
        size /= mesh.getAxisSize(kDataAxis);
      if (f == s.tensorFactor)
        size /= mesh.getAxisSize(kTensorAxis);
      elements *= size;
    }
    double bytes = elements * elementBytes;
    double calls = double(collectives.allReduces);
    (axis == kDataAxis ? s.ownDataTime : s.ownTensorTime) +=
        calls * getBestCollective(CollectiveKind::AllReduce, bytes,
                                  mesh.getGroup(axis), mesh.getCluster())
                    .time;
    double sent = calls * getSentBytes(CollectiveKind::AllReduce, bytes,
                                       mesh.getAxisSize(axis));
    (axis == kDataAxis ? s.ownSent.dataAxis : s.ownSent.tensorAxis) += sent;
  }
}

const TensorSharding *
ShardingSpace::getProducedSharding(Value value, ArrayRef<unsigned> choice,
                                   std::optional<unsigned> &node) const {
  if (Operation *def = value.getDefiningOp()) {
    node = getNode(segmentation.getRepresentative(def));
    if (!node)
      return nullptr;
    return &strategies[*node][choice[*node]]
                .results[cast<OpResult>(value).getResultNumber()];
  }
  node = getNode(graph.isParameter(value) ? segmentation.getRepresentative(value)
                                          : value);
  if (!node)
    return nullptr;
  return &strategies[*node][choice[*node]].results.front();
}

SmallVector<ShardingSpace::SegmentCost>
ShardingSpace::evaluate(ArrayRef<unsigned> choice) const {
  ArrayRef<LayerSegmentation::Segment> segments = segmentation.getSegments();
  SmallVector<SegmentCost> costs(segments.size());
  llvm::DenseSet<Value> seenParams, partialWeights;
  llvm::DenseMap<Value, SmallVector<TensorSharding, 1>> gradientsMade;
  auto addOp = [&](Operation *op, SegmentCost &cost) {
    unsigned node = *getNode(segmentation.getRepresentative(op));
    const Strategy &s = strategies[node][choice[node]];
    (s.oncePerStep ? cost.perStepTime : cost.computeTime) += s.time;
    cost.communicationTime += s.ownDataTime + s.ownTensorTime;
    cost.sent += s.ownSent;
    cost.activationBytes += s.activationBytes;
    cost.attentionCoreBytes += s.attentionCoreBytes;
    cost.attentionRerunTime += s.attentionRerunTime;
    double temporary = s.temporaryBytes, temporarySharded = s.temporaryBytes;
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      if (isConstant(operand))
        continue;
      std::optional<unsigned> from;
      const TensorSharding *produced =
          getProducedSharding(operand, choice, from);
      if (!produced)
        continue;
      // The parameters the operand is (itself, or what it is a view of),
      // each with the layout it is kept in.
      SmallVector<std::pair<Value, const TensorSharding *>, 2> sources;
      for (Value param : graph.getParameterSources(operand)) {
        std::optional<unsigned> node;
        if (const TensorSharding *kept =
                getProducedSharding(param, choice, node))
          sources.push_back({param, kept});
      }
      bool weight = graph.isParameter(operand) ||
                    (operand.getDefiningOp() &&
                     strategies[*from][choice[*from]].oncePerStep);
      // The forward's layout change, and again in the backward pass where
      // the consumer reads the stored operand once more.
      bool again = changedAgain.contains({op, unsigned(i)}) &&
                   isGather(*produced, s.operands[i]);
      double time = getReshardingTime(operand, *produced, s.operands[i], false);
      CommunicationVolume sent =
          getReshardingSentBytes(operand, *produced, s.operands[i]);
      cost.communicationTime += again ? 2 * time : time;
      cost.sent += sent;
      if (again)
        cost.sent += sent;
      // The gradients of a value's consumers are summed where they are
      // made alike, and changed to the producer's layout once.
      if (auto gradient =
              getGradientResharding(operand, *produced, weight, s, i)) {
        SmallVector<TensorSharding, 1> &made = gradientsMade[operand];
        if (!llvm::is_contained(made, gradient->first)) {
          made.push_back(gradient->first);
          cost.communicationTime += getReshardingTime(operand, gradient->first,
                                                      gradient->second, false);
          cost.sent += getReshardingSentBytes(operand, gradient->first,
                                              gradient->second);
        }
      }
      // A weight read in another layout than its own gets a gradient in
      // that layout before it is reduced into its own; under ZeRO-2/3 every
      // weight's is made whole before it is reduce-scattered.
      if (weight && s.temporaryBytes > 0 && isFloatTensor(operand)) {
        double bytes = getValueBytes(operand) / s.operands[i].getShards(mesh);
        temporarySharded += bytes;
        if (*produced != s.operands[i])
          temporary += bytes;
      }
      if (weight && s.tensorFactor >= 0 &&
          s.operands[i].getSplitDim(kTensorAxis) < 0 &&
          partialWeights.insert(operand).second) {
        double elements =
            double(cast<ShapedType>(operand.getType()).getNumElements());
        // Kept split over the tensor axis (itself, or the parameter it is
        // a view of) and gathered for this op: a shard's worth per device,
        // reduce-scattered from the whole.
        bool gathered = llvm::any_of(sources, [](auto &source) {
          return source.second->getSplitDim(kTensorAxis) >= 0;
        });
        if (gathered) {
          elements /= mesh.getAxisSize(kTensorAxis);
          cost.tensorGatheredGradientElements += elements;
        } else {
          elements /= produced->getShards(mesh);
        }
        cost.tensorPartialGradientElements += elements;
      }
      for (auto [param, kept] : sources)
        if (llvm::none_of(cost.parameterReads,
                          [&](auto &read) { return read.first == param; }))
          cost.parameterReads.push_back(
              {param,
               double(cast<ShapedType>(param.getType()).getNumElements()) /
                   kept->getShards(mesh)});
      if (graph.isParameter(operand) && seenParams.insert(operand).second) {
        cost.parameterElements +=
            strategies[*from][choice[*from]].parameterElements;
        if (graph.isReadByBackward(operand))
          cost.backwardParameterElements +=
              strategies[*from][choice[*from]].parameterElements;
        cost.parameters +=
            cast<ShapedType>(operand.getType()).getNumElements();
      }
    }
    cost.temporaryBytes = std::max(cost.temporaryBytes, temporary);
    cost.temporaryBytesSharded =
        std::max(cost.temporaryBytesSharded, temporarySharded);
  };
  // Units after the second of a repeat cost what the second costs (the
  // first differs only in where its input comes from).
  SmallVector<int64_t> sameAs(segments.size(), -1);
  for (const LayerSegmentation::Region &region : segmentation.getRegions())
    for (unsigned unit = 2; unit < region.repeats; ++unit)
      for (unsigned k = 0; k < region.period; ++k)
        sameAs[region.first + unit * region.period + k] =
            region.first + region.period + k;
  for (auto [i, segment] : llvm::enumerate(segments)) {
    if (sameAs[i] >= 0) {
      costs[i] = costs[sameAs[i]];
      continue;
    }
    for (Operation *op : segment.ops)
      addOp(op, costs[i]);
    if (segment.output) {
      std::optional<unsigned> node;
      if (const TensorSharding *sharding =
              getProducedSharding(segment.output, choice, node))
        costs[i].outputBytes =
            getValueBytes(segment.output) / sharding->getShards(mesh);
    }
  }
  if (!costs.empty())
    for (Operation *op : segmentation.getGlobalOps())
      addOp(op, costs.front());
  return costs;
}
