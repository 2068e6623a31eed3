//===- VerifyShardings.cpp - The -dpc-verify-shardings pass ---------------===//
//
// Checks that a planned step (the functions with a sharding on every
// argument) is consistent: every op's result layouts
// follow from its operands' layouts by its sharding rule, every call and
// return passes values as the signatures say, and every op of a planned
// function has a sharding. Layout changes must be explicit dpc.reshard ops
// (run -dpc-insert-reshards first).
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Passes.h"
#include "dpc/Transforms/Planning/ShardingFlow.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_VERIFYSHARDINGS
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

struct VerifyShardingsPass
    : public dpc::impl::VerifyShardingsBase<VerifyShardingsPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](FunctionOpInterface func) {
      if (!isPlanned(func))
        return;
      func.walk([&](Operation *op) {
        if (op != func.getOperation() && failed(verify(op)))
          failedAny = true;
      });
    });
    if (failedAny)
      signalPassFailure();
  }

  /// Canonical layouts of `values` (null where a value has none).
  static SmallVector<ShardingAttr> getLayouts(ValueRange values,
                                              Operation *scope) {
    SmallVector<ShardingAttr> layouts;
    for (Value value : values) {
      ShardingAttr sharding = getSharding(value);
      MeshOp mesh = sharding ? lookupMesh(sharding, scope) : MeshOp();
      layouts.push_back(mesh ? getCanonicalSharding(sharding, mesh)
                             : ShardingAttr());
    }
    return layouts;
  }

  LogicalResult verify(Operation *op) {
    if (isa<ReshardOp>(op))
      return success();
    // Values handed to a callee or returned lie as the signature says.
    SmallVector<ShardingAttr> expected = getExpectedOperandShardings(op);
    if (!expected.empty() &&
        !op->hasAttr(DpcDialect::kOperandShardingsAttrName)) {
      SmallVector<ShardingAttr> have = getLayouts(op->getOperands(), op);
      for (auto [i, want] : llvm::enumerate(expected)) {
        if (!want)
          continue;
        MeshOp mesh = lookupMesh(want, op);
        if (have[i] != getCanonicalSharding(want, mesh))
          return op->emitOpError("operand #")
                 << i << " lies as " << have[i] << " where "
                 << getCanonicalSharding(want, mesh) << " is expected";
      }
    }
    if (op->getNumResults() == 0)
      return success();
    SmallVector<ShardingAttr> declared = getLayouts(op->getResults(), op);
    for (auto [i, sharding] : llvm::enumerate(declared))
      if (!sharding)
        return op->emitOpError("result #") << i << " has no sharding";
    MeshOp mesh = lookupMesh(declared.front(), op);

    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee =
          dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
      for (auto [i, sharding] : llvm::enumerate(declared)) {
        auto returned = callee ? callee.getResultAttrOfType<ShardingAttr>(
                                     i, DpcDialect::kShardingAttrName)
                               : ShardingAttr();
        if (returned && getCanonicalSharding(returned, mesh) != sharding)
          return op->emitOpError("result #")
                 << i << " is declared " << sharding << " but the callee "
                 << "returns " << returned << "; a dpc.reshard after the "
                 << "call must change it";
      }
      return success();
    }

    SmallVector<ShardingAttr> operands = getLayouts(op->getOperands(), op);
    if (auto shardable = dyn_cast<ShardableOpInterface>(op)) {
      std::string error;
      FailureOr<SmallVector<ShardingAttr>> inferred =
          inferResultShardings(shardable, operands, declared, mesh, error);
      if (failed(inferred))
        return op->emitOpError("operands do not form a strategy of its "
                               "sharding rule: ")
               << error;
      for (auto [i, want, have] : llvm::enumerate(*inferred, declared))
        if (want != have)
          return op->emitOpError("result #")
                 << i << " is declared " << have << " but its rule gives "
                 << want << " from its operands";
      return success();
    }
    // An op without a rule runs whole on every device; one without
    // operands (a constant) may make any part of its value.
    if (op->getNumOperands() == 0)
      return success();
    for (auto [i, sharding] : llvm::enumerate(operands))
      if (sharding && !isReplicated(sharding))
        return op->emitOpError("has no sharding rule, so operand #")
               << i << " must be whole on every device, not " << sharding;
    for (auto [i, sharding] : llvm::enumerate(declared))
      if (!isReplicated(sharding))
        return op->emitOpError("has no sharding rule, so result #")
               << i << " is whole on every device, not " << sharding;
    return success();
  }

  static bool isReplicated(ShardingAttr sharding) {
    if (sharding.isPartial())
      return false;
    for (unsigned dim = 0; dim < sharding.getRank(); ++dim)
      if (!sharding.getDimAxes(dim).empty())
        return false;
    return true;
  }
};

} // namespace
