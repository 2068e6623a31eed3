//===- Partition.cpp - The -dpc-partition pass ----------------------------===//
//
// Turns a planned step, every value sharded and every change of layout a
// dpc.reshard, into the program each rank runs: every value takes the type
// of one device's block, each op rewrites itself for its local operands
// through ShardableOpInterface::partition, and each reshard becomes
// collectives (ReshardLowering.h).
//
//===----------------------------------------------------------------------===//

#include "dpc/Transforms/Partition/PipelineStages.h"
#include "dpc/Transforms/Partition/ReshardLowering.h"
#include "dpc/Transforms/Passes.h"

#include "dpc/Interfaces/ShardableOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dpc {
#define GEN_PASS_DEF_PARTITION
#include "dpc/Transforms/Passes.h.inc"
} // namespace mlir::dpc

using namespace mlir;
using namespace mlir::dpc;

namespace {

class FunctionPartitioner {
public:
  explicit FunctionPartitioner(func::FuncOp func) : func(func) {}

  LogicalResult run();

private:
  /// The local type of a value of type `type` laid out as `sharding`.
  FailureOr<Type> getLocal(ShardingAttr sharding, Type type, Location loc) {
    MeshOp mesh = lookupMesh(sharding, func);
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!mesh || !tensor)
      return emitError(loc, "cannot partition a value of type ")
             << type << " laid out as " << sharding;
    return Type(getLocalType(sharding, tensor, mesh));
  }
  LogicalResult recordLayouts();
  LogicalResult partitionOp(Operation *op);

  func::FuncOp func;
  /// The layout of every value, read before anything changes.
  DenseMap<Value, ShardingAttr> layouts;
  /// The layouts of each op's operands, and each reshard's source.
  DenseMap<Operation *, SmallVector<Attribute>> operandLayouts;
};

} // namespace

