//===- GraphImporter.cpp - Import one ONNX graph as a dpc function --------===//
//
// Order of work: check that every node is supported (reporting all that
// are not at once), fix the input shapes and let ONNX's shape inference
// check the model against them, then convert node by node and build the
// function signature from what the nodes read.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "OnnxModelLoader.h"
#include "OpConverters.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::onnx_import;
using ::dpc::DType;

/// The newest default-domain opset this importer (and ONNX 1.12) knows.
static constexpr int64_t kMaxOpset = 17;
static constexpr int64_t kMinOpset = 7;

GraphImporter::GraphImporter(MLIRContext *context, std::string path,
                             onnx::ModelProto &model,
                             const OnnxImportOptions &options)
    : context(context), path(std::move(path)), model(model), options(options),
      fileLoc(FileLineColLoc::get(context, this->path, 0, 0)),
      builder(context) {
  llvm::SmallString<256> dir(this->path);
  llvm::sys::path::remove_filename(dir);
  modelDir = dir.empty() ? "." : std::string(dir);
  auto anchored = [](const std::string &pattern) {
    return pattern.empty()
               ? nullptr
               : std::make_unique<llvm::Regex>("^(" + pattern + ")$");
  };
  parameterPattern = anchored(options.parameters);
  freezePattern = anchored(options.freeze);
  weightsInConstantNodes =
      llvm::none_of(model.graph().initializer(), [](const auto &tensor) {
        return tensor.data_type() == onnx::TensorProto::FLOAT ||
               tensor.data_type() == onnx::TensorProto::DOUBLE ||
               tensor.data_type() == onnx::TensorProto::FLOAT16 ||
               tensor.data_type() == onnx::TensorProto::BFLOAT16;
      });
}

Type GraphImporter::getElementType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return builder.getF32Type();
  case DType::F64:
    return builder.getF64Type();
  case DType::F16:
    return builder.getF16Type();
  case DType::BF16:
    return builder.getBF16Type();
  case DType::I64:
    return builder.getI64Type();
  case DType::I32:
    return builder.getI32Type();
  case DType::I16:
    return builder.getI16Type();
  case DType::I8:
    return builder.getI8Type();
  case DType::U8:
    // dpc integers are signless and compute as signed: 0..255 fits i16.
    return builder.getIntegerType(16);
  case DType::Bool:
    return builder.getI1Type();
  }
  llvm_unreachable("unknown dtype");
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

void GraphImporter::setValue(const std::string &name, Value value) {
  values[name] = value;
  literals.erase(name);
}

void GraphImporter::setLiteral(const std::string &name, Literal literal) {
  literals[name] = std::move(literal);
  values.erase(name);
}

void GraphImporter::setStored(const std::string &name, StoredTensor tensor) {
  stored[name] = std::move(tensor);
}

void GraphImporter::setStateUpdate(Value state, Value newValue) {
  stateUpdates.emplace_back(state, newValue);
}

/// Whether a stored tensor is a parameter (trained) when read as a
/// tensor. Floating-point initializers are; Constant nodes are constants
/// (masks, zero states, paddings a model builds), except in a model
/// without floating-point initializers, whose exporter kept its weights in
/// Constant nodes: there those of more than one element are. --parameters
/// and --freeze override the rule by name.
bool GraphImporter::isParameter(const std::string &name,
                                const StoredTensor &stored) {
  const ::dpc::HostTensor &tensor = stored.tensor;
  bool isFloat = tensor.dtype == DType::F32 || tensor.dtype == DType::F64 ||
                 tensor.dtype == DType::F16 || tensor.dtype == DType::BF16;
  if (!isFloat || (freezePattern && freezePattern->match(name)))
    return false;
  if (parameterPattern && parameterPattern->match(name))
    return true;
  if (!stored.fromConstantNode)
    return true;
  return weightsInConstantNodes && tensor.getNumElements() > 1;
}

const Literal *GraphImporter::getLiteral(const std::string &name,
                                         bool forceStored) {
  auto it = literals.find(name);
  if (it != literals.end())
    return &it->second;
  if (values.count(name))
    return nullptr;
  auto storedIt = stored.find(name);
  if (storedIt == stored.end() ||
      (!forceStored && isParameter(name, storedIt->second)))
    return nullptr;
  return &(literals[name] = Literal::fromTensor(storedIt->second.tensor));
}

