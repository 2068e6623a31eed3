//===- Executor.cpp - Runs one function of dpc IR -------------------------===//
//
// The walk over a function's block and the dispatch table. Every op the
// interpreter knows appears once in `Executor::dispatch`, with the kernel
// that computes it; the formulas of the elementwise ops are written there
// too, next to their op. Results are then checked against their declared
// types and rounded (f16, bf16) or wrapped (integers) to them.
//
//===----------------------------------------------------------------------===//

#include "Executor.h"
#include "Collectives.h"
#include "Elementwise.h"
#include "Kernels.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

/// Bounds the nesting of func.call (recursion has no base case here: the
/// interpreter runs no control flow).
static constexpr unsigned kMaxCallDepth = 64;

static ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

static Type getElementType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

template <size_t N>
static std::array<int64_t, N> toArray(ArrayRef<int64_t> values) {
  std::array<int64_t, N> array;
  std::copy_n(values.begin(), N, array.begin());
  return array;
}

LogicalResult Executor::checkSupported(func::FuncOp func) {
  if (func.isExternal())
    return func.emitError("cannot interpret '")
           << func.getSymName() << "': it has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitError("the interpreter runs single-block functions only");
  for (Type type : func.getResultTypes())
    if (!getDTypeOf(type))
      return func.emitError("the interpreter does not support results of "
                            "type ")
             << type;
  for (Operation &op : func.front()) {
    if (op.getNumRegions() != 0)
      return op.emitError("the interpreter does not support ops with "
                          "regions");
    for (Type type : op.getResultTypes())
      if (!getDTypeOf(type))
        return op.emitError("the interpreter does not support values of "
                            "type ")
               << type;
  }
  return success();
}

FailureOr<SmallVector<Tensor>> Executor::call(func::FuncOp func,
                                              SmallVector<Tensor> arguments) {
  if (failed(checkSupported(func)))
    return failure();
  if (depth >= kMaxCallDepth)
    return func.emitError("calls nest deeper than ")
           << kMaxCallDepth << " (recursion?)";
  ++depth;
  llvm::scope_exit restoreDepth([&] { --depth; });

  Block &block = func.front();
  Frame frame;
  for (auto [argument, tensor] :
       llvm::zip_equal(block.getArguments(), arguments))
    frame.values[argument] = std::move(tensor);

  // Each value is freed after the op that uses it last.
  for (Operation &op : block)
    for (Value operand : op.getOperands())
      frame.lastUse[operand] = &op;

  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Tensor> results;
      for (Value operand : ret.getOperands())
        results.push_back(frame.take(operand, ret));
      return results;
    }
    if (failed(execute(&op, frame)))
      return failure();
    for (Value operand : op.getOperands())
      if (frame.lastUse.lookup(operand) == &op)
        frame.values.erase(operand);
  }
  return func.emitError("the function's block does not end in func.return");
}

Tensor Executor::Frame::take(Value value, Operation *user) {
  auto it = values.find(value);
  if (lastUse.lookup(value) == user &&
      llvm::count(user->getOperands(), value) == 1)
    return std::move(it->second);
  return it->second;
}

LogicalResult Executor::execute(Operation *op, Frame &frame) {
  FailureOr<SmallVector<Tensor, 1>> results = dispatch(op, frame);
  if (failed(results))
    return failure();
  if (results->size() != op->getNumResults())
    return op->emitError("interpreter bug: the kernel made ")
           << results->size() << " results";
  for (auto [value, tensor] : llvm::zip_equal(op->getResults(), *results)) {
    if (tensor.getShape() != getShape(value) ||
        tensor.getKind() !=
            getElementKind(getElementType(value), options.precision))
      return op->emitError("interpreter bug: the kernel's result does not "
                           "match type ")
             << value.getType();
    conformToType(tensor, getElementType(value), options.precision);
    frame.values[value] = std::move(tensor);
  }
  return success();
}

