//===- ReductionKind.h - How partial results combine ------------*- C++ -*-===//

#ifndef DPC_INTERFACES_REDUCTIONKIND_H
#define DPC_INTERFACES_REDUCTIONKIND_H

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <optional>

#include "dpc/Interfaces/ReductionKind.h.inc"

#endif // DPC_INTERFACES_REDUCTIONKIND_H
