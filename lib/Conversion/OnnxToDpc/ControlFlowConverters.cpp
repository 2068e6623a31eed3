//===- ControlFlowConverters.cpp - ONNX Loop, Scan and If -----------------===//
//
// A loop whose iterations are known at import time is unrolled: its body is
// imported once per iteration, in line, with that iteration's values bound
// to its inputs. The planner and the backends then see the body's ops with
// static shapes, as they see any other layer, and its gradient is theirs. A
// loop whose trip count or condition is known only at run time is refused.
// An If imports the branch its condition names, or, when the condition is
// known only at run time, both branches and a select of their outputs.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;

namespace {

/// The body graph of `node` (attribute `body`), or null after an error.
const onnx::GraphProto *getBody(NodeContext &node) {
  const onnx::AttributeProto *body = node.getAttr("body");
  if (!body || !body->has_g()) {
    node.emitError() << "has no body graph";
    return nullptr;
  }
  return &body->g();
}

/// Whether `iterations` of `body` stay within kMaxUnrolledNodes.
LogicalResult checkUnrolledSize(NodeContext &node, const onnx::GraphProto &body,
                                int64_t iterations) {
  int64_t nodes = 0;
  forEachNode(body, [&](const onnx::NodeProto &) { ++nodes; });
  if (iterations > 0 && nodes > kMaxUnrolledNodes / iterations)
    return node.emitError()
           << "unrolls to " << iterations << " iterations of " << nodes
           << " nodes, more than the " << kMaxUnrolledNodes << " dpc unrolls";
  return success();
}

GraphValue getGiven(NodeContext &node, unsigned i) {
  GraphValue given;
  if (const Literal *literal = node.getLiteral(i))
    given.literal = *literal;
  else
    given.value = node.getInput(i);
  return given;
}

Value toValue(NodeContext &node, const GraphValue &given) {
  return given.literal
             ? node.getImporter().materialize(*given.literal, node.getLoc())
             : given.value;
}

void setGiven(NodeContext &node, unsigned i, const GraphValue &given) {
  if (given.literal)
    node.setOutput(i, *given.literal);
  else
    node.setOutput(i, given.value);
}

/// The per-iteration values of a scan output stacked along `axis` (of the
/// stacked rank, possibly negative), in iteration order.
LogicalResult setStacked(NodeContext &node, unsigned output,
                         ArrayRef<Value> values, int64_t axis) {
  for (Value value : values)
    if (value.getType() != values.front().getType())
      return node.emitError()
             << "its scan output " << output << " changes type between "
             << "iterations (" << values.front().getType() << ", "
             << value.getType() << ")";
  std::optional<int64_t> dim =
      node.normalizeAxis(axis, getShapeOf(values.front()).size() + 1);
  if (!dim)
    return failure();
  node.setOutput(output, node.createStack(values, *dim));
  return success();
}

/// The scan inputs of a Scan, each sliced along its axis in its direction.
struct ScanSequences {
  SmallVector<Value> values;
  std::vector<int64_t> axes, directions;
  int64_t length = 0;
};

/// Runs `body` over `sequences`, from the states `carried` (replaced by the
/// final ones), appending each iteration's scan outputs to `perIteration`.
LogicalResult runScan(NodeContext &node, const onnx::GraphProto &body,
                      const ScanSequences &sequences,
                      SmallVector<GraphValue> &carried,
                      std::vector<SmallVector<Value>> &perIteration) {
  size_t states = carried.size();
  for (int64_t t = 0; t < sequences.length; ++t) {
    SmallVector<GraphValue> bound(carried);
    for (auto [j, sequence] : llvm::enumerate(sequences.values)) {
      int64_t index = sequences.directions[j] ? sequences.length - 1 - t : t;
      bound.push_back(
          {node.createIndexSlice(sequence, sequences.axes[j], index), {}});
    }
    SmallVector<GraphValue> given;
    if (failed(node.getImporter().importSubgraph(body, bound, given,
                                                 node.getLoc())))
      return failure();
    carried.assign(given.begin(), given.begin() + states);
    for (size_t k = 0; k < perIteration.size(); ++k)
      perIteration[k].push_back(toValue(node, given[states + k]));
  }
  return success();
}

/// Opset 8's Scan: every state, scan input and output has a leading batch
/// axis, which the body does not see (it runs per batch entry); scan
/// inputs are scanned along axis 1, in `directions`. Optional input 0,
/// sequence lengths, must give every entry the whole sequence.
LogicalResult convertBatchedScan(NodeContext &node,
                                 const onnx::GraphProto &body, int64_t states,
                                 int64_t scanInputs, int64_t scanOutputs) {
  std::vector<int64_t> directions =
      node.getInts("directions", std::vector<int64_t>(scanInputs, 0));
  if (static_cast<int64_t>(directions.size()) != scanInputs)
    return node.emitError() << "its directions do not name one per scan "
                            << "input";
  SmallVector<Value> given;
  for (int64_t i = 1; i <= states + scanInputs; ++i) {
    Value value = node.getInput(i);
    if (!value)
      return failure();
    bool scanned = i > states;
    if (getShapeOf(value).size() < (scanned ? 2u : 1u))
      return node.emitError()
             << "its input " << i << " of type " << value.getType()
             << (scanned ? " lacks its batch and sequence axes"
                         : " lacks its batch axis");
    given.push_back(value);
  }
  int64_t batch = getShapeOf(given.front()).front();
  int64_t length =
      getShapeOf(given[states]).size() > 1 ? getShapeOf(given[states])[1] : 0;
  for (auto [i, value] : llvm::enumerate(given)) {
    ArrayRef<int64_t> shape = getShapeOf(value);
    if (shape[0] != batch || (int64_t(i) >= states && shape[1] != length))
      return node.emitError()
             << "its inputs disagree on the batch (" << batch
             << ") or the sequence length (" << length << "): input " << i + 1
             << " is " << value.getType();
  }
  if (node.hasInput(0)) {
    const Literal *lengths = node.requireLiteral(0, "sequence_lens");
    if (!lengths)
      return failure();
    if (lengths->getNumElements() != batch ||
        llvm::any_of(lengths->ints,
                     [&](int64_t given) { return given != length; }))
      return node.emitError()
             << "its sequence_lens do not give each of the " << batch
             << " entries the whole sequence of " << length
             << "; only full-length sequences are supported";
  }
  if (length == 0 && scanOutputs > 0)
    return node.emitError() << "scans no iteration, so its scan outputs "
                            << "have no shape";
  if (failed(checkUnrolledSize(node, body, batch * length)))
    return failure();

  // Per batch entry: its states and sequences, without the batch axis.
  std::vector<SmallVector<Value>> finals(states), outputs(scanOutputs);
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<GraphValue> carried;
    for (int64_t i = 0; i < states; ++i)
      carried.push_back({node.createIndexSlice(given[i], 0, b), {}});
    ScanSequences sequences;
    sequences.length = length;
    sequences.directions = directions;
    for (int64_t j = 0; j < scanInputs; ++j) {
      sequences.values.push_back(
          node.createIndexSlice(given[states + j], 0, b));
      sequences.axes.push_back(0);
    }
    std::vector<SmallVector<Value>> perIteration(scanOutputs);
    if (failed(runScan(node, body, sequences, carried, perIteration)))
      return failure();
    for (int64_t i = 0; i < states; ++i)
      finals[i].push_back(toValue(node, carried[i]));
    for (int64_t k = 0; k < scanOutputs; ++k) {
      for (Value value : perIteration[k])
        if (value.getType() != perIteration[k].front().getType())
          return node.emitError() << "its scan output " << states + k
                                  << " changes type between iterations";
      outputs[k].push_back(node.createStack(perIteration[k], 0));
    }
  }
  for (int64_t i = 0; i < states; ++i)
    if (failed(setStacked(node, i, finals[i], 0)))
      return failure();
  for (int64_t k = 0; k < scanOutputs; ++k)
    if (failed(setStacked(node, states + k, outputs[k], 0)))
      return failure();
  return success();
}

