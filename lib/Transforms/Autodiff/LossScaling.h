//===- LossScaling.h - Dynamic loss scaling for fp16 ------------*- C++ -*-===//
//
// fp16 gradients underflow unless the loss is scaled up before the
// backward pass. The scale adapts as torch.cuda.amp.GradScaler's does: a
// step whose gradients overflow is skipped and halves the scale; after
// `growthInterval` good steps in a row the scale doubles.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_TRANSFORMS_AUTODIFF_LOSSSCALING_H
#define DPC_LIB_TRANSFORMS_AUTODIFF_LOSSSCALING_H

#include "mlir/IR/Builders.h"

namespace mlir::dpc {

/// The loss-scale state after one step.
struct LossScaleUpdate {
  /// i1 scalar: every gradient is finite, so the step applies.
  Value finite;
  Value scale, growthTracker;
  /// f32 scalar metric: 1 when the step was skipped.
  Value skipped;
};

/// Updates the f32 scalars `scale` and `growthTracker` from the sum of the
/// squares of the (unscaled) gradients, which is not finite exactly when
/// some gradient element overflowed.
LossScaleUpdate updateLossScale(OpBuilder &b, Location loc, Value sumOfSquares,
                                Value scale, Value growthTracker,
                                int64_t growthInterval);

/// `updated` when `finite`, else `old`: a skipped step changes nothing.
Value keepIfFinite(OpBuilder &b, Location loc, Value finite, Value updated,
                   Value old);

} // namespace mlir::dpc

#endif // DPC_LIB_TRANSFORMS_AUTODIFF_LOSSSCALING_H
