//===- LossScaling.cpp - Dynamic loss scaling for fp16 --------------------===//

#include "LossScaling.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

using namespace mlir;
using namespace mlir::dpc;

namespace {
Value scalar(OpBuilder &b, Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}
} // namespace

Value mlir::dpc::keepIfFinite(OpBuilder &b, Location loc, Value finite,
                              Value updated, Value old) {
  return SelectOp::create(b, loc, updated.getType(), finite, updated, old);
}

LossScaleUpdate mlir::dpc::updateLossScale(OpBuilder &b, Location loc,
                                           Value sumOfSquares, Value scale,
                                           Value growthTracker,
                                           int64_t growthInterval) {
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  auto i1 = RankedTensorType::get({}, b.getI1Type());
  LossScaleUpdate update;
  // x - x is 0 for every finite x and NaN for infinities and NaN.
  Value difference = SubOp::create(b, loc, f32, sumOfSquares, sumOfSquares);
  update.finite = CompareOp::create(b, loc, i1, ComparePredicate::eq,
                                    difference, scalar(b, loc, 0.0));
  Value good = AddOp::create(b, loc, f32, growthTracker, scalar(b, loc, 1.0));
  Value grow = CompareOp::create(b, loc, i1, ComparePredicate::ge, good,
                                 scalar(b, loc, growthInterval));
  Value doubled = MulOp::create(b, loc, f32, scale, scalar(b, loc, 2.0));
  Value halved = MulOp::create(b, loc, f32, scale, scalar(b, loc, 0.5));
  Value zero = scalar(b, loc, 0.0);
  update.scale = SelectOp::create(
      b, loc, f32, update.finite,
      SelectOp::create(b, loc, f32, grow, doubled, scale), halved);
  update.growthTracker =
      SelectOp::create(b, loc, f32, update.finite,
                       SelectOp::create(b, loc, f32, grow, zero, good), zero);
  update.skipped =
      SelectOp::create(b, loc, f32, update.finite, zero, scalar(b, loc, 1.0));
  return update;
}