/// Scan: N states, then M scan inputs sliced along their axes; the body
/// gives N new states and K per-iteration outputs.
LogicalResult convertScan(NodeContext &node) {
  const onnx::GraphProto *body = getBody(node);
  if (!body)
    return failure();
  // Opset 8 leads with the optional sequence lengths.
  int64_t first = node.getOpset() < 9 ? 1 : 0;
  int64_t scanInputs = node.getInt("num_scan_inputs", -1);
  int64_t inputs = node.getNumInputs() - first;
  if (scanInputs < 1 || scanInputs > inputs)
    return node.emitError() << "num_scan_inputs is " << scanInputs
                            << ", not in [1, " << inputs << "]";
  int64_t states = inputs - scanInputs;
  int64_t scanOutputs = node.getNumOutputs() - states;
  if (scanOutputs < 0 || body->output_size() != states + scanOutputs)
    return node.emitError()
           << "its body gives " << body->output_size() << " outputs, the "
           << "node " << node.getNumOutputs() << " for " << states << " states";
  if (first)
    return convertBatchedScan(node, *body, states, scanInputs, scanOutputs);
  std::vector<int64_t> inputAxes =
      node.getInts("scan_input_axes", std::vector<int64_t>(scanInputs, 0));
  std::vector<int64_t> inputDirections = node.getInts(
      "scan_input_directions", std::vector<int64_t>(scanInputs, 0));
  std::vector<int64_t> outputAxes =
      node.getInts("scan_output_axes", std::vector<int64_t>(scanOutputs, 0));
  std::vector<int64_t> outputDirections = node.getInts(
      "scan_output_directions", std::vector<int64_t>(scanOutputs, 0));
  if (static_cast<int64_t>(inputAxes.size()) != scanInputs ||
      static_cast<int64_t>(inputDirections.size()) != scanInputs ||
      static_cast<int64_t>(outputAxes.size()) != scanOutputs ||
      static_cast<int64_t>(outputDirections.size()) != scanOutputs)
    return node.emitError() << "its scan axes and directions do not name "
                            << "one per scan input and output";

  // Every scan input is sliced along its axis: they agree on the length.
  ScanSequences sequences;
  sequences.directions = inputDirections;
  sequences.length = -1;
  for (int64_t j = 0; j < scanInputs; ++j) {
    Value sequence = node.getInput(states + j);
    if (!sequence)
      return failure();
    std::optional<int64_t> axis =
        node.normalizeAxis(inputAxes[j], getShapeOf(sequence).size());
    if (!axis)
      return failure();
    sequences.axes.push_back(*axis);
    int64_t size = getShapeOf(sequence)[*axis];
    if (sequences.length >= 0 && size != sequences.length)
      return node.emitError() << "its scan inputs have " << sequences.length
                              << " and " << size << " iterations";
    sequences.length = size;
    sequences.values.push_back(sequence);
  }
  if (sequences.length == 0 && scanOutputs > 0)
    return node.emitError() << "scans no iteration, so its scan outputs "
                            << "have no shape";
  if (failed(checkUnrolledSize(node, *body, sequences.length)))
    return failure();

  SmallVector<GraphValue> carried;
  for (int64_t i = 0; i < states; ++i) {
    carried.push_back(getGiven(node, i));
    if (!carried.back().literal && !carried.back().value)
      return failure();
  }
  std::vector<SmallVector<Value>> perIteration(scanOutputs);
  if (failed(runScan(node, *body, sequences, carried, perIteration)))
    return failure();
  for (int64_t i = 0; i < states; ++i)
    setGiven(node, i, carried[i]);
  for (int64_t k = 0; k < scanOutputs; ++k) {
    // A reverse scan output is stacked last iteration first.
    if (outputDirections[k])
      std::reverse(perIteration[k].begin(), perIteration[k].end());
    if (failed(setStacked(node, states + k, perIteration[k], outputAxes[k])))
      return failure();
  }
  return success();
}

