//===- OutlineStages.cpp - The -dpc-outline-stages pass -------------------===//
//
// Splits a pipelined @forward_backward into one function per pipeline stage
// and phase (the forward and the backward of each stage are separate, as a
// pipeline schedule interleaves them), called in dependency order, with a
// dpc.transfer on every value that crosses from one stage to another.
// Constants and ops without a stage are copied into each function that
// reads them.
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Passes.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_OUTLINESTAGES
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

/// The ops of one stage and phase, in program order, and what crosses its
/// boundary.
struct Fragment {
  int64_t stage;
  Phase phase;
  SmallVector<Operation *> ops;
  /// Values it reads that are made elsewhere (arguments of the function or
  /// results of other fragments), in order of first use.
  llvm::SetVector<Value> inputs;
  /// Values it makes that are read elsewhere.
  llvm::SetVector<Value> outputs;
  /// Fragments it reads from.
  llvm::SetVector<unsigned> dependencies;
};

/// The stage that runs `op`; none for ops every stage runs: those without
/// a stage and constants (each stage makes its own copy).
std::optional<int64_t> getStage(Operation *op) {
  if (op->hasTrait<mlir::OpTrait::ConstantLike>())
    return std::nullopt;
  if (auto stage = op->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName))
    return stage.getInt();
  return std::nullopt;
}

struct OutlineStagesPass
    : public dpc::impl::OutlineStagesBase<OutlineStagesPass> {
  using OutlineStagesBase::OutlineStagesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(functionName);
    if (!func) {
      emitError(module.getLoc(), "no function @")
          << functionName << " to outline";
      return signalPassFailure();
    }
    if (failed(outline(module, func)))
      signalPassFailure();
  }

  LogicalResult outline(ModuleOp module, func::FuncOp func);
};

/// Copies the stage-free ops `value` depends on into `builder`'s block.
Value materialize(Value value, OpBuilder &builder, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    materialize(operand, builder, mapping);
  builder.clone(*def, mapping);
  return mapping.lookup(value);
}

