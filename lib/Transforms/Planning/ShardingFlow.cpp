//===- ShardingFlow.cpp - What each op expects and makes ------------------===//

#include "dpc/Transforms/Planning/ShardingFlow.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::dpc;

SmallVector<ShardingAttr>
mlir::dpc::getExpectedOperandShardings(Operation *op) {
  SmallVector<ShardingAttr> expected;
  if (auto attrs =
          op->getAttrOfType<ArrayAttr>(DpcDialect::kOperandShardingsAttrName)) {
    for (Attribute attr : attrs)
      expected.push_back(dyn_cast<ShardingAttr>(attr));
    return expected;
  }
  auto collect = [&](unsigned count, auto get) {
    bool any = false;
    for (unsigned i = 0; i < count; ++i) {
      expected.push_back(get(i));
      any |= bool(expected.back());
    }
    if (!any)
      expected.clear();
  };
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    if (auto callee =
            dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable()))
      collect(op->getNumOperands(), [&](unsigned i) {
        return callee.getArgAttrOfType<ShardingAttr>(
            i, DpcDialect::kShardingAttrName);
      });
    return expected;
  }
  if (op->hasTrait<mlir::OpTrait::ReturnLike>())
    if (auto func = dyn_cast<FunctionOpInterface>(op->getParentOp()))
      collect(op->getNumOperands(), [&](unsigned i) {
        return func.getResultAttrOfType<ShardingAttr>(
            i, DpcDialect::kShardingAttrName);
      });
  return expected;
}

static std::string describeAxes(ArrayRef<StringRef> axes) {
  return axes.empty() ? "nothing" : "(" + llvm::join(axes, ", ") + ")";
}

FailureOr<SmallVector<ShardingAttr>> mlir::dpc::inferResultShardings(
    ShardableOpInterface op, ArrayRef<ShardingAttr> operands,
    ArrayRef<ShardingAttr> declared, MeshOp mesh, std::string &error) {
  ShardingRule rule = op.getShardingRule();
  // The axes each factor is split over, and which operand said so.
  SmallVector<std::optional<SmallVector<StringRef>>> factorAxes(
      rule.getNumFactors());
  SmallVector<unsigned> source(rule.getNumFactors());
  // An op that keeps pending sums takes the same one from every operand
  // and leaves it pending in its results.
  std::optional<ShardingAttr> pending;
  for (auto [i, written] : llvm::enumerate(operands)) {
    if (!written)
      continue;
    ShardingAttr sharding = getCanonicalSharding(written, mesh);
    if (dpc::keepsPendingSums(op) && takesPendingSum(op->getOperand(i))) {
      ShardingAttr sum = sharding;
      if (!pending) {
        pending = sum;
      } else if (pending->getPartialAxes() != sum.getPartialAxes() ||
                 pending->getPartialKinds() != sum.getPartialKinds()) {
        error = "operand #" + std::to_string(i) + " is pending otherwise " +
                "than operand #0; a dpc.reshard must finish them alike";
        return failure();
      }
      if (llvm::any_of(sum.getPartialKinds(), [](ReductionKind kind) {
            return kind != ReductionKind::sum;
          })) {
        error = "operand #" + std::to_string(i) +
                " is a pending partial result other than a sum";
        return failure();
      }
      sharding = sharding.withoutPartial();
    }
    if (sharding.isPartial()) {
      error = "operand #" + std::to_string(i) +
              " is a pending partial result; a dpc.reshard must finish it";
      return failure();
    }
    ArrayRef<int64_t> factors = rule.getOperandFactors(i);
    for (auto [dim, factor] : llvm::enumerate(factors)) {
      SmallVector<StringRef> axes = sharding.getDimAxes(dim);
      if (factor == ShardingRule::kNoFactor) {
        if (!axes.empty()) {
          error = "operand #" + std::to_string(i) + " splits dimension " +
                  std::to_string(dim) + ", which the rule " + rule.str() +
                  " does not let it split";
          return failure();
        }
        continue;
      }
      if (!factorAxes[factor]) {
        factorAxes[factor] = axes;
        source[factor] = i;
      } else if (*factorAxes[factor] != axes) {
        error = "operand #" + std::to_string(i) + " splits dimension " +
                std::to_string(dim) + " over " + describeAxes(axes) +
                " where operand #" + std::to_string(source[factor]) +
                " splits the same loop over " +
                describeAxes(*factorAxes[factor]);
        return failure();
      }
    }
  }
  // Loops no operand indexes (a fill, a broadcast) are split as the
  // results say.
  for (unsigned r = 0; r < rule.getNumResults(); ++r)
    for (auto [dim, factor] : llvm::enumerate(rule.getResultFactors(r)))
      if (factor != ShardingRule::kNoFactor && !factorAxes[factor] &&
          r < declared.size() && declared[r])
        factorAxes[factor] =
            getCanonicalSharding(declared[r], mesh).getDimAxes(dim);
  for (int64_t factor = 0; factor < rule.getNumFactors(); ++factor)
    if (rule.getFactorKind(factor) == FactorKind::NeedReplication &&
        factorAxes[factor] && !factorAxes[factor]->empty()) {
      error = "a loop of size " + std::to_string(rule.getFactorSize(factor)) +
              " that must stay whole is split over " +
              describeAxes(*factorAxes[factor]);
      return failure();
    }

  MLIRContext *context = op->getContext();
  StringRef meshName = mesh.getSymName();
  SmallVector<ShardingAttr> results;
  for (unsigned r = 0; r < rule.getNumResults(); ++r) {
    ArrayRef<int64_t> factors = rule.getResultFactors(r);
    SmallVector<SmallVector<StringRef>> dims;
    for (int64_t factor : factors)
      dims.push_back(factor == ShardingRule::kNoFactor || !factorAxes[factor]
                         ? SmallVector<StringRef>()
                         : *factorAxes[factor]);
    // A reduction loop split over an axis and summed away leaves the
    // result partial over that axis.
    SmallVector<std::pair<StringRef, ReductionKind>> partial;
    for (int64_t factor = 0; factor < rule.getNumFactors(); ++factor)
      if (rule.getFactorKind(factor) == FactorKind::Reduction &&
          factorAxes[factor] && !llvm::is_contained(factors, factor))
        for (StringRef axis : *factorAxes[factor])
          partial.emplace_back(axis, rule.getFactorReduction(factor));
    if (pending)
      for (auto [axis, kind] : llvm::zip_equal(pending->getPartialAxes(),
                                               pending->getPartialKinds()))
        partial.emplace_back(cast<StringAttr>(axis).getValue(), kind);
    results.push_back(getCanonicalSharding(
        ShardingAttr::get(context, meshName, dims, partial), mesh));
  }
  return results;
}
