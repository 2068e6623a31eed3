//===- DifferentiableOpInterface.h - Gradient rules -------------*- C++ -*-===//
//
// Declares the interface through which ops provide their gradient rule.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
#define DPC_INTERFACES_DIFFERENTIABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dpc/Interfaces/DifferentiableOpInterface.h.inc"

#endif // DPC_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
