//===- RecurrentConverters.cpp - ONNX LSTM and GRU ------------------------===//
//
// One dpc.lstm / dpc.gru per direction (the reverse one of a bidirectional
// layer with `reverse`), on the [T, B, I] layout; the directions' outputs
// are stacked as ONNX lays them out. Omitted biases and initial states are
// zeros; sequence lengths that all equal T are dropped.
//
//===----------------------------------------------------------------------===//

#include "OpConverters.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;

namespace {

/// What an LSTM and a GRU node share.
struct RecurrentNode {
  int64_t gates;
  /// Number of states (h; and c for an LSTM).
  unsigned states;
  /// ONNX's default activations, one direction's worth.
  SmallVector<StringRef> activations;
};

/// A zero tensor of `shape` and `elementType`.
Value zeros(NodeContext &node, ArrayRef<int64_t> shape, Type elementType) {
  return node.createBroadcast(node.createScalar(0, elementType), shape);
}

/// Checks what dpc does not implement; returns the number of directions.
std::optional<int64_t> checkAttributes(NodeContext &node,
                                       const RecurrentNode &kind) {
  std::string direction = node.getString("direction", "forward");
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && directions != 2) {
    node.emitError() << "unknown direction '" << direction << "'";
    return std::nullopt;
  }
  std::vector<std::string> activations;
  if (const onnx::AttributeProto *attr = node.getAttr("activations"))
    for (const std::string &name : attr->strings())
      activations.push_back(name);
  for (auto [i, name] : llvm::enumerate(activations))
    if (StringRef(name).compare_insensitive(
            kind.activations[i % kind.activations.size()]) != 0) {
      node.emitError() << "activation '" << name << "' is not supported "
                       << "(only the default ones)";
      return std::nullopt;
    }
  if (node.hasAttr("clip")) {
    node.emitError() << "cell clipping ('clip') is not supported";
    return std::nullopt;
  }
  if (node.getInt("input_forget", 0) != 0) {
    node.emitError() << "coupled input and forget gates ('input_forget') "
                     << "are not supported";
    return std::nullopt;
  }
  int64_t layout = node.getInt("layout", 0);
  if (layout != 0 && layout != 1) {
    node.emitError() << "layout must be 0 or 1, not " << layout;
    return std::nullopt;
  }
  return directions;
}

