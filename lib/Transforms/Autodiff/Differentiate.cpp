//===- Differentiate.cpp - Reverse-mode gradient of a model's loss --------===//
//
// Builds @<f>_backward (@forward_backward by default): the forward function
// followed by its adjoint.
// Only ops that both depend on a parameter and reach the loss are
// differentiated, in reverse order, each through its own gradient rule
// (DifferentiableOpInterface); this pass knows no op by name.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_DIFFERENTIATE
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

static bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Index of the result to minimize: the one named `name`, or the only
/// scalar floating-point result.
static FailureOr<unsigned> findLoss(func::FuncOp func, StringRef name) {
  std::optional<unsigned> found;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto output =
        func.getResultAttrOfType<StringAttr>(i, DpcDialect::kOutputAttrName);
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
    if (!name.empty()) {
      if (output && output.getValue() == name)
        found = i;
      continue;
    }
    if (!output || !type || type.getRank() != 0 ||
        !isa<FloatType>(type.getElementType()))
      continue;
    if (found)
      return func.emitError("more than one scalar output could be the loss; "
                            "name it with loss=<output>");
    found = i;
  }
  if (!found)
    return func.emitError(name.empty()
                              ? "no scalar floating-point output to minimize"
                              : "no output named '" + name + "'");
  return *found;
}

