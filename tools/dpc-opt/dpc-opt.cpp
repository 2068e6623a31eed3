//===- dpc-opt.cpp - The dpc compiler driver ------------------------------===//
//
// Like mlir-opt, with the dpc dialect and passes registered. Later stages
// (the ONNX importer, training-step construction, planning) hook in here.
//
//===----------------------------------------------------------------------===//

#include "dpc/InitAllDialects.h"
#include "dpc/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::dpc::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::dpc::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dpc: distributed training compiler driver\n", registry));
}
