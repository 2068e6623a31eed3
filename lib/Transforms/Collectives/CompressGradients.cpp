//===- CompressGradients.cpp - The -dpc-compress-gradients pass -----------===//
//
// Data-parallel gradient reductions carry as many bytes as the model has
// parameters, every step. Sent as bf16 or fp16 they carry half: each is
// cast down before its collective and back up after, so the optimizer
// still accumulates in fp32.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Passes.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_COMPRESSGRADIENTS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// The plan names its data-parallel mesh axis so (writePlanMesh).
constexpr StringLiteral kDataAxis = "dp";

/// Whether `op` reduces a floating-point tensor wider than `narrow` over a
/// group that includes the data-parallel axis: a gradient reduction.
bool isGradientReduction(Operation *op, FloatType narrow) {
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  auto kind = op->getAttrOfType<ReductionKindAttr>("kind");
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!axes || !kind || !type || type.getRank() == 0)
    return false;
  auto element = dyn_cast<FloatType>(type.getElementType());
  return element && element.getWidth() > narrow.getWidth() &&
         (kind.getValue() == ReductionKind::sum ||
          kind.getValue() == ReductionKind::mean) &&
         llvm::any_of(axes, [](Attribute axis) {
           return cast<StringAttr>(axis).getValue() == kDataAxis;
         });
}

struct CompressGradientsPass
    : public dpc::impl::CompressGradientsBase<CompressGradientsPass> {
  using CompressGradientsBase::CompressGradientsBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType narrow;
    if (compression == "none")
      return;
    if (compression == "bf16")
      narrow = BFloat16Type::get(context);
    else if (compression == "fp16")
      narrow = Float16Type::get(context);
    else {
      emitError(getOperation().getLoc(), "--grad-compression=")
          << compression.getValue()
          << " is not a compression: none, bf16 or fp16 (top-k with error "
             "feedback is not built yet)";
      return signalPassFailure();
    }
    getOperation().walk([&](Operation *op) {
      if (!isa<AllReduceOp, ReduceScatterOp>(op) ||
          !isGradientReduction(op, narrow))
        return;
      OpBuilder builder(op);
      Value input = op->getOperand(0);
      auto inputType = cast<RankedTensorType>(input.getType());
      op->setOperand(0, CastOp::create(builder, op->getLoc(),
                                       inputType.clone(narrow), input));
      Value result = op->getResult(0);
      auto wide = cast<RankedTensorType>(result.getType());
      result.setType(wide.clone(narrow));
      builder.setInsertionPointAfter(op);
      auto widened = CastOp::create(builder, op->getLoc(), wide, result);
      result.replaceAllUsesExcept(widened, widened);
    });
  }
};

} // namespace
