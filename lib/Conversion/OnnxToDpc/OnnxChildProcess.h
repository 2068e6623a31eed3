//===- OnnxChildProcess.h - Running ONNX's library code in a child -*- C++
//-*-===//
//
// ONNX's shape inference and version converter trust the models they are
// given: a hostile attribute can crash them. dpc runs them in a forked
// child, so that a crash refuses the model instead of killing dpc.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_CONVERSION_ONNXTODPC_ONNXCHILDPROCESS_H
#define DPC_LIB_CONVERSION_ONNXTODPC_ONNXCHILDPROCESS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir::dpc::onnx_import {

/// How work run in a child process ended.
enum class ChildOutcome { Succeeded, Failed, Crashed };

/// Runs `work` in a forked child and hands its `reply` back: the result
/// when it returns true, its message when it returns false. Where no child
/// can be made, `work` runs here.
ChildOutcome runInChildProcess(llvm::function_ref<bool(std::string &)> work,
                               std::string &reply);

} // namespace mlir::dpc::onnx_import

#endif // DPC_LIB_CONVERSION_ONNXTODPC_ONNXCHILDPROCESS_H
