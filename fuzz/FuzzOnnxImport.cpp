//===- FuzzOnnxImport.cpp - The ONNX importer on arbitrary bytes ----------===//
//
// Any file must import or fail with diagnostics: never crash, hang or
// allocate what its data does not back. An imported module must verify.
//
//===----------------------------------------------------------------------===//

#include "ScratchFile.h"

#include "dpc/Conversion/OnnxToDpc/OnnxToDpc.h"
#include "dpc/InitAllDialects.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry;
    mlir::dpc::registerAllDialects(*r);
    return r;
  }();
  std::string path = dpc::fuzz::writeScratchFile(data, size, "model.onnx");
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Errors are the expected outcome; only crashes and broken invariants
  // count.
  context.getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });
  auto imported =
      mlir::dpc::importOnnxFile(&context, path, mlir::dpc::OnnxImportOptions());
  if (mlir::succeeded(imported) &&
      mlir::failed(mlir::verify(*imported->module)))
    std::abort(); // The importer built IR that does not verify.
  return 0;
}
