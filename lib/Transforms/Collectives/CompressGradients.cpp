//===- CompressGradients.cpp - The -dpc-compress-gradients pass -----------===//
//
// Data-parallel gradient reductions carry as many bytes as the model has
// parameters, every step. Two ways to send fewer:
// - bf16 / fp16: each is cast down before its collective and back up after,
//   so the optimizer still accumulates in fp32;
// - top-k with error feedback: each rank adds what it left unsent last
//   time to its gradient, sends only the k entries of largest magnitude
//   (values and indices, all-gathered) and keeps the rest for next time.
//   That residual is per-rank state of the step: the step function takes
//   and returns it, threaded through the functions it calls.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Passes.h"

#include "dpc/Analysis/CostModel/GradientCompression.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace mlir::dpc {
#define GEN_PASS_DEF_COMPRESSGRADIENTS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// The plan names its data-parallel mesh axis so (writePlanMesh).
constexpr StringLiteral kDataAxis = "dp";

/// Whether what `op` makes reaches a forward or backward computation, not
/// only the optimizer and the function's results (through the ops that
/// carry it there: waits, views, casts and the like, which carry no phase
/// of their own or the pass's).
bool feedsThePasses(Operation *op) {
  SmallVector<Operation *> work = {op};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    for (Operation *user : work.pop_back_val()->getUsers()) {
      if (isa<func::ReturnOp>(user) || !seen.insert(user).second)
        continue;
      auto phase = user->getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
      if (phase && phase.getValue() == Phase::optimizer)
        continue;
      if (phase && !isa<WaitOp>(user))
        return true;
      work.push_back(user);
    }
  }
  return false;
}

/// Whether `op` reduces a gradient: a floating-point tensor of at least
/// `minWidth` bits, by sum or mean over a group that includes the
/// data-parallel axis, for the optimizer alone. Synchronized batch norm
/// sums its statistics over that axis in both passes: compressed, they
/// would change the normalization (and top-k's residual would carry one
/// step's statistics into the next).
bool isGradientReduction(Operation *op, unsigned minWidth) {
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  auto kind = op->getAttrOfType<ReductionKindAttr>("kind");
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!axes || !kind || !type || type.getRank() == 0)
    return false;
  auto element = dyn_cast<FloatType>(type.getElementType());
  return element && element.getWidth() >= minWidth &&
         (kind.getValue() == ReductionKind::sum ||
          kind.getValue() == ReductionKind::mean) &&
         llvm::any_of(axes,
                      [](Attribute axis) {
                        return cast<StringAttr>(axis).getValue() == kDataAxis;
                      }) &&
         !feedsThePasses(op);
}

/// Casts each gradient reduction's operand to `narrow` and its result back.
void castAround(ModuleOp module, FloatType narrow) {
  // Found before any is rewritten.
  SmallVector<Operation *> reductions;
  module.walk([&](Operation *op) {
    if (isa<AllReduceOp, ReduceScatterOp>(op) &&
        isGradientReduction(op, narrow.getWidth() + 1))
      reductions.push_back(op);
  });
  for (Operation *op : reductions) {
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
  }
}

/// Top-k compression with error feedback over a whole module.
class TopKCompression {
public:
  TopKCompression(ModuleOp module, double ratio)
      : module(module), ratio(ratio) {}

  LogicalResult run();

private:
  /// A residual the step keeps: its local type is [1, n].
  using Slot = RankedTensorType;
  /// The residual slots of `func`: its own reductions', then those of each
  /// function it calls (once per callee: its calls chain the residuals).
  SmallVector<Slot> getSlots(func::FuncOp func);
  void rewrite(func::FuncOp func, bool entry);
  Value compress(AllReduceOp op, Value residual, Value &newResidual);

  ModuleOp module;
  double ratio;
  DenseMap<func::FuncOp, SmallVector<Slot>> slots;
  DenseSet<func::FuncOp> rewritten;
  /// The all-reduces to compress, found before any is rewritten.
  DenseSet<Operation *> gradientReductions;
  double sentBytes = 0, denseBytes = 0;
  ShardingAttr residualSharding;
};

} // namespace

