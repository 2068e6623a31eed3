//===- CostOpInterface.h - What an op costs to execute ----------*- C++ -*-===//
//
// Declares the cost interface and the shape helpers its default methods use.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_COSTOPINTERFACE_H
#define DPC_INTERFACES_COSTOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::dpc {

/// Number of elements of a statically shaped tensor type; 1 for scalars and
/// non-tensor types.
double getNumElements(Type type);

/// Size in bytes of a statically shaped tensor type (i1 counts as one byte).
double getSizeInBytes(Type type);

/// Sum of the sizes of all tensor operands and results of `op`.
double getOperandAndResultBytes(Operation *op);

} // namespace mlir::dpc

#include "dpc/Interfaces/CostOpInterface.h.inc"

#endif // DPC_INTERFACES_COSTOPINTERFACE_H