std::optional<RankedTensorType>
GraphImporter::getType(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return cast<RankedTensorType>(it->second.getType());
  const ::dpc::HostTensor *tensor = nullptr;
  std::optional<Literal> literal;
  if (auto it = literals.find(name); it != literals.end())
    return RankedTensorType::get(it->second.shape,
                                 getElementType(it->second.dtype));
  if (auto it = stored.find(name); it != stored.end())
    tensor = &it->second.tensor;
  if (!tensor)
    return std::nullopt;
  return RankedTensorType::get(tensor->shape, getElementType(tensor->dtype));
}

Value GraphImporter::addArgument(const std::string &name,
                                 const StoredTensor &tensor, StringRef role) {
  auto type = RankedTensorType::get(tensor.tensor.shape,
                                    getElementType(tensor.tensor.dtype));
  Value argument = body->addArgument(type, fileLoc);
  argumentAttrs.push_back(
      builder.getNamedAttr(role, builder.getStringAttr(name)));
  initialValues.push_back({name, tensor.tensor});
  values[name] = argument;
  return argument;
}

Value GraphImporter::getHyperparameter(StringRef name) {
  std::string key = "hyper:" + name.str();
  if (auto it = values.find(key); it != values.end())
    return it->second;
  ::dpc::HostTensor zero(::dpc::DType::I64, {});
  Value argument = body->addArgument(
      RankedTensorType::get({}, builder.getI64Type()), fileLoc);
  argumentAttrs.push_back(builder.getNamedAttr(DpcDialect::kHyperAttrName,
                                               builder.getStringAttr(name)));
  initialValues.push_back({name.str(), std::move(zero)});
  return values[key] = argument;
}

Value GraphImporter::getValue(const std::string &name, Location loc,
                              TensorUse use) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  auto storedIt = stored.find(name);
  if (storedIt != stored.end() && !literals.count(name)) {
    if (use == TensorUse::State)
      return addArgument(name, storedIt->second, DpcDialect::kStateAttrName);
    if (isParameter(name, storedIt->second))
      return addArgument(name, storedIt->second, DpcDialect::kParamAttrName);
  }
  if (const Literal *literal = getLiteral(name, /*forceStored=*/true))
    return values[name] = materialize(*literal, loc);
  mlir::emitError(loc) << "value '" << name
                       << "' is not produced by any node or graph input";
  return {};
}