LogicalResult convertRecurrent(NodeContext &node, const RecurrentNode &kind) {
  std::optional<int64_t> directions = checkAttributes(node, kind);
  if (!directions)
    return failure();
  // Peepholes (LSTM input 7) must be absent or zero.
  if (kind.states == 2 && node.hasInput(7)) {
    const Literal *peepholes = node.getLiteral(7);
    bool zero = peepholes && llvm::all_of(peepholes->floats,
                                          [](double p) { return p == 0; });
    if (!zero)
      return node.emitError() << "peephole connections (input 'P') are not "
                              << "supported";
  }
  bool batchFirst = node.getInt("layout", 0) == 1;
  Value x = node.getInput(0);
  Value w = x ? node.getInput(1) : Value();
  Value r = w ? node.getInput(2) : Value();
  if (!r)
    return failure();
  if (getShapeOf(x).size() != 3 || getShapeOf(r).size() != 3)
    return node.emitError() << "X and R must have rank 3, got " << x.getType()
                            << " and " << r.getType();
  if (!isa<FloatType>(getElementTypeOf(x)))
    return node.emitError() << "X must be a float tensor, got " << x.getType();
  if (batchFirst)
    x = node.createTranspose(x, {1, 0, 2});
  ArrayRef<int64_t> xShape = getShapeOf(x), rShape = getShapeOf(r);
  Type element = getElementTypeOf(x);
  int64_t steps = xShape[0], batch = xShape[1], hidden = rShape.back();
  int64_t gateRows = kind.gates * hidden;
  if (node.hasAttr("hidden_size") && node.getInt("hidden_size", 0) != hidden)
    return node.emitError() << "hidden_size " << node.getInt("hidden_size", 0)
                            << " disagrees with R of shape " << r.getType();
  if (getShapeOf(w) != ArrayRef<int64_t>{*directions, gateRows, xShape[2]} ||
      rShape != ArrayRef<int64_t>{*directions, gateRows, hidden})
    return node.emitError() << "W " << w.getType() << " and R " << r.getType()
                            << " do not fit " << *directions << " direction(s)"
                            << " of " << kind.gates << " gates";
  if (steps < 1)
    return node.emitError() << "the sequence is empty";

  // The optional inputs' shapes: B [D, 2 * gates * H], sequence_lens [B],
  // initial states [D, B, H] (or [B, D, H]).
  auto check = [&](unsigned i, ArrayRef<int64_t> shape,
                   StringRef what) -> LogicalResult {
    std::optional<RankedTensorType> type = node.getInputType(i);
    if (!type)
      return failure();
    if (type->getShape() == shape)
      return success();
    InFlightDiagnostic diag = node.emitError();
    diag << what << " has shape " << *type << ", expected [";
    llvm::interleaveComma(shape, diag);
    return diag << "]";
  };
  SmallVector<int64_t> stateShape =
      batchFirst ? SmallVector<int64_t>{batch, *directions, hidden}
                 : SmallVector<int64_t>{*directions, batch, hidden};
  if ((node.hasInput(3) &&
       failed(check(3, {*directions, 2 * gateRows}, "B"))) ||
      (node.hasInput(4) && failed(check(4, {batch}, "sequence_lens"))))
    return failure();
  for (unsigned s = 0; s < kind.states; ++s)
    if (node.hasInput(5 + s) &&
        failed(check(5 + s, stateShape, s ? "initial_c" : "initial_h")))
      return failure();

  Value bias;
  if (node.hasInput(3) && !(bias = node.getInput(3)))
    return failure();
  Value lengths;
  if (node.hasInput(4)) {
    const Literal *given = node.getLiteral(4);
    bool whole = given && llvm::all_of(given->ints, [&](int64_t length) {
                   return length == steps;
                 });
    if (!whole && !(lengths = node.getInput(4)))
      return failure();
  }
  // Initial states: inputs 5 (h) and 6 (c), [D, B, H] or [B, D, H].
  SmallVector<Value> initial;
  for (unsigned s = 0; s < kind.states; ++s) {
    Value state;
    if (node.hasInput(5 + s) && !(state = node.getInput(5 + s)))
      return failure();
    initial.push_back(state);
  }

  SmallVector<Value> outputs;
  SmallVector<SmallVector<Value>> finals(kind.states);
  std::string direction = node.getString("direction", "forward");
  for (int64_t d = 0; d < *directions; ++d) {
    bool reverse = d == 1 || direction == "reverse";
    Value wd = node.createIndexSlice(w, 0, d),
          rd = node.createIndexSlice(r, 0, d);
    Value bd = bias ? node.createIndexSlice(bias, 0, d)
                    : zeros(node, {2 * gateRows}, element);
    SmallVector<Value> states;
    for (Value state : initial)
      states.push_back(state
                           ? node.createIndexSlice(state, batchFirst ? 1 : 0, d)
                           : zeros(node, {batch, hidden}, element));
    auto outputType = RankedTensorType::get({steps, batch, hidden}, element);
    auto stateType = RankedTensorType::get({batch, hidden}, element);
    OpBuilder &b = node.getBuilder();
    Operation *layer;
    if (kind.states == 2)
      layer = LstmOp::create(b, node.getLoc(),
                             TypeRange{outputType, stateType, stateType}, x, wd,
                             rd, bd, states[0], states[1], lengths, reverse);
    else
      layer = GruOp::create(b, node.getLoc(), TypeRange{outputType, stateType},
                            x, wd, rd, bd, states[0], lengths, reverse,
                            node.getInt("linear_before_reset", 0) != 0);
    outputs.push_back(layer->getResult(0));
    for (unsigned s = 0; s < kind.states; ++s)
      finals[s].push_back(layer->getResult(1 + s));
  }
  // Y: [T, D, B, H], or [B, T, D, H]; Y_h, Y_c: [D, B, H], or [B, D, H].
  Value y = node.createStack(outputs, 1);
  if (batchFirst)
    y = node.createTranspose(y, {2, 0, 1, 3});
  node.setOutput(0, y);
  for (unsigned s = 0; s < kind.states; ++s)
    node.setOutput(1 + s, node.createStack(finals[s], batchFirst ? 1 : 0));
  return success();
}

LogicalResult convertLstm(NodeContext &node) {
  return convertRecurrent(node, {4, 2, {"Sigmoid", "Tanh", "Tanh"}});
}

LogicalResult convertGru(NodeContext &node) {
  return convertRecurrent(node, {3, 1, {"Sigmoid", "Tanh"}});
}

} // namespace

void mlir::dpc::onnx_import::addRecurrentConverters(
    OpConverterMap &converters) {
  converters["LSTM"] = convertLstm;
  converters["GRU"] = convertGru;
}
