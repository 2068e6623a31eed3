//===- InitAllPasses.h - Every pass dpc tools offer -------------*- C++ -*-===//

#ifndef DPC_INITALLPASSES_H
#define DPC_INITALLPASSES_H

#include "dpc/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::dpc {

/// Registers dpc's passes and the upstream ones useful on dpc programs.
inline void registerAllPasses() {
  registerDpcPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
}

} // namespace mlir::dpc

#endif // DPC_INITALLPASSES_H