LogicalResult GraphImporter::importSubgraph(
    const onnx::GraphProto &graph, ArrayRef<GraphValue> inputs,
    SmallVectorImpl<GraphValue> &outputs, Location loc) {
  if (graph.input_size() != static_cast<int>(inputs.size()))
    return mlir::emitError(loc) << "its body takes " << graph.input_size()
                                << " inputs, not " << inputs.size();
  subgraphNodes += graph.node_size();
  if (subgraphNodes > kMaxUnrolledNodes)
    return mlir::emitError(loc)
           << "the model's loops unroll to more than " << kMaxUnrolledNodes
           << " body nodes in all (nested loops multiply)";
  // What the body defines shadows the enclosing graph's names while it is
  // imported.
  std::vector<std::string> defined;
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.push_back(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    defined.push_back(initializer.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      if (!output.empty())
        defined.push_back(output);
  struct Shadowed {
    std::optional<Value> value;
    std::optional<Literal> literal;
    std::optional<StoredTensor> stored;
  };
  std::map<std::string, Shadowed> shadowed;
  for (const std::string &name : defined) {
    Shadowed &entry = shadowed[name];
    if (auto it = values.find(name); it != values.end())
      entry.value = it->second;
    if (auto it = literals.find(name); it != literals.end())
      entry.literal = it->second;
    if (auto it = stored.find(name); it != stored.end())
      entry.stored = it->second;
    values.erase(name);
    literals.erase(name);
    stored.erase(name);
  }
  auto restore = [&] {
    for (auto &[name, entry] : shadowed) {
      values.erase(name);
      literals.erase(name);
      stored.erase(name);
      if (entry.value)
        values[name] = *entry.value;
      if (entry.literal)
        literals[name] = std::move(*entry.literal);
      if (entry.stored)
        stored[name] = std::move(*entry.stored);
    }
  };

  // The tensors the body holds are the same every iteration: those read as
  // arguments before are again.
  std::map<std::string, Value> &arguments = subgraphArguments[&graph];
  for (auto &[name, argument] : arguments)
    values[name] = argument;
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    StoredTensor tensor;
    std::string error;
    if (!decodeTensor(initializer, modelDir, tensor.tensor, error)) {
      restore();
      return mlir::emitError(loc) << error;
    }
    stored[initializer.name()] = std::move(tensor);
  }
  for (auto [input, bound] : llvm::zip_equal(graph.input(), inputs)) {
    if (bound.literal)
      setLiteral(input.name(), *bound.literal);
    else
      setValue(input.name(), bound.value);
  }

  LogicalResult result = success();
  const OpConverterMap &converters = getOpConverters();
  for (const onnx::NodeProto &node : graph.node()) {
    NodeContext context(*this, node, opset);
    if (failed(converters.lookup(node.op_type())(context))) {
      result = failure();
      break;
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (failed(result))
      break;
    GraphValue given;
    if (const Literal *literal = getLiteral(output.name()))
      given.literal = *literal;
    else if (!(given.value = getValue(output.name(), loc)))
      result = failure();
    outputs.push_back(std::move(given));
  }
  for (const std::string &name : defined)
    if (auto it = values.find(name); it != values.end() && stored.count(name) &&
                                     isa<BlockArgument>(it->second))
      arguments[name] = it->second;
  restore();
  return result;
}

Value GraphImporter::materialize(const Literal &literal, Location loc) {
  Type elementType = getElementType(literal.dtype);
  auto type = RankedTensorType::get(literal.shape, elementType);
  DenseElementsAttr attr;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> elements;
    for (double value : literal.floats) {
      APFloat element(value);
      bool losesInfo;
      element.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
      elements.push_back(element);
    }
    attr = DenseElementsAttr::get(type, elements);
  } else {
    unsigned width = elementType.getIntOrFloatBitWidth();
    SmallVector<APInt> elements;
    for (int64_t value : literal.ints)
      elements.push_back(APInt(width, static_cast<uint64_t>(value),
                               /*isSigned=*/true, /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(type, elements);
  }
  return ConstantOp::create(builder, loc, type, attr);
}

//===----------------------------------------------------------------------===//
// Import steps
//===----------------------------------------------------------------------===//

/// The model's opset of the default domain; 0 if it imports none.
static int64_t getDefaultOpset(const onnx::ModelProto &model) {
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  return opset;
}

LogicalResult GraphImporter::checkSupport() {
  opset = getDefaultOpset(model);
  if (opset == 0)
    return mlir::emitError(fileLoc)
           << "the model imports no opset of the default ONNX domain";
  if (opset > kMaxOpset)
    return mlir::emitError(fileLoc)
           << "opset " << opset << " is not supported (dpc imports opsets "
           << kMinOpset << " to " << kMaxOpset << ")";

  const OpConverterMap &converters = getOpConverters();
  std::map<std::string, int64_t> domainVersions;
  for (const onnx::OperatorSetIdProto &entry : model.opset_import())
    domainVersions[entry.domain()] = entry.version();
  SmallVector<std::string> unsupported;
  forEachNode(model.graph(), [&](const onnx::NodeProto &node) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && converters.count(node.op_type()))
      return;
    std::string domain = defaultDomain ? "ai.onnx" : node.domain();
    int64_t version = domainVersions[defaultDomain ? "" : node.domain()];
    unsupported.push_back("'" + node.op_type() + "' (node '" + node.name() +
                          "', domain '" + domain + "', opset " +
                          std::to_string(version) + ")");
  });
  if (unsupported.empty())
    return success();
  InFlightDiagnostic diag = mlir::emitError(fileLoc);
  diag << unsupported.size() << " unsupported ONNX op"
       << (unsupported.size() == 1 ? "" : "s") << ": "
       << llvm::join(unsupported, ", ");
  return failure();
}

static FailureOr<std::vector<int64_t>>
resolveDeclaredInputShape(const onnx::ValueInfoProto &input,
                          const OnnxImportOptions &options, Location loc);

/// The concrete shape of graph input `input`, from the model and the
/// user's options: every dimension non-negative and the element count
/// within 2^48, so that no later size computation overflows.
static FailureOr<std::vector<int64_t>>
resolveInputShape(const onnx::ValueInfoProto &input,
                  const OnnxImportOptions &options, Location loc) {
  FailureOr<std::vector<int64_t>> shape =
      resolveDeclaredInputShape(input, options, loc);
  if (failed(shape))
    return failure();
  int64_t elements = 1;
  for (auto [d, size] : llvm::enumerate(*shape)) {
    if (size < 0)
      return mlir::emitError(loc)
             << "input '" << input.name() << "': dimension " << d << " is "
             << size << "; sizes must not be negative";
    constexpr int64_t kMaxElements = int64_t(1) << 48;
    if (size != 0 && elements > kMaxElements / size)
      return mlir::emitError(loc)
             << "input '" << input.name() << "' has more than 2^48 elements";
    elements *= size;
  }
  return shape;
}

/// The shape the model (or the user's options) gives graph input `input`.
static FailureOr<std::vector<int64_t>>
resolveDeclaredInputShape(const onnx::ValueInfoProto &input,
                          const OnnxImportOptions &options, Location loc) {
  const onnx::TensorShapeProto &declared = input.type().tensor_type().shape();
  auto given = options.inputShapes.find(input.name());
  std::vector<int64_t> shape;
  if (given != options.inputShapes.end()) {
    shape = given->second;
    if (input.type().tensor_type().has_shape()) {
      if (static_cast<int>(shape.size()) != declared.dim_size())
        return mlir::emitError(loc)
               << "input '" << input.name() << "' has rank "
               << declared.dim_size() << " in the model, but " << shape.size()
               << " was given";
      for (int d = 0; d < declared.dim_size(); ++d)
        if (declared.dim(d).has_dim_value() &&
            declared.dim(d).dim_value() != shape[d])
          return mlir::emitError(loc)
                 << "input '" << input.name() << "': dimension " << d << " is "
                 << declared.dim(d).dim_value() << " in the model, but "
                 << shape[d] << " was given";
    }
    return shape;
  }
  if (!input.type().tensor_type().has_shape())
    return mlir::emitError(loc)
           << "input '" << input.name()
           << "' has no shape in the model; give one with --input-shape "
           << input.name() << "=DIMS";
  for (int d = 0; d < declared.dim_size(); ++d) {
    const onnx::TensorShapeProto::Dimension &dim = declared.dim(d);
    if (dim.has_dim_value()) {
      shape.push_back(dim.dim_value());
      continue;
    }
    auto size = options.dimSizes.find(dim.dim_param());
    if (dim.has_dim_param() && size != options.dimSizes.end()) {
      shape.push_back(size->second);
      continue;
    }
    return mlir::emitError(loc)
           << "input '" << input.name() << "': dimension " << d
           << " is symbolic ('" << dim.dim_param()
           << "'); give its size with --dim " << dim.dim_param()
           << "=N or the whole shape with --input-shape " << input.name()
           << "=DIMS";
  }
  return shape;
}

LogicalResult GraphImporter::declareInputs() {
  const onnx::GraphProto &graph = model.graph();
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    StoredTensor tensor;
    std::string error;
    if (!decodeTensor(initializer, modelDir, tensor.tensor, error))
      return mlir::emitError(fileLoc) << error;
    stored[initializer.name()] = std::move(tensor);
  }
  // Models written without weights (dpc.gpt_onnx, for planning at scale)
  // list the graph inputs that are parameters in their metadata.
  std::set<std::string> parameterInputs;
  for (const onnx::StringStringEntryProto &entry : model.metadata_props()) {
    if (entry.key() != "dpc.parameters")
      continue;
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(entry.value());
    const llvm::json::Array *names = parsed ? parsed->getAsArray() : nullptr;
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    if (!names)
      return mlir::emitError(fileLoc)
             << "metadata 'dpc.parameters' is not a JSON list of input names";
    for (const llvm::json::Value &name : *names) {
      std::optional<StringRef> text = name.getAsString();
      if (!text)
        return mlir::emitError(fileLoc)
               << "metadata 'dpc.parameters' holds a non-string entry";
      parameterInputs.insert(text->str());
    }
  }
  std::set<std::string> givenNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    // Before IR version 4, initializers are listed among the inputs.
    if (stored.count(input.name()))
      continue;
    givenNames.insert(input.name());
    if (!input.type().has_tensor_type())
      return mlir::emitError(fileLoc)
             << "input '" << input.name() << "' is not a tensor";
    int elemType = input.type().tensor_type().elem_type();
    std::optional<DType> dtype = getDType(elemType);
    if (!dtype)
      return mlir::emitError(fileLoc)
             << "input '" << input.name() << "' has unsupported element type "
             << getOnnxTypeName(elemType);
    if (*dtype == DType::U8)
      return mlir::emitError(fileLoc)
             << "input '" << input.name()
             << "' is uint8, which dpc does not take as an input (its "
                "integers are signed); cast it in the model";
    FailureOr<std::vector<int64_t>> shape =
        resolveInputShape(input, options, fileLoc);
    if (failed(shape))
      return failure();
    auto type = RankedTensorType::get(*shape, getElementType(*dtype));
    values[input.name()] = body->addArgument(type, fileLoc);
    argumentAttrs.push_back(builder.getNamedAttr(
        parameterInputs.count(input.name()) ? DpcDialect::kParamAttrName
                                            : DpcDialect::kInputAttrName,
        builder.getStringAttr(input.name())));
  }
  for (const std::string &name : parameterInputs)
    if (!givenNames.count(name))
      return mlir::emitError(fileLoc)
             << "metadata 'dpc.parameters' names '" << name
             << "', which is not a graph input";
  for (const auto &[name, shape] : options.inputShapes)
    if (!givenNames.count(name))
      return mlir::emitError(fileLoc)
             << "--input-shape names '" << name
             << "', which is not an input of the model";
  return success();
}