/// Loop: a trip count and an initial condition known at import time, N
/// loop-carried values; the body takes the iteration number, the
/// condition and the carried values and gives the next condition (known
/// at import time each iteration), the carried values and K scan outputs.
LogicalResult convertLoop(NodeContext &node) {
  const onnx::GraphProto *body = getBody(node);
  if (!body)
    return failure();
  if (!node.hasInput(0))
    return node.emitError() << "has no trip count; dpc unrolls loops whose "
                            << "iterations are known at import time";
  const Literal *trip = node.requireLiteral(0, "trip count");
  if (!trip)
    return failure();
  if (trip->getNumElements() != 1)
    return node.emitError() << "its trip count has " << trip->getNumElements()
                            << " elements, not 1";
  int64_t iterations = std::max<int64_t>(trip->getInt(0), 0);
  bool condition = true;
  if (node.hasInput(1)) {
    const Literal *initial = node.requireLiteral(1, "condition");
    if (!initial)
      return failure();
    condition = initial->getNumElements() == 1 && initial->getInt(0) != 0;
  }
  int64_t carriedCount = node.getNumInputs() - 2;
  int64_t scanOutputs = node.getNumOutputs() - carriedCount;
  if (carriedCount < 0 || scanOutputs < 0 ||
      body->output_size() != 1 + carriedCount + scanOutputs)
    return node.emitError()
           << "its body gives " << body->output_size()
           << " outputs; it needs the condition, the " << carriedCount
           << " loop-carried values and the scan outputs";
  if (failed(checkUnrolledSize(node, *body, condition ? iterations : 0)))
    return failure();

  SmallVector<GraphValue> carried;
  for (int64_t i = 0; i < carriedCount; ++i) {
    carried.push_back(getGiven(node, 2 + i));
    if (!carried.back().literal && !carried.back().value)
      return failure();
  }
  std::vector<SmallVector<Value>> perIteration(scanOutputs);
  for (int64_t i = 0; i < iterations && condition; ++i) {
    SmallVector<GraphValue> bound;
    bound.push_back({{}, Literal::ofInts({i}, {}, ::dpc::DType::I64)});
    bound.push_back({{}, Literal::ofInts({1}, {}, ::dpc::DType::Bool)});
    bound.append(carried);
    SmallVector<GraphValue> given;
    if (failed(node.getImporter().importSubgraph(*body, bound, given,
                                                 node.getLoc())))
      return failure();
    if (!given[0].literal || given[0].literal->getNumElements() != 1)
      return node.emitError()
             << "its body's condition '" << body->output(0).name()
             << "' is computed at run time; dpc unrolls loops whose "
                "iterations are known at import time";
    condition = given[0].literal->getInt(0) != 0;
    carried.assign(given.begin() + 1, given.begin() + 1 + carriedCount);
    for (int64_t k = 0; k < scanOutputs; ++k)
      perIteration[k].push_back(toValue(node, given[1 + carriedCount + k]));
  }
  if (scanOutputs > 0 && perIteration.front().empty())
    return node.emitError() << "runs no iteration, so its scan outputs have "
                            << "no shape";
  for (int64_t i = 0; i < carriedCount; ++i)
    setGiven(node, i, carried[i]);
  for (int64_t k = 0; k < scanOutputs; ++k)
    if (failed(setStacked(node, carriedCount + k, perIteration[k], 0)))
      return failure();
  return success();
}

