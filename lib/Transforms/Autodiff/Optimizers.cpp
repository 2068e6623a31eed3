//===- Optimizers.cpp - Parameter update rules ----------------------------===//
//
// SGD (with L2 weight decay), momentum (PyTorch's form: the buffer
// accumulates gradients, Nesterov looks ahead), Adam (bias-corrected, L2
// weight decay) and AdamW (decoupled weight decay).
//
//===----------------------------------------------------------------------===//

#include "Optimizers.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

using namespace mlir;
using namespace mlir::dpc;

FailureOr<Optimizer> Optimizer::get(const OptimizerConfig &config,
                                    Location loc) {
  Optimizer optimizer(config);
  if (config.kind == "sgd")
    return optimizer;
  if (config.kind == "momentum") {
    optimizer.slots = {"momentum_buffer"};
    return optimizer;
  }
  if (config.kind == "adam" || config.kind == "adamw") {
    optimizer.slots = {"exp_avg", "exp_avg_sq"};
    return optimizer;
  }
  return emitError(loc, "unknown optimizer '")
         << config.kind << "'; use sgd, momentum, adam or adamw";
}

namespace {
/// Elementwise arithmetic on tensors and scalars of one element type.
struct Arith {
  OpBuilder &b;
  Location loc;

  Value scalar(double value, Value like) {
    auto type = RankedTensorType::get(
        {}, cast<RankedTensorType>(like.getType()).getElementType());
    return ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type,
                               FloatAttr::get(type.getElementType(), value)));
  }
  template <typename OpTy> Value binary(Value lhs, Value rhs) {
    auto a = cast<RankedTensorType>(lhs.getType());
    auto c = cast<RankedTensorType>(rhs.getType());
    Value larger = a.getRank() >= c.getRank() ? lhs : rhs;
    return OpTy::create(b, loc, larger.getType(), lhs, rhs);
  }
  Value add(Value x, Value y) { return binary<AddOp>(x, y); }
  Value sub(Value x, Value y) { return binary<SubOp>(x, y); }
  Value mul(Value x, Value y) { return binary<MulOp>(x, y); }
  Value div(Value x, Value y) { return binary<DivOp>(x, y); }
  Value pow(Value x, Value y) { return binary<PowOp>(x, y); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x); }
  Value convert(Value x, Type element) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == element)
      return x;
    return CastOp::create(b, loc, type.clone(element), x);
  }
};
} // namespace

Value Optimizer::update(OpBuilder &builder, Location loc, Value param,
                        Value grad, Value lr, Value step,
                        SmallVectorImpl<Value> &state) const {
  Arith a{builder, loc};
  const OptimizerConfig &c = config;
  bool decoupled = c.kind == "adamw";
  if (c.weightDecay != 0.0 && !decoupled)
    grad = a.add(grad, a.mul(param, a.scalar(c.weightDecay, param)));

  if (c.kind == "sgd")
    return a.sub(param, a.mul(grad, lr));

  if (c.kind == "momentum") {
    // buf = momentum * buf + grad (a zero buffer makes step 1 buf = grad).
    Value buffer = a.add(a.mul(state[0], a.scalar(c.momentum, param)), grad);
    state[0] = buffer;
    Value direction =
        c.nesterov ? a.add(grad, a.mul(buffer, a.scalar(c.momentum, param)))
                   : buffer;
    return a.sub(param, a.mul(direction, lr));
  }

  // Adam and AdamW.
  if (decoupled && c.weightDecay != 0.0)
    param = a.mul(param, a.sub(a.scalar(1.0, param),
                               a.mul(lr, a.scalar(c.weightDecay, param))));
  Value m = a.add(a.mul(state[0], a.scalar(c.beta1, param)),
                  a.mul(grad, a.scalar(1.0 - c.beta1, param)));
  Value v = a.add(a.mul(state[1], a.scalar(c.beta2, param)),
                  a.mul(a.mul(grad, grad), a.scalar(1.0 - c.beta2, param)));
  state[0] = m;
  state[1] = v;
  // The bias corrections 1 - beta^step are computed in f64, as PyTorch
  // does on the host: beta2 = 0.999 rounded to f32 is 1.3e-5 of 1 - beta2
  // off, which would show in every update of the first steps.
  Type f64 = builder.getF64Type();
  Type element = cast<RankedTensorType>(param.getType()).getElementType();
  Value step64 = a.convert(step, f64);
  Value one = a.scalar(1.0, step64);
  Value correction1 = a.sub(one, a.pow(a.scalar(c.beta1, step64), step64));
  Value correction2 = a.sub(one, a.pow(a.scalar(c.beta2, step64), step64));
  // As torch.optim.Adam: p -= lr / c1 * m / (sqrt(v) / sqrt(c2) + eps).
  Value denominator =
      a.add(a.div(a.sqrt(v), a.convert(a.sqrt(correction2), element)),
            a.scalar(c.epsilon, param));
  Value stepSize = a.convert(a.div(a.convert(lr, f64), correction1), element);
  return a.sub(param, a.mul(a.div(m, denominator), stepSize));
}
