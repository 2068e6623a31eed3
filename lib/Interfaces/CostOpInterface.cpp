//===- CostOpInterface.cpp - What an op costs to execute ------------------===//

#include "dpc/Interfaces/CostOpInterface.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

double mlir::dpc::getNumElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 1.0;
  return static_cast<double>(tensor.getNumElements());
}

double mlir::dpc::getSizeInBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0.0;
  unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
  return getNumElements(type) * ((bits + 7) / 8);
}

double mlir::dpc::getOperandAndResultBytes(Operation *op) {
  double bytes = 0.0;
  for (Type type : op->getOperandTypes())
    bytes += getSizeInBytes(type);
  for (Type type : op->getResultTypes())
    bytes += getSizeInBytes(type);
  return bytes;
}

#include "dpc/Interfaces/CostOpInterface.cpp.inc"