LogicalResult FunctionPartitioner::recordLayouts() {
  // isPlanned(func) holds: every argument has its sharding.
  for (BlockArgument arg : func.getArguments())
    layouts[arg] = getSharding(arg);
  WalkResult walk = func.walk([&](Operation *op) {
    for (OpResult result : op->getResults()) {
      ShardingAttr sharding = getSharding(result);
      if (!sharding) {
        op->emitOpError("result #")
            << result.getResultNumber()
            << " has no sharding: plan the step before partitioning it";
        return WalkResult::interrupt();
      }
      layouts[result] = sharding;
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (Operation &op : func.getBody().getOps())
    for (Value operand : op.getOperands())
      operandLayouts[&op].push_back(layouts.lookup(operand));
  return success();
}

LogicalResult FunctionPartitioner::partitionOp(Operation *op) {
  OpBuilder builder(op);
  if (auto reshard = dyn_cast<ReshardOp>(op)) {
    auto from = cast<ShardingAttr>(operandLayouts[op].front());
    Operation *before = op->getPrevNode();
    MeshOp mesh = lookupMesh(from, op);
    FailureOr<Value> lowered =
        lowerReshard(builder, op->getLoc(), reshard.getInput(), from,
                     reshard.getSharding(), mesh);
    if (failed(lowered))
      return failure();
    // The collectives run where the reshard was placed.
    for (Operation *made = before ? before->getNextNode()
                                  : &op->getBlock()->front();
         made != op; made = made->getNextNode())
      for (StringRef name :
           {DpcDialect::kStageAttrName, DpcDialect::kPhaseAttrName})
        if (Attribute attr = op->getAttr(name))
          made->setAttr(name, attr);
    reshard.getResult().replaceAllUsesWith(*lowered);
    reshard.erase();
    return success();
  }
  if (isa<func::ReturnOp>(op))
    return success();
  if (auto stage = op->getAttrOfType<IntegerAttr>(DpcDialect::kStageAttrName);
      stage && stage.getInt() > 0 &&
      !func->hasAttr(DpcDialect::kPipelineStageAttrName))
    return op->emitOpError("runs on pipeline stage ")
           << stage.getInt()
           << ": pipeline stages are not partitioned yet; plan with --pp=1";
  if (isa<TransferOp>(op))
    return op->emitOpError("moves a value between pipeline stages, which are "
                           "not partitioned yet; plan with --pp=1");

  SmallVector<Type> localTypes;
  for (OpResult result : op->getResults()) {
    FailureOr<Type> local =
        getLocal(layouts.lookup(result), result.getType(), op->getLoc());
    if (failed(local))
      return failure();
    localTypes.push_back(*local);
  }
  if (auto shardable = dyn_cast<ShardableOpInterface>(op)) {
    op->setAttr(DpcDialect::kOperandShardingsAttrName,
                builder.getArrayAttr(operandLayouts[op]));
    if (failed(shardable.partition(builder, localTypes)))
      return failure();
  } else if (isa<func::CallOp, RecvOp>(op) ||
             TypeRange(localTypes) == op->getResultTypes()) {
    for (auto [result, type] : llvm::zip_equal(op->getResults(), localTypes))
      result.setType(type);
  } else {
    return op->emitOpError("has no sharding rule, so its split result ")
           << "cannot be computed locally";
  }
  op->removeAttr(DpcDialect::kOperandShardingsAttrName);
  op->removeAttr(DpcDialect::kShardingAttrName);
  return success();
}

LogicalResult FunctionPartitioner::run() {
  if (failed(recordLayouts()))
    return failure();
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    FailureOr<Type> local =
        getLocal(layouts[arg], arg.getType(), func.getLoc());
    if (failed(local))
      return failure();
    arg.setType(*local);
  }
  for (Operation &op : llvm::make_early_inc_range(body.getOperations()))
    if (failed(partitionOp(&op)))
      return failure();

  // The signature follows; each result must be the block its sharding says.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, operand] : llvm::enumerate(ret.getOperands())) {
    auto sharding = func.getResultAttrOfType<ShardingAttr>(
        i, DpcDialect::kShardingAttrName);
    if (!sharding)
      return func.emitError("result #") << i << " has no sharding";
    FailureOr<Type> local =
        getLocal(sharding, func.getResultTypes()[i], func.getLoc());
    if (failed(local))
      return failure();
    if (*local != operand.getType())
      return ret.emitOpError("result #")
             << i << " is " << operand.getType() << " on each rank, but "
             << sharding << " makes it " << *local;
  }
  func.setFunctionType(FunctionType::get(
      func.getContext(), body.getArgumentTypes(), ret.getOperandTypes()));
  func->setAttr(DpcDialect::kPartitionedAttrName,
                UnitAttr::get(func.getContext()));
  return success();
}

namespace {

struct PartitionPass : public dpc::impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.getOps<MeshOp>().empty()) {
      module.emitError("has no dpc.mesh: plan the step (--mesh) before "
                       "partitioning it");
      return signalPassFailure();
    }
    if (hasPipelineStages(module)) {
      // The plan's schedule and chunks, unless the pass is told otherwise.
      auto plan =
          module->getAttrOfType<DictionaryAttr>(DpcDialect::kPlanAttrName);
      auto planned = plan ? plan.getAs<StringAttr>("schedule") : StringAttr();
      auto plannedChunks =
          plan ? plan.getAs<IntegerAttr>("chunks") : IntegerAttr();
      std::string name = !schedule.empty() ? schedule
                         : planned         ? planned.str()
                                           : "1f1b";
      int64_t chunks = plannedChunks ? plannedChunks.getInt() : 1;
      if (failed(splitPipelineStages(module, name, chunks)))
        return signalPassFailure();
    }
    for (auto func :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      // Functions the plan does not cover (the plain @forward) stay.
      if (func->hasAttr(DpcDialect::kPartitionedAttrName) || !isPlanned(func))
        continue;
      if (failed(FunctionPartitioner(func).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