LogicalResult GraphImporter::importNodes() {
  const OpConverterMap &converters = getOpConverters();
  for (const onnx::NodeProto &node : model.graph().node()) {
    NodeContext nodeContext(*this, node, opset);
    if (failed(converters.lookup(node.op_type())(nodeContext)))
      return failure();
  }
  return success();
}

LogicalResult GraphImporter::finish() {
  SmallVector<Value> results;
  SmallVector<NamedAttribute> resultAttrs;
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    Value value = getValue(output.name(), fileLoc);
    if (!value)
      return failure();
    results.push_back(value);
    resultAttrs.push_back(builder.getNamedAttr(
        DpcDialect::kOutputAttrName, builder.getStringAttr(output.name())));
  }
  // The new state follows the outputs, named like the state it replaces.
  for (auto [state, newValue] : stateUpdates) {
    auto argument = dyn_cast<BlockArgument>(state);
    if (!argument)
      return mlir::emitError(newValue.getLoc())
             << "running statistics must be initializers or graph inputs, "
                "not computed values";
    // Statistics given as graph inputs are state the caller provides.
    NamedAttribute &attr = argumentAttrs[argument.getArgNumber()];
    if (attr.getName() == DpcDialect::kInputAttrName)
      attr = builder.getNamedAttr(DpcDialect::kStateAttrName, attr.getValue());
    results.push_back(newValue);
    resultAttrs.push_back(attr);
  }
  builder.setInsertionPointToEnd(body);
  func::ReturnOp::create(builder, fileLoc, results);
  function.setFunctionType(builder.getFunctionType(
      body->getArgumentTypes(), ValueRange(results).getTypes()));
  for (auto [i, attr] : llvm::enumerate(argumentAttrs))
    function.setArgAttrs(i, builder.getDictionaryAttr(attr));
  for (auto [i, attr] : llvm::enumerate(resultAttrs))
    function.setResultAttrs(i, builder.getDictionaryAttr(attr));
  if (failed(mlir::verify(*module)))
    return mlir::emitError(fileLoc)
           << "the imported IR does not verify (an importer bug)";
  return success();
}

