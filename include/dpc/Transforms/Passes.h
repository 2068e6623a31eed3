//===- Passes.h - dpc passes ------------------------------------*- C++ -*-===//
//
// Declares every dpc pass and its registration.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PASSES_H
#define DPC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dpc {

#define GEN_PASS_DECL
#include "dpc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dpc/Transforms/Passes.h.inc"

} // namespace mlir::dpc

#endif // DPC_TRANSFORMS_PASSES_H
