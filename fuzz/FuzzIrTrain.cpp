//===- FuzzIrTrain.cpp - The IR parser, verifier and --train --------------===//
//
// Any text must parse and verify or fail with diagnostics; a module that
// verifies must go through the training pipeline (loss, backward pass,
// AdamW with clipping) or fail with diagnostics, and what it builds must
// verify.
//
//===----------------------------------------------------------------------===//

#include "dpc/InitAllDialects.h"
#include "dpc/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry;
    mlir::dpc::registerAllDialects(*r);
    return r;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });
  // MLIR's lexer reads up to a terminating null, as every file buffer
  // has (dpc-opt reads files so); libFuzzer's bytes have none.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text,
                                              mlir::ParserConfig(&context));
  if (!module)
    return 0;
  mlir::dpc::TrainPipelineOptions options;
  options.optimizer = "adamw";
  options.weightDecay = 0.01;
  options.maxGradNorm = 1.0;
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  mlir::dpc::addTrainPipeline(pm, options);
  // The pass manager verifies after each pass; a failure is a diagnostic.
  (void)pm.run(*module);
  return 0;
}
