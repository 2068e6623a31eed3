//===- MixedPrecision.cpp - Low-precision compute, f32 where it matters --===//
//
// Rewrites a model so that its ops compute in bf16 or f16 while the ops
// marked KeepsFullPrecision compute in f32. Only f32 values change; f64 and
// integer values are left as they are.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

struct MixedPrecisionPass
    : public dpc::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto function = module.lookupSymbol<func::FuncOp>(functionName);
    if (!function) {
      module.emitError("no function @") << functionName << " to rewrite";
      return signalPassFailure();
    }
    Builder b(&getContext());
    Type low;
    if (precision == "bf16")
      low = b.getBF16Type();
    else if (precision == "fp16")
      low = b.getF16Type();
    else {
      module.emitError("unknown precision '")
          << precision << "'; use bf16 or fp16";
      return signalPassFailure();
    }
    rewrite(function, low);
  }

  void rewrite(func::FuncOp function, Type low);
};

} // namespace

void MixedPrecisionPass::rewrite(func::FuncOp function, Type low) {
  Type f32 = Float32Type::get(&getContext());
  OpBuilder builder(&getContext());
  // Whether `type` is a tensor this pass may retype.
  auto isMixed = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor &&
           (tensor.getElementType() == f32 || tensor.getElementType() == low);
  };
  // Each value is cast to each element type once, right after its
  // definition, so a parameter read by many ops has one cast.
  DenseMap<std::pair<Value, Type>, Value> casts;
  auto castTo = [&](Value value, Type element) -> Value {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() == element)
      return value;
    Value &cached = casts[{value, element}];
    if (!cached) {
      builder.setInsertionPointAfterValue(value);
      cached =
          CastOp::create(builder, value.getLoc(), type.clone(element), value);
    }
    return cached;
  };

  Block &body = function.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    // Constants keep their literal type; their users cast them.
    if (!isa<DpcDialect>(op.getDialect()) || isa<ConstantOp>(op) ||
        isa<CastOp>(op))
      continue;
    Type element =
        op.hasTrait<mlir::dpc::OpTrait::KeepsFullPrecision>() ? f32 : low;
    for (OpOperand &operand : op.getOpOperands())
      if (isMixed(operand.get().getType()))
        operand.set(castTo(operand.get(), element));
    for (OpResult result : op.getResults())
      if (isMixed(result.getType()))
        result.setType(cast<RankedTensorType>(result.getType()).clone(element));
  }
  // Casts to f32 (one-hot masks, integer-to-float) produce the op's
  // precision for their users, which the loop above cast as needed.
  Operation *terminator = body.getTerminator();
  for (auto [operand, type] :
       llvm::zip(terminator->getOpOperands(), function.getResultTypes()))
    operand.set(
        castTo(operand.get(), cast<RankedTensorType>(type).getElementType()));
}
