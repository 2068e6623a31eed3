//===- Passes.h - Analysis test passes --------------------------*- C++ -*-===//
//
// Declares the analyses' `-test-…` passes and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_PASSES_H
#define DPC_ANALYSIS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::dpc {

#define GEN_PASS_DECL
#include "dpc/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dpc/Analysis/Passes.h.inc"

} // namespace mlir::dpc

#endif // DPC_ANALYSIS_PASSES_H