/// Checks `graph` with the values of its enclosing graphs, `producers`
/// (name to producing node, "" for inputs and initializers), in scope.
static LogicalResult checkGraph(const onnx::GraphProto &graph,
                                llvm::StringMap<std::string> producers,
                                const std::string &where, Location fileLoc) {
  for (const onnx::ValueInfoProto &input : graph.input())
    producers[input.name()] = "";
  for (const onnx::TensorProto &initializer : graph.initializer())
    producers[initializer.name()] = "";
  auto describe = [&](const onnx::NodeProto &node) {
    return "node '" + node.name() + "' (" + node.op_type() + ")" + where;
  };
  llvm::StringMap<const onnx::NodeProto *> laterProducers;
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      if (!output.empty())
        laterProducers.try_emplace(output, &node);
  for (const onnx::NodeProto &node : graph.node()) {
    // An empty name is an optional input left out.
    for (const std::string &input : node.input()) {
      if (input.empty() || producers.count(input))
        continue;
      auto later = laterProducers.find(input);
      if (later != laterProducers.end())
        return mlir::emitError(fileLoc)
               << describe(node) << " reads '" << input << "' before "
               << describe(*later->second)
               << " produces it; ONNX lists nodes in topological order";
      return mlir::emitError(fileLoc)
             << describe(node) << " reads '" << input
             << "', which no graph input, initializer or node produces";
    }
    // A body sees what its enclosing graphs produced before its node.
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.has_g() &&
          failed(checkGraph(attr.g(), producers,
                            " in the body of node '" + node.name() + "' (" +
                                node.op_type() + ")" + where,
                            fileLoc)))
        return failure();
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      auto [it, inserted] = producers.try_emplace(output, describe(node));
      if (!inserted)
        return mlir::emitError(fileLoc)
               << describe(node) << " produces '" << output << "', which "
               << (it->second.empty() ? std::string("a graph input or "
                                                    "initializer")
                                      : it->second)
               << " already produces";
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!producers.count(output.name()))
      return mlir::emitError(fileLoc)
             << "graph output '" << output.name() << "'" << where
             << " is produced by no graph input, initializer or node";
  return success();
}