LogicalResult OutlineStagesPass::outline(ModuleOp module, func::FuncOp func) {
  Block &body = func.getBody().front();
  // Group the staged ops; the others run on every stage.
  llvm::MapVector<std::pair<int64_t, unsigned>, unsigned> index;
  SmallVector<Fragment> fragments;
  DenseMap<Operation *, unsigned> fragmentOf;
  for (Operation &op : body.without_terminator()) {
    std::optional<int64_t> stage = getStage(&op);
    if (!stage) {
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp(); def && getStage(def))
          return op.emitOpError("runs on every stage but reads a value made "
                                "on stage ")
                 << *getStage(def) << "; give it a dpc.stage";
      continue;
    }
    auto phase = op.getAttrOfType<PhaseAttr>(DpcDialect::kPhaseAttrName);
    if (!phase)
      return op.emitOpError("has a dpc.stage but no dpc.phase");
    auto key = std::make_pair(*stage, unsigned(phase.getValue()));
    auto [it, inserted] = index.try_emplace(key, fragments.size());
    if (inserted)
      fragments.push_back({*stage, phase.getValue(), {}, {}, {}, {}});
    fragments[it->second].ops.push_back(&op);
    fragmentOf[&op] = it->second;
  }
  if (fragments.empty())
    return success();

  // What crosses each fragment's boundary. Stage-free ops are copied in,
  // and the arguments they read come in with them.
  for (auto [i, fragment] : llvm::enumerate(fragments)) {
    std::function<void(Value)> read = [&, i = i](Value operand) {
      Operation *def = operand.getDefiningOp();
      if (def && !getStage(def)) {
        llvm::for_each(def->getOperands(), read);
        return;
      }
      auto it = def ? fragmentOf.find(def) : fragmentOf.end();
      if (it != fragmentOf.end() && it->second == i)
        return;
      fragments[i].inputs.insert(operand);
      if (it != fragmentOf.end()) {
        fragments[i].dependencies.insert(it->second);
        fragments[it->second].outputs.insert(operand);
      }
    };
    for (Operation *op : fragment.ops)
      llvm::for_each(op->getOperands(), read);
  }
  for (Value returned : body.getTerminator()->getOperands())
    if (Operation *def = returned.getDefiningOp())
      if (auto it = fragmentOf.find(def); it != fragmentOf.end())
        fragments[it->second].outputs.insert(returned);

  // Dependency order, earliest first among the ready; a cycle cannot be
  // outlined.
  SmallVector<unsigned> order;
  SmallVector<bool> done(fragments.size(), false);
  while (order.size() < fragments.size()) {
    bool progressed = false;
    for (auto [i, fragment] : llvm::enumerate(fragments)) {
      if (done[i] || !llvm::all_of(fragment.dependencies,
                                   [&](unsigned d) { return done[d]; }))
        continue;
      order.push_back(i);
      done[i] = progressed = true;
      break;
    }
    if (!progressed)
      return func.emitOpError("its pipeline stages depend on each other in "
                              "a cycle (stage ")
             << fragments[llvm::find(done, false) - done.begin()].stage
             << " among them); they cannot run as a pipeline";
  }

  // One function per fragment, after `func`.
  MLIRContext *context = module.getContext();
  OpBuilder moduleBuilder(context);
  moduleBuilder.setInsertionPointAfter(func);
  auto shardingOf = [&](Value value) -> DictionaryAttr {
    ShardingAttr sharding = getSharding(value);
    if (!sharding)
      return DictionaryAttr::get(context, {});
    return DictionaryAttr::get(
        context,
        {NamedAttribute(StringAttr::get(context, DpcDialect::kShardingAttrName),
                        sharding)});
  };
  SmallVector<func::FuncOp> callees(fragments.size());
  for (unsigned i : order) {
    Fragment &fragment = fragments[i];
    std::string name = (func.getSymName() + ".stage" + Twine(fragment.stage) +
                        "." + stringifyPhase(fragment.phase))
                           .str();
    auto type = FunctionType::get(
        context, ValueRange(fragment.inputs.getArrayRef()).getTypes(),
        ValueRange(fragment.outputs.getArrayRef()).getTypes());
    auto callee =
        func::FuncOp::create(moduleBuilder, func.getLoc(), name, type);
    callee.setPrivate();
    callee->setAttr(DpcDialect::kStageAttrName,
                    moduleBuilder.getI64IntegerAttr(fragment.stage));
    callee->setAttr(DpcDialect::kPhaseAttrName,
                    PhaseAttr::get(context, fragment.phase));
    SmallVector<Attribute> argAttrs, resultAttrs;
    for (Value input : fragment.inputs)
      argAttrs.push_back(shardingOf(input));
    for (Value output : fragment.outputs)
      resultAttrs.push_back(shardingOf(output));
    callee.setAllArgAttrs(argAttrs);
    callee.setAllResultAttrs(resultAttrs);

    Block *entry = callee.addEntryBlock();
    OpBuilder builder = OpBuilder::atBlockBegin(entry);
    IRMapping mapping;
    for (auto [input, arg] : llvm::zip(fragment.inputs, entry->getArguments()))
      mapping.map(input, arg);
    for (Operation *op : fragment.ops) {
      for (Value operand : op->getOperands())
        if (!mapping.contains(operand))
          materialize(operand, builder, mapping);
      builder.clone(*op, mapping);
    }
    SmallVector<Value> results;
    for (Value output : fragment.outputs)
      results.push_back(mapping.lookup(output));
    func::ReturnOp::create(builder, func.getLoc(), results);
    callees[i] = callee;
  }

  // The body becomes the calls, with transfers between stages.
  OpBuilder builder(body.getTerminator());
  IRMapping mapping;
  DenseMap<Value, int64_t> madeOn;
  DenseMap<std::pair<Value, int64_t>, Value> moved;
  for (unsigned i : order) {
    Fragment &fragment = fragments[i];
    SmallVector<Value> args;
    for (Value input : fragment.inputs) {
      Value value = mapping.lookupOrDefault(input);
      auto from = madeOn.find(value);
      if (from != madeOn.end() && from->second != fragment.stage) {
        Value &transfer = moved[{value, fragment.stage}];
        if (!transfer) {
          auto op = TransferOp::create(builder, func.getLoc(), value,
                                       from->second, fragment.stage);
          if (ShardingAttr sharding = getSharding(input))
            op->setAttr(DpcDialect::kShardingAttrName,
                        builder.getArrayAttr({sharding}));
          transfer = op;
        }
        value = transfer;
      }
      args.push_back(value);
    }
    auto call = func::CallOp::create(builder, func.getLoc(), callees[i], args);
    SmallVector<Attribute> shardings;
    for (Value output : fragment.outputs)
      if (ShardingAttr sharding = getSharding(output))
        shardings.push_back(sharding);
    if (shardings.size() == fragment.outputs.size())
      call->setAttr(DpcDialect::kShardingAttrName,
                    builder.getArrayAttr(shardings));
    call->setAttr(DpcDialect::kStageAttrName,
                  builder.getI64IntegerAttr(fragment.stage));
    for (auto [output, result] :
         llvm::zip(fragment.outputs, call.getResults())) {
      mapping.map(output, result);
      madeOn[result] = fragment.stage;
    }
  }
  Operation *terminator = body.getTerminator();
  for (OpOperand &operand : terminator->getOpOperands())
    operand.set(mapping.lookupOrDefault(operand.get()));
  // The outlined ops and the stage-free ones nothing reads any more.
  SmallVector<Operation *> old;
  for (Operation &op : body.without_terminator())
    if (!isa<func::CallOp, TransferOp>(op))
      old.push_back(&op);
  for (Operation *op : llvm::reverse(old))
    if (op->use_empty())
      op->erase();
  return success();
}

} // namespace