/// If: the branch its condition names when that is known at import time;
/// otherwise both branches, each output chosen by the condition (a select:
/// the branches must then give outputs of one type, and both are computed).
LogicalResult convertIf(NodeContext &node) {
  const onnx::AttributeProto *thenAttr = node.getAttr("then_branch");
  const onnx::AttributeProto *elseAttr = node.getAttr("else_branch");
  if (!thenAttr || !thenAttr->has_g() || !elseAttr || !elseAttr->has_g())
    return node.emitError() << "needs its then_branch and else_branch graphs";
  const onnx::GraphProto &thenBranch = thenAttr->g();
  const onnx::GraphProto &elseBranch = elseAttr->g();
  int outputs = node.getNumOutputs();
  if (thenBranch.output_size() != outputs ||
      elseBranch.output_size() != outputs)
    return node.emitError()
           << "its branches give " << thenBranch.output_size() << " and "
           << elseBranch.output_size() << " outputs, the node has " << outputs;
  if (!node.hasInput(0))
    return node.emitError() << "has no condition";
  GraphImporter &importer = node.getImporter();
  if (const Literal *condition = node.getLiteral(0)) {
    if (condition->getNumElements() != 1)
      return node.emitError() << "its condition has "
                              << condition->getNumElements()
                              << " elements, not 1";
    const onnx::GraphProto &taken =
        condition->getInt(0) ? thenBranch : elseBranch;
    SmallVector<GraphValue> given;
    if (failed(importer.importSubgraph(taken, {}, given, node.getLoc())))
      return failure();
    for (int i = 0; i < outputs; ++i)
      setGiven(node, i, given[i]);
    return success();
  }
  Value condition = node.getInput(0);
  if (!condition)
    return failure();
  if (product(getShapeOf(condition)) != 1)
    return node.emitError() << "its condition " << condition.getType()
                            << " is not a single value";
  condition = node.createReshape(condition, {});
  SmallVector<GraphValue> onTrue, onFalse;
  if (failed(importer.importSubgraph(thenBranch, {}, onTrue, node.getLoc())) ||
      failed(importer.importSubgraph(elseBranch, {}, onFalse, node.getLoc())))
    return failure();
  for (int i = 0; i < outputs; ++i) {
    Value a = toValue(node, onTrue[i]), b = toValue(node, onFalse[i]);
    if (a.getType() != b.getType())
      return node.emitError()
             << "its branches give output " << i << " as " << a.getType()
             << " and " << b.getType()
             << "; with a condition known only at run time dpc computes "
                "both and selects, which needs one type";
    Value chosen = node.createSelect(condition, a, b);
    if (!chosen)
      return failure();
    node.setOutput(i, chosen);
  }
  return success();
}

} // namespace

void mlir::dpc::onnx_import::addControlFlowConverters(
    OpConverterMap &converters) {
  converters["If"] = convertIf;
  converters["Loop"] = convertLoop;
  converters["Scan"] = convertScan;
}