/// The graph is checked as ONNX's checker would before ONNX's shape
/// inference sees it: that code trusts it, and a graph that reads a value
/// nothing produces, or reads it before it is produced, crashes it.
LogicalResult GraphImporter::checkStructure() {
  return checkGraph(model.graph(), {}, "", fileLoc);
}

void mlir::dpc::onnx_import::forEachNode(
    const onnx::GraphProto &graph,
    llvm::function_ref<void(const onnx::NodeProto &)> fn) {
  for (const onnx::NodeProto &node : graph.node()) {
    fn(node);
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.has_g())
        forEachNode(attr.g(), fn);
  }
}

/// Counts in `uses` every read of a value by a node or as a graph output,
/// in `graph` and its subgraphs.
static void countUses(const onnx::GraphProto &graph,
                      std::map<std::string, int> &uses) {
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      ++uses[input];
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.has_g())
        countUses(attr.g(), uses);
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    ++uses[output.name()];
}

/// Older opsets are converted to the oldest one the converters read, once
/// the checks that keep ONNX's converter from tripping on a malformed
/// graph have passed.
LogicalResult GraphImporter::upgradeOldOpset() {
  if (opset >= kMinOpset)
    return success();
  std::string error;
  if (!upgradeOpset(model, kMinOpset, error))
    return mlir::emitError(fileLoc)
           << "the model's opset " << opset << " is older than dpc reads ("
           << kMinOpset << " to " << kMaxOpset << "), and upgrading it to "
           << kMinOpset << " failed: " << error;
  opset = getDefaultOpset(model);
  return success();
}

