//===- AppendLoss.cpp - A loss for models that export none ----------------===//
//
// Adds a label argument and a mean cross-entropy or squared-error loss on
// one output of @forward, so that -dpc-differentiate has a scalar to
// minimize.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"
#include "dpc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_APPENDLOSS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {
struct AppendLossPass : public dpc::impl::AppendLossBase<AppendLossPass> {
  using AppendLossBase::AppendLossBase;

  void runOnOperation() override {
    auto forward = getOperation().lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      getOperation().emitError("no function @forward to add a loss to");
      return signalPassFailure();
    }
    if (failed(append(forward)))
      signalPassFailure();
  }

  LogicalResult append(func::FuncOp forward);
};
} // namespace

LogicalResult AppendLossPass::append(func::FuncOp forward) {
  if (kind != "cross-entropy" && kind != "mse")
    return forward.emitError("unknown loss '")
           << kind << "'; use cross-entropy, mse or from-model";
  // The label becomes an input of its own: feeding it must not be
  // ambiguous.
  if (label.empty())
    return forward.emitError("--label must name the label input the loss "
                             "reads");
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    for (StringRef role :
         {DpcDialect::kInputAttrName, DpcDialect::kParamAttrName})
      if (auto name = forward.getArgAttrOfType<StringAttr>(i, role);
          name && name.getValue() == label)
        return forward.emitError("--label=")
               << label << " names argument " << i
               << " of the model already; the label needs a name of its own";
  std::optional<unsigned> index;
  SmallVector<StringRef> names;
  for (unsigned i = 0; i < forward.getNumResults(); ++i) {
    auto name =
        forward.getResultAttrOfType<StringAttr>(i, DpcDialect::kOutputAttrName);
    if (!name)
      continue;
    names.push_back(name.getValue());
    if (output.empty() ? forward.getNumResults() == 1
                       : name.getValue() == output)
      index = i;
  }
  if (!index && output.empty())
    return forward.emitError("the model has several outputs; name the one "
                             "the loss reads with --loss-output");
  if (!index)
    return forward.emitError("--loss-output=")
           << output << " names no output of the model (its outputs: "
           << llvm::join(names, ", ") << ")";
  Block &body = forward.getBody().front();
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  Value prediction = returnOp.getOperand(*index);
  auto type = cast<RankedTensorType>(prediction.getType());
  OpBuilder b(returnOp);
  Location loc = forward.getLoc();
  auto scalar = RankedTensorType::get({}, type.getElementType());
  Value label, loss;
  if (kind == "cross-entropy") {
    if (type.getRank() < 2)
      return forward.emitError("cross-entropy needs logits of rank 2 or more "
                               "(classes on dimension 1), got ")
             << type;
    SmallVector<int64_t> labelShape = {type.getDimSize(0)};
    llvm::append_range(labelShape, type.getShape().drop_front(2));
    label = body.addArgument(RankedTensorType::get(labelShape, b.getI64Type()),
                             loc);
    loss = SoftmaxCrossEntropyOp::create(b, loc, scalar, prediction, label,
                                         LossReduction::mean, ignoreIndex);
  } else {
    label = body.addArgument(type, loc);
    Value difference = SubOp::create(b, loc, type, prediction, label);
    Value square = MulOp::create(b, loc, type, difference, difference);
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    loss = ReduceMeanOp::create(b, loc, scalar, square,
                                b.getDenseI64ArrayAttr(all), UnitAttr());
  }
  SmallVector<Value> results(returnOp.getOperands());
  results.push_back(loss);
  func::ReturnOp::create(b, returnOp.getLoc(), results);
  returnOp.erase();
  SmallVector<DictionaryAttr> argAttrs;
  forward.getAllArgAttrs(argAttrs);
  SmallVector<DictionaryAttr> resultAttrs;
  forward.getAllResultAttrs(resultAttrs);
  forward.setFunctionType(b.getFunctionType(body.getArgumentTypes(),
                                            ValueRange(results).getTypes()));
  argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
      DpcDialect::kInputAttrName, b.getStringAttr(this->label))));
  resultAttrs.push_back(b.getDictionaryAttr(
      b.getNamedAttr(DpcDialect::kOutputAttrName, b.getStringAttr("loss"))));
  forward.setAllArgAttrs(argAttrs);
  forward.setAllResultAttrs(resultAttrs);
  return success();
}
