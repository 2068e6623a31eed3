//===- OnnxModelLoader.h - Reading ONNX files and tensors -------*- C++ -*-===//
//
// Reads a ModelProto from disk and decodes TensorProtos (inline, typed
// fields, raw bytes or external data files) into host tensors. Problems
// come back as messages; the caller decides where to report them.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_CONVERSION_ONNXTODPC_ONNXMODELLOADER_H
#define DPC_LIB_CONVERSION_ONNXTODPC_ONNXMODELLOADER_H

#include "dpc/Runtime/HostTensor.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace mlir::dpc::onnx_import {

/// Parses the model at `path`; on failure returns false and sets `error`.
bool loadModel(const std::string &path, onnx::ModelProto &model,
               std::string &error);

/// The host element type of an ONNX `TensorProto::DataType`, if dpc
/// supports it.
std::optional<::dpc::DType> getDType(int onnxDataType);

/// Name of an ONNX data type, for messages ("FLOAT", "STRING", ...).
std::string getOnnxTypeName(int onnxDataType);

/// Decodes `proto`; external data is read relative to `modelDir`.
bool decodeTensor(const onnx::TensorProto &proto, const std::string &modelDir,
                  ::dpc::HostTensor &tensor, std::string &error);

/// What ONNX's shape inference said of a model.
enum class InferenceOutcome { Consistent, Inconsistent, Crashed };

/// Runs ONNX's own shape inference over `model` (with data propagation),
/// in a child process; `error` gets ONNX's message when the model is
/// inconsistent. The inferred shapes are not kept.
InferenceOutcome runOnnxShapeInference(onnx::ModelProto &model,
                                       std::string &error);

/// Upgrades `model` to opset `targetOpset` of the default domain with
/// ONNX's version converter; on failure returns false and sets `error`.
bool upgradeOpset(onnx::ModelProto &model, int targetOpset, std::string &error);

} // namespace mlir::dpc::onnx_import

#endif // DPC_LIB_CONVERSION_ONNXTODPC_ONNXMODELLOADER_H