FailureOr<SmallVector<Tensor, 1>> Executor::dispatch(Operation *op,
                                                     Frame &frame) {
  using Results = SmallVector<Tensor, 1>;
  Precision precision = options.precision;
  auto in = [&](Value value) -> const Tensor & {
    return frame.values.find(value)->second;
  };
  auto operand = [&](unsigned i) -> const Tensor & {
    return in(op->getOperand(i));
  };
  // Operand `i` passed on as a result: moved where `op` reads it last.
  auto passOn = [&](unsigned i) { return frame.take(op->getOperand(i), op); };
  auto resultShape = [&]() { return getShape(op->getResult(0)); };
  auto one = [](FailureOr<Tensor> tensor) -> FailureOr<Results> {
    if (failed(tensor))
      return failure();
    Results results;
    results.push_back(std::move(*tensor));
    return results;
  };
  // An optional operand: null when absent.
  auto optional = [&](Value value) -> const Tensor * {
    return value ? &in(value) : nullptr;
  };
  auto many = [](FailureOr<SmallVector<Tensor>> tensors) -> FailureOr<Results> {
    if (failed(tensors))
      return failure();
    return Results(std::make_move_iterator(tensors->begin()),
                   std::make_move_iterator(tensors->end()));
  };
  // An elementwise op of two broadcast operands.
  auto binary = [&](auto fn) {
    return one(zipBroadcast(operand(0), operand(1), resultShape(),
                            operand(0).getKind(), fn));
  };
  // An elementwise op of one float operand.
  auto floatUnary = [&](auto fn) {
    return one(mapFloatElements(operand(0), fn));
  };
  auto reduction = [&](auto reduceOp, ReduceKind kind) {
    return one(reduce(operand(0), reduceOp.getDims(), kind, resultShape()));
  };
  auto pool2dParams = [](auto poolOp) {
    // Padding never wins a max, so max pooling has no count_include_pad.
    bool countIncludePad = false;
    if constexpr (!std::is_same_v<decltype(poolOp), MaxPool2DGradOp>)
      countIncludePad = poolOp.getCountIncludePad();
    return Pool2DParams{toArray<2>(poolOp.getKernelShape()),
                        toArray<2>(poolOp.getStrides()),
                        toArray<4>(poolOp.getPadding()),
                        toArray<2>(poolOp.getDilations()), countIncludePad};
  };
  auto conv2dParams = [](auto convOp) {
    return Conv2DParams{toArray<2>(convOp.getStrides()),
                        toArray<4>(convOp.getPadding()),
                        toArray<2>(convOp.getDilations()),
                        static_cast<int64_t>(convOp.getGroups())};
  };
  auto resizeParams = [](auto resizeOp) {
    return ResizeParams{resizeOp.getScales(), resizeOp.getMode(),
                        resizeOp.getCoordinateMode(),
                        resizeOp.getNearestMode()};
  };
  auto loss = [&](auto lossOp, bool fromLogits) {
    return one(classificationLoss(
        op, operand(0), operand(1), lossOp.getReduction(),
        static_cast<int64_t>(lossOp.getIgnoreIndex()), fromLogits));
  };

  return llvm::TypeSwitch<Operation *, FailureOr<Results>>(op)
      // Constants and calls.
      .Case([&](ConstantOp constant) {
        return one(materializeConstant(op, constant.getValue(), precision));
      })
      .Case([&](arith::ConstantOp constant) -> FailureOr<Results> {
        auto elements = dyn_cast<ElementsAttr>(constant.getValue());
        if (!elements)
          return op->emitError("the interpreter supports tensor constants "
                               "only");
        return one(materializeConstant(op, elements, precision));
      })
      .Case([&](func::CallOp callOp) -> FailureOr<Results> {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            callOp, callOp.getCalleeAttr());
        if (!callee)
          return callOp.emitError("no function named '")
                 << callOp.getCallee() << "'";
        SmallVector<Tensor> arguments;
        for (Value argument : callOp.getOperands())
          arguments.push_back(frame.take(argument, callOp));
        FailureOr<SmallVector<Tensor>> results =
            call(callee, std::move(arguments));
        if (failed(results))
          return failure();
        return Results(std::make_move_iterator(results->begin()),
                       std::make_move_iterator(results->end()));
      })

      // Elementwise unary ops.
      .Case([&](NegOp) { return one(mapElements(operand(0), Neg())); })
      .Case([&](AbsOp) { return one(mapElements(operand(0), Abs())); })
      .Case([&](ExpOp) {
        return one(
            mapFloatElements(operand(0), [](auto x) { return std::exp(x); }));
      })
      .Case([&](LogOp) {
        return one(
            mapFloatElements(operand(0), [](auto x) { return std::log(x); }));
      })
      .Case([&](SqrtOp) {
        return one(
            mapFloatElements(operand(0), [](auto x) { return std::sqrt(x); }));
      })
      .Case([&](RsqrtOp) {
        return one(mapFloatElements(
            operand(0), [](auto x) { return decltype(x)(1) / std::sqrt(x); }));
      })
      .Case([&](ReciprocalOp) {
        return one(mapFloatElements(operand(0),
                                    [](auto x) { return decltype(x)(1) / x; }));
      })
      .Case([&](TanhOp) {
        return one(
            mapFloatElements(operand(0), [](auto x) { return std::tanh(x); }));
      })
      .Case([&](SigmoidOp) {
        return one(mapFloatElements(operand(0), [](auto x) {
          using T = decltype(x);
          return T(1) / (T(1) + std::exp(-x));
        }));
      })
      .Case([&](ReluOp) {
        return one(mapFloatElements(operand(0), [](auto x) {
          // NaN stays NaN, as in PyTorch.
          return std::isnan(x) || x > 0 ? x : decltype(x)(0);
        }));
      })
      .Case([&](ErfOp) {
        return one(
            mapFloatElements(operand(0), [](auto x) { return std::erf(x); }));
      })
      .Case([&](NotOp) { return one(mapElements(operand(0), Not())); })
      .Case(
          [&](SinOp) { return floatUnary([](auto x) { return std::sin(x); }); })
      .Case(
          [&](CosOp) { return floatUnary([](auto x) { return std::cos(x); }); })
      .Case(
          [&](TanOp) { return floatUnary([](auto x) { return std::tan(x); }); })
      .Case([&](AsinOp) {
        return floatUnary([](auto x) { return std::asin(x); });
      })
      .Case([&](AcosOp) {
        return floatUnary([](auto x) { return std::acos(x); });
      })
      .Case([&](AtanOp) {
        return floatUnary([](auto x) { return std::atan(x); });
      })
      .Case([&](SinhOp) {
        return floatUnary([](auto x) { return std::sinh(x); });
      })
      .Case([&](CoshOp) {
        return floatUnary([](auto x) { return std::cosh(x); });
      })
      .Case([&](AsinhOp) {
        return floatUnary([](auto x) { return std::asinh(x); });
      })
      .Case([&](AcoshOp) {
        return floatUnary([](auto x) { return std::acosh(x); });
      })
      .Case([&](AtanhOp) {
        return floatUnary([](auto x) { return std::atanh(x); });
      })
      .Case([&](FloorOp) {
        return floatUnary([](auto x) { return std::floor(x); });
      })
      .Case([&](CeilOp) {
        return floatUnary([](auto x) { return std::ceil(x); });
      })
      // Halves to even: the default rounding mode.
      .Case([&](RoundOp) {
        return floatUnary([](auto x) { return std::nearbyint(x); });
      })

      // Elementwise binary ops, broadcasting.
      .Case([&](AddOp) { return binary(Add()); })
      .Case([&](SubOp) { return binary(Sub()); })
      .Case([&](MulOp) { return binary(Mul()); })
      .Case([&](DivOp) -> FailureOr<Results> {
        const Tensor &divisor = operand(1);
        if (!divisor.isFloat())
          for (int64_t value : divisor.getData<int64_t>())
            if (value == 0)
              return op->emitError("integer division by zero");
        return binary(Div());
      })
      .Case([&](ModOp mod) -> FailureOr<Results> {
        const Tensor &divisor = operand(1);
        if (!divisor.isFloat())
          for (int64_t value : divisor.getData<int64_t>())
            if (value == 0)
              return op->emitError("integer remainder of a division by zero");
        return binary(Mod{mod.getFloorMod()});
      })
      .Case([&](PowOp) {
        return binary([](auto x, auto y) { return std::pow(x, y); });
      })
      .Case([&](MaxOp) { return binary(Max()); })
      .Case([&](MinOp) { return binary(Min()); })
      .Case([&](AndOp) { return binary(And()); })
      .Case([&](OrOp) { return binary(Or()); })
      .Case([&](CompareOp compare) {
        ComparePredicate predicate = compare.getPredicate();
        return one(zipBroadcast(operand(0), operand(1), resultShape(),
                                ElementKind::I64, [predicate](auto x, auto y) {
                                  switch (predicate) {
                                  case ComparePredicate::eq:
                                    return x == y;
                                  case ComparePredicate::ne:
                                    return x != y;
                                  case ComparePredicate::lt:
                                    return x < y;
                                  case ComparePredicate::le:
                                    return x <= y;
                                  case ComparePredicate::gt:
                                    return x > y;
                                  case ComparePredicate::ge:
                                    return x >= y;
                                  }
                                  return false;
                                }));
      })
      .Case([&](SelectOp) {
        return one(
            selectBroadcast(operand(0), operand(1), operand(2), resultShape()));
      })
      .Case([&](CastOp castOp) {
        return one(castElements(op, operand(0),
                                getElementType(castOp.getResult()), precision));
      })
      // One device holds the whole value: a change of layout is nothing.
      .Case([&](ReshardOp) { return one(passOn(0)); })
      // One process runs every stage.
      .Case([&](TransferOp) { return one(passOn(0)); })
      .Case([&](SendOp) -> FailureOr<Results> {
        if (failed(runPointToPoint(op, &operand(0), rank)))
          return failure();
        return Results();
      })
      .Case([&](RecvOp) { return one(runPointToPoint(op, nullptr, rank)); })
      // Collectives complete where they start: a wait has nothing left to do.
      .Case([&](WaitOp) { return one(passOn(0)); })
      .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, AllToAllOp, AllSliceOp>(
          [&](Operation *) {
            return one(runCollective(op, operand(0), rank, collectivesRun++));
          })

      // Contractions and pooling.
      .Case([&](MatmulOp) {
        return one(matmul(operand(0), operand(1), resultShape()));
      })
      .Case([&](Conv2DOp conv) {
        Conv2DParams params = conv2dParams(conv);
        const Tensor *bias = conv.getBias() ? &in(conv.getBias()) : nullptr;
        return one(conv2d(operand(0), operand(1), bias, params, resultShape()));
      })
      .Case([&](ConvTranspose2DOp conv) {
        Conv2DParams params = conv2dParams(conv);
        const Tensor *bias = conv.getBias() ? &in(conv.getBias()) : nullptr;
        return one(convTranspose2d(operand(0), operand(1), bias, params,
                                   resultShape()));
      })
      .Case([&](Conv2DFilterGradOp grad) {
        Conv2DParams params = conv2dParams(grad);
        return one(
            conv2dFilterGrad(operand(0), operand(1), params, resultShape()));
      })
      .Case([&](MaxPool2DOp pool) {
        return one(maxPool2d(operand(0), pool2dParams(pool), resultShape()));
      })
      .Case([&](AvgPool2DOp pool) {
        return one(avgPool2d(operand(0), pool2dParams(pool), resultShape()));
      })

      .Case([&](MaxPool2DGradOp grad) {
        return one(maxPool2dGrad(operand(0), operand(1), pool2dParams(grad)));
      })
      .Case([&](AvgPool2DGradOp grad) {
        return one(
            avgPool2dGrad(operand(0), pool2dParams(grad), resultShape()));
      })
      .Case([&](ResizeOp r) {
        return one(resize(operand(0), resizeParams(r), resultShape()));
      })
      .Case([&](ResizeGradOp r) {
        return one(resizeGrad(operand(0), resizeParams(r), resultShape()));
      })

      // Reductions and normalizations.
      .Case([&](ReduceSumOp r) { return reduction(r, ReduceKind::Sum); })
      .Case([&](ReduceMeanOp r) { return reduction(r, ReduceKind::Mean); })
      .Case([&](ReduceMaxOp r) { return reduction(r, ReduceKind::Max); })
      .Case([&](ReduceMinOp r) { return reduction(r, ReduceKind::Min); })
      .Case([&](ArgMaxOp arg) {
        return one(argReduce(operand(0), arg.getAxis(), /*largest=*/true,
                             arg.getSelectLastIndex(), resultShape()));
      })
      .Case([&](TopKOp top) -> FailureOr<Results> {
        auto [values, indices] = topK(operand(0), top.getKAttr().getInt());
        Results results;
        results.push_back(std::move(values));
        results.push_back(std::move(indices));
        return results;
      })
      .Case([&](ArgMinOp arg) {
        return one(argReduce(operand(0), arg.getAxis(), /*largest=*/false,
                             arg.getSelectLastIndex(), resultShape()));
      })
      .Case([&](SoftmaxOp s) {
        return one(softmax(operand(0), s.getAxis(), /*logarithm=*/false));
      })
      .Case([&](LogSoftmaxOp s) {
        return one(softmax(operand(0), s.getAxis(), /*logarithm=*/true));
      })
      .Case([&](LayerNormOp norm) {
        const Tensor *bias = norm.getBias() ? &in(norm.getBias()) : nullptr;
        return one(layerNorm(operand(0), operand(1), bias, norm.getAxis(),
                             norm.getEpsilon().convertToFloat()));
      })
      .Case([&](LstmOp layer) -> FailureOr<Results> {
        return many(lstm(op, operand(0), operand(1), operand(2), operand(3),
                         operand(4), operand(5), optional(layer.getLengths()),
                         layer.getReverse()));
      })
      .Case([&](LstmGradOp grad) -> FailureOr<Results> {
        return many(lstmGrad(op, operand(0), operand(1), operand(2), operand(3),
                             operand(4), operand(5), operand(6), operand(7),
                             operand(8), optional(grad.getLengths()),
                             grad.getReverse()));
      })
      .Case([&](GruOp layer) -> FailureOr<Results> {
        return many(gru(op, operand(0), operand(1), operand(2), operand(3),
                        operand(4), optional(layer.getLengths()),
                        layer.getReverse(), layer.getLinearBeforeReset()));
      })
      .Case([&](GruGradOp grad) -> FailureOr<Results> {
        return many(gruGrad(op, operand(0), operand(1), operand(2), operand(3),
                            operand(4), operand(5), operand(6),
                            optional(grad.getLengths()), grad.getReverse(),
                            grad.getLinearBeforeReset()));
      })
      .Case([&](BatchNormOp norm) -> FailureOr<Results> {
        FailureOr<SmallVector<Tensor>> results =
            batchNorm(op, operand(0), operand(1), operand(2), operand(3),
                      operand(4), norm.getEpsilon().convertToFloat(),
                      norm.getMomentum().convertToFloat(), norm.getTraining());
        if (failed(results))
          return failure();
        return Results(std::make_move_iterator(results->begin()),
                       std::make_move_iterator(results->end()));
      })

      // Data movement.
      .Case([&](ReshapeOp) {
        Tensor result = passOn(0);
        result.setShape(resultShape());
        return one(std::move(result));
      })
      .Case([&](BroadcastToOp) {
        return one(broadcastTo(operand(0), resultShape()));
      })
      .Case([&](TransposeOp t) {
        return one(transpose(operand(0), t.getPermutation()));
      })
      .Case([&](ConcatOp c) {
        SmallVector<const Tensor *> inputs;
        for (Value input : c.getInputs())
          inputs.push_back(&in(input));
        return one(concat(inputs, c.getAxis(), resultShape()));
      })
      .Case([&](SliceOp s) {
        return one(
            slice(operand(0), s.getStart(), s.getStride(), resultShape()));
      })
      .Case([&](SplitOp s) -> FailureOr<Results> {
        SmallVector<int64_t> sizes;
        for (Value result : s.getResults())
          sizes.push_back(getShape(result)[s.getAxis()]);
        SmallVector<Tensor> pieces = split(operand(0), s.getAxis(), sizes);
        return Results(std::make_move_iterator(pieces.begin()),
                       std::make_move_iterator(pieces.end()));
      })
      .Case([&](GatherOp g) {
        return one(
            gather(op, operand(0), operand(1), g.getAxis(), resultShape()));
      })
      .Case([&](GatherElementsOp g) {
        return one(gatherElements(op, operand(0), operand(1), g.getAxis()));
      })
      .Case([&](ScatterAddElementsOp s) {
        return one(scatterAddElements(op, operand(0), operand(1),
                                      static_cast<int64_t>(s.getAxis()),
                                      resultShape()));
      })
      .Case([&](ScatterAddOp s) {
        return one(scatterAdd(op, operand(0), operand(1),
                              static_cast<int64_t>(s.getAxis()),
                              resultShape()));
      })
      .Case([&](PadOp p) {
        return one(pad(operand(0), p.getLow(), p.getInterior(),
                       p.getValue().convertToDouble(), resultShape()));
      })

      // Regularization and losses.
      .Case([&](DropoutOp d) {
        return one(dropout(operand(0), operand(1).getData<int64_t>()[0],
                           operand(2).getData<int64_t>()[0],
                           d.getRatio().convertToDouble(),
                           static_cast<int64_t>(d.getStream())));
      })
      .Case([&](SoftmaxCrossEntropyOp l) { return loss(l, true); })
      .Case([&](NllLossOp l) { return loss(l, false); })

      .Default([&](Operation *) -> FailureOr<Results> {
        return op->emitError("the interpreter does not support '")
               << op->getName() << "'";
      });
}
