//===- ExportShard.cpp - The -dpc-export-shard pass -----------------------===//
//
// Writes a planned step's layouts in upstream MLIR's `shard` dialect, so
// that tools built on it can read the plan: each dpc.mesh becomes a
// shard.grid, each value's #dpc.sharding a shard.sharding with a shard.shard
// after the value's definition, and each dpc.reshard a shard.shard that
// annotates the value for its users. The dpc ops stay.
//
// Upstream shardings have no pending partial results (MLIR 22 removed
// them); a partial value keeps its pending reduction as the string
// attribute `dpc.partial` on its shard.shard ("tp : sum, dp : mean").
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Passes.h"

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_EXPORTSHARD
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

struct ExportShardPass : public dpc::impl::ExportShardBase<ExportShardPass> {
  void runOnOperation() override;

  /// A shard.sharding for `sharding`, made with `builder`.
  Value getSharding(OpBuilder &builder, Location loc, ShardingAttr sharding);
  /// Annotates `value` with `sharding`: for its users when `forUsers`
  /// (a change of layout), else as it is made. Returns the annotated value.
  Value annotate(OpBuilder &builder, Location loc, Value value,
                 ShardingAttr sharding, bool forUsers);

  /// Each grid's axis indices by name.
  DenseMap<StringAttr, llvm::StringMap<int16_t>> axes;
};

} // namespace

Value ExportShardPass::getSharding(OpBuilder &builder, Location loc,
                                   ShardingAttr sharding) {
  const llvm::StringMap<int16_t> &index = axes[sharding.getMesh().getAttr()];
  SmallVector<shard::GridAxesAttr> split;
  for (unsigned dim = 0; dim < sharding.getRank(); ++dim) {
    SmallVector<int16_t> dimAxes;
    for (StringRef axis : sharding.getDimAxes(dim))
      dimAxes.push_back(index.lookup(axis));
    split.push_back(builder.getDenseI16ArrayAttr(dimAxes));
  }
  // Upstream wants at least one entry, even for a scalar.
  if (split.empty())
    split.push_back(builder.getDenseI16ArrayAttr({}));
  return shard::ShardingOp::create(builder, loc, sharding.getMesh(), split);
}

Value ExportShardPass::annotate(OpBuilder &builder, Location loc, Value value,
                                ShardingAttr sharding, bool forUsers) {
  Value layout = getSharding(builder, loc, sharding);
  auto shardOp = shard::ShardOp::create(builder, loc, value, layout, forUsers);
  if (sharding.isPartial()) {
    std::string pending;
    for (auto [axis, kind] :
         llvm::zip_equal(sharding.getPartialAxes(), sharding.getPartialKinds()))
      pending += (pending.empty() ? "" : ", ") +
                 cast<StringAttr>(axis).getValue().str() + " : " +
                 stringifyReductionKind(kind).str();
    shardOp->setAttr("dpc.partial", builder.getStringAttr(pending));
  }
  return shardOp;
}

void ExportShardPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Grids first: every sharding names one.
  for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>())) {
    if (mesh.getDevices()) {
      mesh.emitOpError("orders its devices, which a shard.grid cannot say");
      return signalPassFailure();
    }
    llvm::StringMap<int16_t> &index = axes[mesh.getSymNameAttr()];
    for (auto [i, name] : llvm::enumerate(mesh.getAxisNames()))
      index[cast<StringAttr>(name).getValue()] = int16_t(i);
    OpBuilder builder(mesh);
    shard::GridOp::create(builder, mesh.getLoc(), mesh.getSymName(),
                          mesh.getShape());
    mesh.erase();
  }

  MLIRContext *context = module.getContext();
  StringAttr shardingName =
      StringAttr::get(context, DpcDialect::kShardingAttrName);
  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      auto sharding =
          func.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(), shardingName);
      if (!sharding)
        continue;
      OpBuilder builder = OpBuilder::atBlockBegin(&entry);
      Value annotated =
          annotate(builder, func.getLoc(), arg, sharding, /*forUsers=*/false);
      arg.replaceAllUsesExcept(annotated, annotated.getDefiningOp());
      func.removeArgAttr(arg.getArgNumber(), shardingName);
    }
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      func.removeResultAttr(i, shardingName);

    SmallVector<Operation *> ops;
    for (Operation &op : entry)
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (isa<shard::ShardOp, shard::ShardingOp>(op))
        continue;
      OpBuilder builder(op->getContext());
      if (auto reshard = dyn_cast<ReshardOp>(op)) {
        builder.setInsertionPoint(reshard);
        Value annotated = annotate(builder, reshard.getLoc(),
                                   reshard.getInput(), reshard.getSharding(),
                                   /*forUsers=*/true);
        reshard.getResult().replaceAllUsesWith(annotated);
        reshard.erase();
        continue;
      }
      SmallVector<ShardingAttr> shardings = getResultShardings(op);
      op->removeAttr(DpcDialect::kShardingAttrName);
      op->removeAttr(DpcDialect::kOperandShardingsAttrName);
      if (shardings.size() != op->getNumResults())
        continue;
      builder.setInsertionPointAfter(op);
      for (auto [result, sharding] :
           llvm::zip_equal(op->getResults(), shardings)) {
        Value annotated = annotate(builder, op->getLoc(), result, sharding,
                                   /*forUsers=*/false);
        result.replaceAllUsesExcept(annotated, annotated.getDefiningOp());
      }
    }
  });
}
