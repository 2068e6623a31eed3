//===- ReductionKind.cpp - How partial results combine --------------------===//

#include "dpc/Interfaces/ReductionKind.h"

#include "llvm/ADT/StringSwitch.h"

#include "dpc/Interfaces/ReductionKind.cpp.inc"