SmallVector<TopKCompression::Slot>
TopKCompression::getSlots(func::FuncOp func) {
  auto it = slots.find(func);
  if (it != slots.end())
    return it->second;
  SmallVector<Slot> own;
  llvm::SetVector<func::FuncOp> callees;
  // Residuals are per rank: only partitioned programs have them.
  if (!func->hasAttr(DpcDialect::kPartitionedAttrName))
    return slots[func] = {};
  func.walk([&](Operation *op) {
    if (auto reduce = dyn_cast<AllReduceOp>(op);
        reduce && gradientReductions.contains(op)) {
      auto type = cast<RankedTensorType>(reduce.getInput().getType());
      own.push_back(RankedTensorType::get({1, type.getNumElements()},
                                          type.getElementType()));
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        callees.insert(callee);
    }
  });
  for (func::FuncOp callee : callees)
    llvm::append_range(own, getSlots(callee));
  slots[func] = own;
  return own;
}

Value TopKCompression::compress(AllReduceOp op, Value residual,
                                Value &newResidual) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getInput().getType());
  Type element = type.getElementType();
  int64_t n = type.getNumElements();
  int64_t k = std::clamp<int64_t>(int64_t(std::ceil(ratio * n)), 1, n);
  int64_t group = 1;
  auto mesh =
      SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, op.getMeshAttr());
  for (Attribute axis : op.getAxes())
    group *= *mesh.getAxisSize(cast<StringAttr>(axis).getValue());
  auto vector = [&](int64_t size, Type t) {
    return RankedTensorType::get({size}, t);
  };
  Value flat =
      ReshapeOp::create(builder, loc, vector(n, element), op.getInput());
  Value carried = ReshapeOp::create(builder, loc, vector(n, element), residual);
  Value corrected =
      AddOp::create(builder, loc, vector(n, element), flat, carried);
  auto top = TopKOp::create(builder, loc, vector(k, element),
                            vector(k, builder.getI64Type()), corrected,
                            builder.getI64IntegerAttr(k));
  Value sent =
      ScatterAddOp::create(builder, loc, vector(n, element), top.getValues(),
                           top.getIndices(), builder.getI64IntegerAttr(0));
  Value left = SubOp::create(builder, loc, vector(n, element), corrected, sent);
  newResidual = ReshapeOp::create(builder, loc, residual.getType(), left);
  Value values =
      AllGatherOp::create(builder, loc, vector(group * k, element),
                          top.getValues(), op.getMeshAttr(), op.getAxesAttr(),
                          builder.getI64IntegerAttr(0), UnitAttr());
  Value indices =
      AllGatherOp::create(builder, loc, vector(group * k, builder.getI64Type()),
                          top.getIndices(), op.getMeshAttr(), op.getAxesAttr(),
                          builder.getI64IntegerAttr(0), UnitAttr());
  Value dense = ScatterAddOp::create(builder, loc, vector(n, element), values,
                                     indices, builder.getI64IntegerAttr(0));
  if (op.getKind() == ReductionKind::mean) {
    auto scalar = RankedTensorType::get({}, element);
    Value size = ConstantOp::create(
        builder, loc, scalar,
        DenseElementsAttr::get(scalar, builder.getFloatAttr(element, group)));
    dense = DivOp::create(builder, loc, vector(n, element), dense, size);
  }
  sentBytes += getSizeInBytes(top.getValues().getType()) +
               getSizeInBytes(top.getIndices().getType());
  denseBytes += getSizeInBytes(type);
  if (!residualSharding) {
    SmallVector<Attribute> all(mesh.getAxisNames().begin(),
                               mesh.getAxisNames().end());
    MLIRContext *context = op.getContext();
    residualSharding = ShardingAttr::get(
        context, op.getMeshAttr(),
        ArrayAttr::get(context, {ArrayAttr::get(context, all),
                                 ArrayAttr::get(context, {})}),
        ArrayAttr::get(context, {}), {});
  }
  return ReshapeOp::create(builder, loc, type, dense);
}

