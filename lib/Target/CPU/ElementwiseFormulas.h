//===- ElementwiseFormulas.h - Elementwise ops as C++ expressions -*- C++ -*-=//
//
// The scalar formula of each elementwise op, as the C++ the CPU backend
// puts in a loop body: the same arithmetic as the interpreter's
// (lib/Interpreter/Elementwise.h), so that compiled and interpreted steps
// agree to the last bit where the operations are the same. The exceptions
// are single-precision exp, erf, tanh and sigmoid on the CPU, which use
// SimdMath.h (within 2-4 units in the last place of libm's) so that their
// loops vectorize.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_TARGET_CPU_ELEMENTWISEFORMULAS_H
#define DPC_LIB_TARGET_CPU_ELEMENTWISEFORMULAS_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::dpc {

/// The C++ type that holds elements of `type`: float (f32, and f16/bf16
/// rounded), double, or int64_t (every integer type).
std::string getStorageCType(Type type);

/// Whether `op` is elementwise with a formula here.
bool hasScalarFormula(Operation *op);

/// The expression of `op`'s result element from its operands' elements,
/// named `operands` (C++ expressions of their storage types). With
/// `simdMath`, float exp, erf, tanh and sigmoid call dpc::simd's
/// vectorizable versions instead of libm's.
FailureOr<std::string> getScalarFormula(Operation *op,
                                        ArrayRef<std::string> operands,
                                        bool simdMath = false);

} // namespace mlir::dpc

#endif // DPC_LIB_TARGET_CPU_ELEMENTWISEFORMULAS_H
