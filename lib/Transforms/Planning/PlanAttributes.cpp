//===- PlanAttributes.cpp - The plan's mesh and shardings in the IR -------===//

#include "dpc/Transforms/Planning/PlanAttributes.h"

#include "mlir/IR/Builders.h"

#include <array>

using namespace mlir;
using namespace mlir::dpc;

MeshOp mlir::dpc::writePlanMesh(ModuleOp module, int64_t stages,
                                int64_t dataParallel, int64_t tensorParallel,
                                bool dataInner) {
  if (auto old = module.lookupSymbol<MeshOp>(kPlanMeshName))
    old.erase();
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  SmallVector<StringRef> axes = {kStageAxisName, kDataAxisName,
                                 kTensorAxisName};
  SmallVector<int64_t> shape = {stages, dataParallel, tensorParallel};
  if (dataInner) {
    std::swap(axes[1], axes[2]);
    std::swap(shape[1], shape[2]);
  }
  return MeshOp::create(builder, module.getLoc(), kPlanMeshName,
                        builder.getStrArrayAttr(axes),
                        builder.getDenseI64ArrayAttr(shape),
                        /*devices=*/nullptr);
}

void mlir::dpc::eraseReshards(ModuleOp module) {
  module.walk([](ReshardOp reshard) {
    reshard.getResult().replaceAllUsesWith(reshard.getInput());
    reshard.erase();
  });
}

static StringRef getAxisName(StageAxis axis) {
  return axis == kDataAxis ? kDataAxisName : kTensorAxisName;
}

ShardingAttr mlir::dpc::getShardingAttr(MLIRContext *context,
                                        const TensorSharding &sharding) {
  SmallVector<SmallVector<StringRef>> dims;
  for (unsigned axes : sharding.dims) {
    SmallVector<StringRef> &names = dims.emplace_back();
    // Both axes on one dimension: data-parallel major unless it is minor.
    for (StageAxis axis : sharding.dataMinor
                              ? std::array{kTensorAxis, kDataAxis}
                              : std::array{kDataAxis, kTensorAxis})
      if (axes & axis)
        names.push_back(getAxisName(axis));
  }
  SmallVector<std::pair<StringRef, ReductionKind>> partial;
  for (StageAxis axis : {kDataAxis, kTensorAxis})
    if (sharding.partial & axis)
      partial.emplace_back(getAxisName(axis), sharding.getPartialKind(axis));
  return ShardingAttr::get(context, kPlanMeshName, dims, partial);
}

ArrayAttr mlir::dpc::getShardingArrayAttr(MLIRContext *context,
                                          ArrayRef<TensorSharding> shardings) {
  SmallVector<Attribute> attrs;
  for (const TensorSharding &sharding : shardings)
    attrs.push_back(getShardingAttr(context, sharding));
  return ArrayAttr::get(context, attrs);
}

FailureOr<TensorSharding> mlir::dpc::getTensorSharding(ShardingAttr sharding,
                                                       std::string &error) {
  auto axisOf = [&](StringRef name) -> std::optional<StageAxis> {
    if (name == kDataAxisName)
      return kDataAxis;
    if (name == kTensorAxisName)
      return kTensorAxis;
    error = "the planner places values on the axes 'dp' and 'tp' of "
            "@plan; '" +
            name.str() + "' is not one of them";
    return std::nullopt;
  };
  if (sharding.getMesh().getValue() != kPlanMeshName) {
    error = "the planner plans on mesh @plan, not @" +
            sharding.getMesh().getValue().str();
    return failure();
  }
  TensorSharding result = TensorSharding::replicated(sharding.getRank());
  for (unsigned dim = 0; dim < sharding.getRank(); ++dim) {
    SmallVector<StringRef> names = sharding.getDimAxes(dim);
    for (StringRef name : names) {
      std::optional<StageAxis> axis = axisOf(name);
      if (!axis)
        return failure();
      result.dims[dim] |= *axis;
    }
    if (names.size() == 2 && names.front() != kDataAxisName)
      result.dataMinor = true;
  }
  for (auto [name, kind] :
       llvm::zip_equal(sharding.getPartialAxes(), sharding.getPartialKinds())) {
    std::optional<StageAxis> axis = axisOf(cast<StringAttr>(name).getValue());
    if (!axis)
      return failure();
    result.setPartial(*axis, kind);
  }
  return result;
}
