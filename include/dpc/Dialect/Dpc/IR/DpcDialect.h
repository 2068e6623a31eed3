//===- DpcDialect.h - The dpc dialect ---------------------------*- C++ -*-===//
//
// Declares the dpc dialect and the helpers that find parameters, state and
// inputs among a function's arguments.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_DIALECT_DPC_IR_DPCDIALECT_H
#define DPC_DIALECT_DPC_IR_DPCDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "dpc/Dialect/Dpc/IR/DpcOpsDialect.h.inc"

namespace mlir::dpc {

/// What a function argument of a dpc graph holds.
enum class ArgumentRole { Parameter, State, Input, Hyper, Other };

/// The role of argument `index` of `func`, read from its `dpc.*` attribute.
ArgumentRole getArgumentRole(FunctionOpInterface func, unsigned index);

/// The name of argument `index`: its parameter, state, input, optimizer
/// state or hyperparameter name (empty when it has none).
StringRef getArgumentName(FunctionOpInterface func, unsigned index);

/// The name of result `index`: its output, parameter, state or optimizer
/// state name, or `grad:<param>` for a gradient (empty when it has none).
std::string getResultName(FunctionOpInterface func, unsigned index);

} // namespace mlir::dpc

#endif // DPC_DIALECT_DPC_IR_DPCDIALECT_H
