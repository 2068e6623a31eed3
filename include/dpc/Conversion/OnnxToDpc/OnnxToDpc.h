//===- OnnxToDpc.h - Import ONNX models as dpc IR ---------------*- C++ -*-===//
//
// The importer turns an ONNX model into one `func.func @forward` of dpc ops:
// graph inputs become `dpc.input` arguments, trainable weights `dpc.param`
// arguments, BatchNorm running statistics `dpc.state` arguments; graph
// outputs become `dpc.output` results, followed by the new value of every
// state argument the graph updates. Shape-computing chains are folded, so
// every value has a static shape. Weight values are returned beside the IR,
// not inside it, so printing a large model stays cheap.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CONVERSION_ONNXTODPC_ONNXTODPC_H
#define DPC_CONVERSION_ONNXTODPC_ONNXTODPC_H

#include "dpc/Runtime/HostTensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::dpc {

struct OnnxImportOptions {
  /// Full shapes for graph inputs, by input name; they replace the model's
  /// declared shape, which must agree on every fixed dimension.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Sizes for symbolic dimensions, by the dimension's name in the model.
  std::map<std::string, int64_t> dimSizes;
  /// Name of the imported function.
  std::string functionName = "forward";
  /// Extended regular expressions over stored tensors' names, matched
  /// whole: tensors that are parameters although the rule says constant
  /// (`--parameters`), and parameters held constant (`--freeze`, which
  /// wins). Empty matches nothing. The rule is in docs/onnx-import.md.
  std::string parameters, freeze;
};

struct OnnxImportResult {
  OwningOpRef<ModuleOp> module;
  /// Initial values of every `dpc.param` and `dpc.state` argument, by name.
  std::vector<::dpc::NamedTensor> initialValues;
};

/// Imports the ONNX model at `path`. Reports problems (unreadable or
/// malformed files, unsupported ops, shapes that do not fit) as
/// diagnostics on `context` and returns failure.
FailureOr<OnnxImportResult> importOnnxFile(MLIRContext *context,
                                           llvm::StringRef path,
                                           const OnnxImportOptions &options);

/// Prints diagnostics of an import as `FILE: error: message`, one line
/// each, to `os`: ONNX files have no line numbers to point at. With
/// `nameNodes` (errors of a run of the imported ops, whose messages do not
/// say where they are), as `FILE: node 'NAME': error: message`.
class ImportDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  ImportDiagnosticHandler(MLIRContext *context, llvm::raw_ostream &os,
                          bool nameNodes = false);
};

/// Parses `text` (`2x3x32x32`, or `scalar` for rank 0) into a shape.
FailureOr<std::vector<int64_t>> parseShape(llvm::StringRef text);

/// Builds import options from command-line entries: `NAME=2x3x32x32` for
/// input shapes and `NAME=N` for symbolic dimensions. On a malformed entry
/// returns failure and sets `error` to a message that quotes it.
FailureOr<OnnxImportOptions>
parseImportFlags(llvm::ArrayRef<std::string> inputShapes,
                 llvm::ArrayRef<std::string> dimSizes, std::string &error);

} // namespace mlir::dpc

#endif // DPC_CONVERSION_ONNXTODPC_ONNXTODPC_H
