//===- OnnxShapeInference.cpp - ONNX's own shape inference ----------------===//
//
// ONNX reports inconsistent models by throwing, so this one file is built
// with exceptions and turns them into messages. Its inference functions
// also trust attributes they do not check (a LayerNormalization axis past
// the input's rank reads out of bounds), so they run in a child process:
// a crash there is a refusal of the model, not of dpc.
//
//===----------------------------------------------------------------------===//

#include "OnnxChildProcess.h"
#include "OnnxModelLoader.h"

#include "onnx/shape_inference/implementation.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir::dpc::onnx_import;

/// Runs the inference here: false with ONNX's message when it throws.
static bool inferShapes(onnx::ModelProto &model, std::string &error) {
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

InferenceOutcome
mlir::dpc::onnx_import::runOnnxShapeInference(onnx::ModelProto &model,
                                              std::string &error) {
  switch (runInChildProcess(
      [&](std::string &reply) { return inferShapes(model, reply); }, error)) {
  case ChildOutcome::Succeeded:
    return InferenceOutcome::Consistent;
  case ChildOutcome::Failed:
    return InferenceOutcome::Inconsistent;
  case ChildOutcome::Crashed:
    return InferenceOutcome::Crashed;
  }
  llvm_unreachable("unknown child outcome");
}
