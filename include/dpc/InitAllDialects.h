//===- InitAllDialects.h - Every dialect dpc tools load ---------*- C++ -*-===//

#ifndef DPC_INITALLDIALECTS_H
#define DPC_INITALLDIALECTS_H

#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::dpc {

/// Registers dpc and the upstream dialects its programs use (`shard`: the
/// plan exported for upstream tools).
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<DpcDialect, arith::ArithDialect, func::FuncDialect,
                  shard::ShardDialect, tensor::TensorDialect>();
  func::registerInlinerExtension(registry);
}

} // namespace mlir::dpc

#endif // DPC_INITALLDIALECTS_H
