//===- OnnxShapeInference.cpp - ONNX's own shape inference ----------------===//
//
// ONNX reports inconsistent models by throwing, so this one file is built
// with exceptions and turns them into messages.
//
//===----------------------------------------------------------------------===//

#include "OnnxModelLoader.h"

#include "onnx/shape_inference/implementation.h"

bool mlir::dpc::onnx_import::runOnnxShapeInference(onnx::ModelProto &model,
                                                   std::string &error) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/1,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}