namespace {
struct DifferentiatePass
    : public dpc::impl::DifferentiateBase<DifferentiatePass> {
  using DifferentiateBase::DifferentiateBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(functionName);
    if (!forward) {
      module.emitError("no function @") << functionName << " to differentiate";
      return signalPassFailure();
    }
    if (failed(differentiate(forward)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp forward);
};
} // namespace

LogicalResult DifferentiatePass::differentiate(func::FuncOp forward) {
  FailureOr<unsigned> lossIndex = findLoss(forward, lossOutput);
  if (failed(lossIndex))
    return failure();
  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  auto function = cast<func::FuncOp>(builder.clone(*forward));
  function.setSymName((forward.getSymName() + "_backward").str());
  Block &body = function.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  Value loss = returnOp.getOperand(*lossIndex);

  // What the model computes is the forward phase; everything the adjoint
  // sweep adds is the backward phase.
  auto forwardPhase = PhaseAttr::get(&getContext(), Phase::forward);
  for (Operation &op : body.without_terminator())
    op.setAttr(DpcDialect::kPhaseAttrName, forwardPhase);

  SmallVector<BlockArgument> params;
  for (BlockArgument argument : body.getArguments())
    if (mlir::dpc::getArgumentRole(function, argument.getArgNumber()) ==
        ArgumentRole::Parameter)
      params.push_back(argument);

  // Values that depend on a parameter, then ops that also reach the loss.
  DenseSet<Value> varied(params.begin(), params.end());
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          varied.insert(result);
  DenseSet<Value> useful = {loss};
  SmallVector<Operation *> active;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!llvm::any_of(op.getResults(),
                      [&](Value v) { return useful.contains(v); }))
      continue;
    bool differentiable = false;
    for (Value operand : op.getOperands())
      if (varied.contains(operand)) {
        useful.insert(operand);
        differentiable = true;
      }
    if (differentiable)
      active.push_back(&op);
  }

  // The adjoint sweep, in reverse order of the forward ops.
  builder.setInsertionPoint(returnOp);
  Location loc = function.getLoc();
  DenseMap<Value, Value> gradients;
  auto lossType = cast<RankedTensorType>(loss.getType());
  if (lossScale) {
    // d(scale * loss) / d(loss) = scale: every gradient comes out scaled.
    auto scaleType = RankedTensorType::get({}, builder.getF32Type());
    unsigned index = function.getNumArguments();
    if (failed(function.insertArgument(
            index, scaleType,
            builder.getDictionaryAttr(
                builder.getNamedAttr(DpcDialect::kHyperAttrName,
                                     builder.getStringAttr("loss_scale"))),
            loc)))
      return failure();
    Value scale = body.getArgument(index);
    gradients[loss] =
        scaleType == lossType
            ? scale
            : CastOp::create(builder, loc, lossType, scale).getResult();
  } else {
    gradients[loss] = ConstantOp::create(
        builder, loc, lossType,
        DenseElementsAttr::get(lossType,
                               FloatAttr::get(lossType.getElementType(), 1.0)));
  }
  for (Operation *op : active) {
    SmallVector<Value> resultGradients;
    for (Value result : op->getResults())
      resultGradients.push_back(gradients.lookup(result));
    if (llvm::all_of(resultGradients, [](Value g) { return !g; }))
      continue;
    auto rule = dyn_cast<DifferentiableOpInterface>(op);
    if (!rule)
      return op->emitError("'")
             << op->getName()
             << "' has no gradient rule, but a parameter reaches the loss "
                "through it";
    SmallVector<Value> operandGradients(op->getNumOperands());
    builder.setInsertionPoint(returnOp);
    if (failed(rule.buildGradients(builder, resultGradients, operandGradients)))
      return op->emitError("cannot build the gradient of this op");
    for (auto [operand, gradient] :
         llvm::zip(op->getOperands(), operandGradients)) {
      if (!gradient || !varied.contains(operand))
        continue;
      Value &sum = gradients[operand];
      sum = sum ? AddOp::create(builder, op->getLoc(), sum.getType(), sum,
                                gradient)
                      .getResult()
                : gradient;
    }
  }

  // Return the forward results, then one gradient per parameter.
  SmallVector<Value> results(returnOp.getOperands());
  SmallVector<Attribute> resultAttrs;
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    resultAttrs.push_back(function.getResultAttrDict(i)
                              ? Attribute(function.getResultAttrDict(i))
                              : Attribute(builder.getDictionaryAttr({})));
  NamedAttrList lossAttrs(cast<DictionaryAttr>(resultAttrs[*lossIndex]));
  lossAttrs.set(DpcDialect::kLossAttrName, builder.getUnitAttr());
  resultAttrs[*lossIndex] = lossAttrs.getDictionary(&getContext());
  for (BlockArgument param : params) {
    Value gradient = gradients.lookup(param);
    if (!gradient) {
      // The loss does not depend on this parameter.
      auto type = cast<RankedTensorType>(param.getType());
      gradient = ConstantOp::create(
          builder, loc, type,
          DenseElementsAttr::get(type,
                                 FloatAttr::get(type.getElementType(), 0.0)));
    }
    results.push_back(gradient);
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(DpcDialect::kGradAttrName,
                             builder.getStringAttr(mlir::dpc::getArgumentName(
                                 function, param.getArgNumber())))));
  }
  auto backwardPhase = PhaseAttr::get(&getContext(), Phase::backward);
  for (Operation &op : body.without_terminator())
    if (!op.hasAttr(DpcDialect::kPhaseAttrName))
      op.setAttr(DpcDialect::kPhaseAttrName, backwardPhase);
  func::ReturnOp::create(builder, returnOp.getLoc(), results);
  returnOp.erase();
  function.setFunctionType(builder.getFunctionType(
      function.getArgumentTypes(), ValueRange(results).getTypes()));
  function.setAllResultAttrs(resultAttrs);
  // Ops' rules also build the adjoints of operands nothing trains (a
  // constant scale, a fill value); nothing reads those, and keeping them
  // would keep forward values alive for the backward pass.
  SmallVector<Operation *> backwardOps;
  for (Operation &op : body.without_terminator())
    if (op.getAttr(DpcDialect::kPhaseAttrName) == backwardPhase)
      backwardOps.push_back(&op);
  for (Operation *op : llvm::reverse(backwardOps))
    if (isOpTriviallyDead(op))
      op->erase();
  return success();
}
