//===- GraphImporter.h - State of one ONNX graph import ---------*- C++ -*-===//
//
// The importer walks the graph's nodes in order. Each ONNX value is either
// a literal (known at import time) or an SSA value; weights and state are
// turned into function arguments the first time a node reads them as a
// tensor. Op converters (OpConverters.h) see one node through NodeContext.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_CONVERSION_ONNXTODPC_GRAPHIMPORTER_H
#define DPC_LIB_CONVERSION_ONNXTODPC_GRAPHIMPORTER_H

#include "Literal.h"

#include "dpc/Conversion/OnnxToDpc/OnnxToDpc.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Regex.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace mlir::dpc::onnx_import {

/// A tensor the model holds (an initializer or a Constant node's value)
/// that becomes an argument or a literal depending on how it is read.
struct StoredTensor {
  ::dpc::HostTensor tensor;
  /// A Constant node's value rather than an initializer.
  bool fromConstantNode = false;
};

/// How a node reads a stored tensor as an SSA value.
enum class TensorUse { Operand, State };

/// A value a subgraph (a Loop or Scan body) takes or gives: known at
/// import time, or an SSA value.
struct GraphValue {
  Value value;
  std::optional<Literal> literal;
};

/// The most subgraph nodes a model's loops may unroll to, nested loops
/// included: a bound on the IR a hostile trip count can make.
constexpr int64_t kMaxUnrolledNodes = 100000;

/// Calls `fn` on every node of `graph` and of the subgraphs its nodes hold
/// (Loop and Scan bodies), each node before its subgraphs' nodes.
void forEachNode(const onnx::GraphProto &graph,
                 llvm::function_ref<void(const onnx::NodeProto &)> fn);

class GraphImporter {
public:
  /// `model` is upgraded in place when its opset is older than the
  /// converters read.
  GraphImporter(MLIRContext *context, std::string path, onnx::ModelProto &model,
                const OnnxImportOptions &options);

  FailureOr<OnnxImportResult> run();

  MLIRContext *getContext() const { return context; }
  OpBuilder &getBuilder() { return builder; }
  Location getFileLoc() const { return fileLoc; }
  const std::string &getModelDir() const { return modelDir; }

  /// The tensor named `name` as an SSA value, creating an argument or a
  /// constant when it is stored or literal. Null after an error.
  Value getValue(const std::string &name, Location loc,
                 TensorUse use = TensorUse::Operand);
  /// The literal value of `name`, if it is known at import time. Stored
  /// weights count only with `forceStored` (a node that needs the value,
  /// like Resize's scales), so that folding never bakes in a parameter.
  const Literal *getLiteral(const std::string &name, bool forceStored = false);
  /// The static type of `name` (for Shape and the like).
  std::optional<RankedTensorType> getType(const std::string &name);

  void setValue(const std::string &name, Value value);
  void setLiteral(const std::string &name, Literal literal);
  /// Records a tensor held by the model (a Constant node's value).
  void setStored(const std::string &name, StoredTensor tensor);
  /// Records that `state` (an argument) is updated to `newValue`.
  void setStateUpdate(Value state, Value newValue);

  /// Whether any node or graph output reads `name`.
  bool isUsed(const std::string &name) const { return uses.count(name); }

  /// The i64 scalar argument `dpc.hyper = name` (the step's random seed,
  /// the micro-batch index), added on first use with initial value 0.
  Value getHyperparameter(StringRef name);
  /// A new dropout stream: each dropout site draws its own numbers.
  int64_t takeDropoutStream() { return dropoutStreams++; }

  /// Converts a literal to a `dpc.constant`.
  Value materialize(const Literal &literal, Location loc);

  /// Imports `graph` (a loop's body) once, in line: its inputs bound to
  /// `inputs`, its nodes converted in the scope of the values imported so
  /// far, its outputs returned in `outputs`. The names it defines are
  /// restored afterwards, so that the next iteration imports it afresh;
  /// the tensors it holds that become arguments stay the same ones.
  LogicalResult importSubgraph(const onnx::GraphProto &graph,
                               ArrayRef<GraphValue> inputs,
                               SmallVectorImpl<GraphValue> &outputs,
                               Location loc);

  Type getElementType(::dpc::DType dtype);

private:
  LogicalResult declareInputs();
  LogicalResult checkSupport();
  LogicalResult checkStructure();
  LogicalResult upgradeOldOpset();
  LogicalResult importNodes();
  LogicalResult finish();
  bool isParameter(const std::string &name, const StoredTensor &stored);
  Value addArgument(const std::string &name, const StoredTensor &stored,
                    StringRef role);

  MLIRContext *context;
  std::string path, modelDir;
  onnx::ModelProto &model;
  const OnnxImportOptions &options;
  /// --parameters and --freeze, anchored; null when not given.
  std::unique_ptr<llvm::Regex> parameterPattern, freezePattern;
  /// Whether the model keeps its weights in Constant nodes: it has no
  /// floating-point initializer.
  bool weightsInConstantNodes = false;
  Location fileLoc;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;
  Block *body = nullptr;
  int64_t opset = 0;

  std::map<std::string, Value> values;
  std::map<std::string, Literal> literals;
  std::map<std::string, StoredTensor> stored;
  std::map<std::string, int> uses;
  /// Argument attributes, in argument order.
  SmallVector<NamedAttribute> argumentAttrs;
  SmallVector<std::pair<Value, Value>> stateUpdates;
  std::vector<::dpc::NamedTensor> initialValues;
  int64_t dropoutStreams = 0;
  /// Nodes imported from subgraphs so far (every iteration of every loop).
  int64_t subgraphNodes = 0;
  /// Per subgraph, the arguments its stored tensors became.
  std::map<const onnx::GraphProto *, std::map<std::string, Value>>
      subgraphArguments;
};

} // namespace mlir::dpc::onnx_import

#endif // DPC_LIB_CONVERSION_ONNXTODPC_GRAPHIMPORTER_H