FailureOr<OnnxImportResult> GraphImporter::run() {
  if (failed(checkSupport()) || failed(checkStructure()) ||
      failed(upgradeOldOpset()))
    return failure();
  countUses(model.graph(), uses);

  module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  function = func::FuncOp::create(builder, fileLoc, options.functionName,
                                  builder.getFunctionType({}, {}));
  body = function.addEntryBlock();
  builder.setInsertionPointToStart(body);
  if (failed(declareInputs()))
    return failure();

  // Let ONNX check the model with the concrete input shapes: it names the
  // node that a wrong shape breaks.
  onnx::ModelProto checked = model;
  for (onnx::ValueInfoProto &input :
       *checked.mutable_graph()->mutable_input()) {
    auto it = values.find(input.name());
    if (it == values.end())
      continue;
    onnx::TensorShapeProto *shape =
        input.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t size : getShapeOf(it->second))
      shape->add_dim()->set_dim_value(size);
  }
  std::string error;
  InferenceOutcome outcome = runOnnxShapeInference(checked, error);
  if (outcome == InferenceOutcome::Inconsistent)
    return mlir::emitError(fileLoc)
           << "the model does not fit its input shapes: " << error;

  // After a crash in ONNX's inference, dpc's own checks of each node name
  // the node at fault where they can.
  if (failed(importNodes()) || failed(finish()))
    return failure();
  if (outcome == InferenceOutcome::Crashed)
    return mlir::emitError(fileLoc)
           << "ONNX's shape inference crashed on this model: a node has an "
              "attribute or input ONNX does not check (an axis past its "
              "input's rank, say)";
  return OnnxImportResult{std::move(module), std::move(initialValues)};
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<OnnxImportResult>
mlir::dpc::importOnnxFile(MLIRContext *context, StringRef path,
                          const OnnxImportOptions &options) {
  context->loadDialect<DpcDialect, func::FuncDialect>();
  onnx::ModelProto model;
  std::string error;
  if (!loadModel(path.str(), model, error))
    return mlir::emitError(FileLineColLoc::get(context, path, 0, 0)) << error;
  return GraphImporter(context, path.str(), model, options).run();
}

/// The file a location points into, with its line when it has one, and
/// with `nameNodes` the ONNX node it was imported from.
static std::string describeLocation(Location loc, bool nameNodes) {
  std::string text, node;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner); name && node.empty())
      node = name.getName().str();
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = file.getFilename().str();
      if (file.getLine() > 0)
        text += ":" + std::to_string(file.getLine()) + ":" +
                std::to_string(file.getColumn());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (text.empty())
    text = "<unknown>";
  if (nameNodes && !node.empty())
    text += ": node '" + node + "'";
  return text;
}

ImportDiagnosticHandler::ImportDiagnosticHandler(MLIRContext *context,
                                                 llvm::raw_ostream &os,
                                                 bool nameNodes)
    : ScopedDiagnosticHandler(context) {
  setHandler([&os, nameNodes](Diagnostic &diag) {
    StringRef severity = "error";
    if (diag.getSeverity() == DiagnosticSeverity::Warning)
      severity = "warning";
    else if (diag.getSeverity() != DiagnosticSeverity::Error)
      severity = "note";
    os << describeLocation(diag.getLocation(), nameNodes) << ": " << severity
       << ": " << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      os << describeLocation(note.getLocation(), nameNodes)
         << ": note: " << note << "\n";
    return success();
  });
}

FailureOr<std::vector<int64_t>> mlir::dpc::parseShape(StringRef text) {
  std::vector<int64_t> shape;
  if (text == "scalar")
    return shape;
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t size;
    if (part.getAsInteger(10, size) || size < 0)
      return failure();
    shape.push_back(size);
  }
  return shape;
}

FailureOr<OnnxImportOptions>
mlir::dpc::parseImportFlags(ArrayRef<std::string> inputShapes,
                            ArrayRef<std::string> dimSizes,
                            std::string &error) {
  OnnxImportOptions options;
  for (StringRef entry : inputShapes) {
    auto [name, dims] = entry.split('=');
    FailureOr<std::vector<int64_t>> shape = parseShape(dims);
    if (name.empty() || failed(shape)) {
      error = "--input-shape=" + entry.str() +
              " is not NAME=DIMS (like x=2x3x32x32)";
      return failure();
    }
    options.inputShapes[name.str()] = *shape;
  }
  for (StringRef entry : dimSizes) {
    auto [name, value] = entry.split('=');
    int64_t size;
    if (name.empty() || value.getAsInteger(10, size) || size < 0) {
      error = "--dim=" + entry.str() + " is not NAME=N";
      return failure();
    }
    options.dimSizes[name.str()] = size;
  }
  return options;
}