void TopKCompression::rewrite(func::FuncOp func, bool entry) {
  if (!rewritten.insert(func).second)
    return;
  SmallVector<Slot> funcSlots = getSlots(func);
  if (funcSlots.empty())
    return;
  Block &body = func.getBody().front();
  // Each rank keeps its own residual: the whole value stacks them, one row
  // per device of the mesh.
  MLIRContext *context = func.getContext();
  auto residualAttrs = [&](unsigned i) {
    NamedAttrList attrs;
    attrs.append(DpcDialect::kShardingAttrName, residualSharding);
    if (entry)
      attrs.append(DpcDialect::kOptStateAttrName,
                   StringAttr::get(context, "gradient" + std::to_string(i) +
                                                ":topk_residual"));
    return attrs.getDictionary(context);
  };
  SmallVector<Value> current;
  for (auto [i, slot] : llvm::enumerate(funcSlots)) {
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, slot, DictionaryAttr(), func.getLoc());
    current.push_back(body.getArgument(index));
  }
  // Slots in the order getSlots made them: own reductions first, then each
  // callee's.
  unsigned next = 0;
  llvm::MapVector<func::FuncOp, unsigned> calleeFirst;
  SmallVector<AllReduceOp> reductions;
  SmallVector<func::CallOp> calls;
  for (Operation &op : body) {
    if (auto reduce = dyn_cast<AllReduceOp>(op);
        reduce && gradientReductions.contains(&op))
      reductions.push_back(reduce);
    else if (auto call = dyn_cast<func::CallOp>(op))
      calls.push_back(call);
  }
  for (AllReduceOp reduce : reductions) {
    Value newResidual;
    Value result = compress(reduce, current[next], newResidual);
    current[next++] = newResidual;
    reduce.getResult().replaceAllUsesWith(result);
    reduce.erase();
  }
  for (func::CallOp call : calls) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!callee || getSlots(callee).empty())
      continue;
    rewrite(callee, /*entry=*/false);
    auto [it, inserted] = calleeFirst.try_emplace(callee, next);
    if (inserted)
      next += getSlots(callee).size();
    unsigned first = it->second, count = getSlots(callee).size();
    SmallVector<Value> operands(call.getOperands());
    llvm::append_range(operands, ArrayRef<Value>(current).slice(first, count));
    OpBuilder builder(call);
    auto newCall =
        func::CallOp::create(builder, call.getLoc(), callee, operands);
    newCall->setAttrs(call->getAttrs());
    newCall.setCalleeAttr(call.getCalleeAttr());
    for (unsigned i = 0; i < call.getNumResults(); ++i)
      call.getResult(i).replaceAllUsesWith(newCall.getResult(i));
    for (unsigned i = 0; i < count; ++i)
      current[first + i] = newCall.getResult(call.getNumResults() + i);
    call.erase();
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned firstArg = func.getNumArguments() - funcSlots.size();
  for (auto [i, slot] : llvm::enumerate(funcSlots)) {
    // The layout is known once a reduction has been compressed.
    func.setArgAttrs(firstArg + i, residualAttrs(i));
    (void)func.insertResult(func.getNumResults(), slot, residualAttrs(i));
  }
  ret->insertOperands(ret.getNumOperands(), current);
}

LogicalResult TopKCompression::run() {
  module.walk([&](AllReduceOp op) {
    if (isGradientReduction(op, 32))
      gradientReductions.insert(op);
  });
  // Entry points: functions nobody calls.
  DenseSet<func::FuncOp> called;
  module.walk([&](func::CallOp call) {
    if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
      called.insert(callee);
  });
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (called.contains(func) || getSlots(func).empty())
      continue;
    if (!func.isPublic())
      return func.emitError("keeps top-k residuals but is private: nothing "
                            "could pass them from one step to the next");
    rewrite(func, /*entry=*/true);
  }
  if (denseBytes > 0)
    emitRemark(module.getLoc(), "top-k gradient compression: each rank sends ")
        << int64_t(sentBytes) << " of " << int64_t(denseBytes)
        << " gradient bytes per step (ratio "
        << llvm::formatv("{0:F3}", sentBytes / denseBytes).str() << ")";
  return success();
}

namespace {

struct CompressGradientsPass
    : public dpc::impl::CompressGradientsBase<CompressGradientsPass> {
  using CompressGradientsBase::CompressGradientsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Unset, it follows the plan (which records the compression it priced).
    std::string text = compression;
    bool planned = text.empty();
    if (planned) {
      auto plan =
          module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
      auto field =
          plan ? plan.getAs<StringAttr>("grad_compression") : StringAttr();
      text = field ? field.str() : "none";
    }
    std::string error;
    FailureOr<GradientCompression> parsed =
        GradientCompression::parse(text, error);
    if (failed(parsed)) {
      emitError(module.getLoc(), planned ? "dpc.plan's grad_compression (\""
                                         : "--grad-compression=")
          << text << (planned ? "\") " : " ") << error;
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    switch (parsed->kind) {
    case GradientCompression::Kind::None:
      return;
    case GradientCompression::Kind::BFloat16:
      return castAround(module, BFloat16Type::get(context));
    case GradientCompression::Kind::Float16:
      return castAround(module, Float16Type::get(context));
    case GradientCompression::Kind::TopK:
      if (failed(TopKCompression(module, parsed->ratio).run()))
        signalPassFailure();
      return;
    }
  }
};

} // namespace
