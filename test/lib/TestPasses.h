//===- TestPasses.h - Passes that expose analyses to tests ------*- C++ -*-===//

#ifndef DPC_TEST_TESTPASSES_H
#define DPC_TEST_TESTPASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::dpc {

#define GEN_PASS_DECL
#include "TestPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

} // namespace mlir::dpc

#endif // DPC_TEST_TESTPASSES_H
