//===- Optimizers.h - Parameter update rules --------------------*- C++ -*-===//
//
// The update rules of the optimizers @train_step can apply, as dpc ops on
// one parameter at a time. They follow torch.optim's definitions, so that
// parameters after a step match PyTorch's.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_TRANSFORMS_AUTODIFF_OPTIMIZERS_H
#define DPC_LIB_TRANSFORMS_AUTODIFF_OPTIMIZERS_H

#include "mlir/IR/Builders.h"

#include <string>

namespace mlir::dpc {

struct OptimizerConfig {
  std::string kind = "sgd";
  double momentum = 0.9;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weightDecay = 0.0;
};

/// An optimizer: which state slots each parameter has, and its update.
class Optimizer {
public:
  static FailureOr<Optimizer> get(const OptimizerConfig &config, Location loc);

  /// Names of the per-parameter state tensors ("momentum_buffer", ...).
  ArrayRef<std::string> getSlots() const { return slots; }

  /// Emits the update of `param` with gradient `grad`, learning rate `lr`
  /// and step number `step` (scalar f32, from 1); `state` holds the slots
  /// and is replaced by their new values. Returns the new parameter.
  Value update(OpBuilder &builder, Location loc, Value param, Value grad,
               Value lr, Value step, SmallVectorImpl<Value> &state) const;

private:
  explicit Optimizer(OptimizerConfig config) : config(std::move(config)) {}

  OptimizerConfig config;
  SmallVector<std::string> slots;
};

} // namespace mlir::dpc

#endif // DPC_LIB_TRANSFORMS_AUTODIFF_OPTIMIZERS_H
