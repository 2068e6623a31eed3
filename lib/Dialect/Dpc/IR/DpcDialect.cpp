//===- DpcDialect.cpp - The dpc dialect -----------------------------------===//
//
// Registers the ops and checks the `dpc.*` argument attributes that mark
// parameters, state and inputs.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::dpc;

static LogicalResult verifyValueSharding(Operation *op, NamedAttribute attr,
                                         Type type, const Twine &what);

#include "dpc/Dialect/Dpc/IR/DpcEnums.cpp.inc"
#include "dpc/Dialect/Dpc/IR/DpcOpsDialect.cpp.inc"

namespace {
/// Every dpc op is pure and region-free, so any of them may be inlined
/// (the training step calls @forward_backward; backends want one body).
struct DpcInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void DpcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dpc/Dialect/Dpc/IR/DpcOps.cpp.inc"
      >();
  registerAttributes();
  addInterfaces<DpcInlinerInterface>();
}

Operation *DpcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

LogicalResult DpcDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  if (name != kParamAttrName && name != kStateAttrName &&
      name != kInputAttrName && name != kOptStateAttrName &&
      name != kHyperAttrName && name != kShardingAttrName)
    return op->emitError("unknown dpc argument attribute '") << name << "'";
  // A function's type names its arguments' types, also where it is a
  // declaration without a body to hold them.
  Type type;
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    type = function.getArgumentTypes()[argIndex];
  else if (Region &region = op->getRegion(regionIndex);
           !region.empty() && argIndex < region.getNumArguments())
    type = region.getArgument(argIndex).getType();
  else
    return op->emitError("'")
           << name << "' marks argument #" << argIndex
           << ", which the op's region does not have";
  if (name == kShardingAttrName)
    return verifyValueSharding(op, attribute, type,
                               "argument #" + Twine(argIndex));
  if (!isa<StringAttr>(attribute.getValue()))
    return op->emitError("'")
           << name << "' must hold the tensor's name as a string";
  if (name == kInputAttrName || name == kHyperAttrName)
    return success();
  // Parameters and state are floating-point tensors: they are updated by
  // the optimizer or by running statistics.
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !isa<FloatType>(tensor.getElementType()))
    return op->emitError("'")
           << name << "' marks argument #" << argIndex << " of type " << type
           << ", which is not a floating-point tensor";
  return success();
}

LogicalResult
DpcDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                        unsigned resultIndex,
                                        NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  if (name == kLossAttrName) {
    if (!isa<UnitAttr>(attribute.getValue()))
      return op->emitError("'") << name << "' is a unit attribute";
    return success();
  }
  if (name != kOutputAttrName && name != kStateAttrName &&
      name != kGradAttrName && name != kOptStateAttrName &&
      name != kParamAttrName && name != kShardingAttrName)
    return op->emitError("unknown dpc result attribute '") << name << "'";
  if (name == kShardingAttrName) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func)
      return op->emitError("'") << name << "' marks results of functions";
    return verifyValueSharding(op, attribute,
                               func.getResultTypes()[resultIndex],
                               "result #" + Twine(resultIndex));
  }
  if (!isa<StringAttr>(attribute.getValue()))
    return op->emitError("'")
           << name << "' must hold the tensor's name as a string";
  return success();
}

/// One #dpc.sharding on a value of type `type`, named `what` in errors. In
/// a partitioned function `type` is local: the sharding describes the
/// global value, whose type it implies.
static LogicalResult verifyValueSharding(Operation *op, NamedAttribute attr,
                                         Type type, const Twine &what) {
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return op->emitError("'")
           << attr.getName().strref() << "' of " << what
           << " must be a #dpc.sharding, such as #dpc.sharding<@plan, [dp, *]>";
  auto tensor = dyn_cast<RankedTensorType>(type);
  MeshOp mesh = lookupMesh(sharding, op);
  if (op->hasAttr(DpcDialect::kPartitionedAttrName) && tensor && mesh &&
      tensor.getRank() == int64_t(sharding.getRank()))
    type = getGlobalType(sharding, tensor, mesh);
  return verifyShardingFor(sharding, type, op,
                           [&] { return op->emitError() << what << ": "; });
}

/// An array of #dpc.sharding, one per value of `values`.
static LogicalResult verifyShardingArray(Operation *op, NamedAttribute attr,
                                         TypeRange values, StringRef what) {
  auto array = dyn_cast<ArrayAttr>(attr.getValue());
  if (!array || array.size() != values.size())
    return op->emitOpError("'")
           << attr.getName().strref() << "' must be an array of "
           << values.size() << " #dpc.sharding, one per " << what;
  for (auto [i, element, type] : llvm::enumerate(array, values)) {
    auto sharding = dyn_cast<ShardingAttr>(element);
    if (!sharding)
      return op->emitOpError("'") << attr.getName().strref() << "' entry " << i
                                  << " is not a #dpc.sharding";
    if (failed(verifyShardingFor(sharding, type, op, [&, i = i] {
          return op->emitOpError() << what << " #" << i << ": ";
        })))
      return failure();
  }
  return success();
}

LogicalResult DpcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  Attribute value = attribute.getValue();
  if (name == kShardingAttrName)
    return verifyShardingArray(op, attribute, op->getResultTypes(), "result");
  if (name == kOperandShardingsAttrName)
    return verifyShardingArray(op, attribute, op->getOperandTypes(), "operand");
  if (name == kStageAttrName) {
    auto stage = dyn_cast<IntegerAttr>(value);
    if (!stage || !stage.getType().isInteger(64) || stage.getInt() < 0)
      return op->emitOpError("'")
             << name << "' must be a non-negative i64 stage index";
    return success();
  }
  if (name == kPhaseAttrName) {
    if (!isa<PhaseAttr>(value))
      return op->emitOpError("'")
             << name << "' must be a #dpc.phase (forward, backward or "
             << "optimizer)";
    return success();
  }
  if (name == kHierarchicalAttrName) {
    auto axes = dyn_cast<ArrayAttr>(value);
    if (!axes || axes.empty() ||
        !llvm::all_of(axes, llvm::IsaPred<StringAttr>) ||
        !op->hasTrait<OpTrait::Communicates>())
      return op->emitOpError("'")
             << name << "' is the non-empty list of axis names of the "
             << "all-reduce a collective is part of";
    return success();
  }
  if (name == kCheckpointAttrName) {
    if (!isa<UnitAttr>(value) || op->getNumResults() == 0)
      return op->emitOpError("'")
             << name << "' is a unit attribute of an op with results";
    return success();
  }
  if (name == kPartitionedAttrName) {
    if (!isa<FunctionOpInterface>(op) || !isa<UnitAttr>(value))
      return op->emitOpError("'")
             << name << "' is a unit attribute of functions";
    return success();
  }
  if (name == kPlanAttrName) {
    if (!isa<ModuleOp>(op) || !isa<DictionaryAttr>(value))
      return op->emitOpError("'") << name << "' is a dictionary on the module";
    return success();
  }
  // Other dpc.* names annotate analyses for tests (-test-dpc-...).
  return success();
}

ArgumentRole mlir::dpc::getArgumentRole(FunctionOpInterface func,
                                        unsigned index) {
  if (func.getArgAttr(index, DpcDialect::kParamAttrName))
    return ArgumentRole::Parameter;
  if (func.getArgAttr(index, DpcDialect::kStateAttrName))
    return ArgumentRole::State;
  if (func.getArgAttr(index, DpcDialect::kInputAttrName))
    return ArgumentRole::Input;
  if (func.getArgAttr(index, DpcDialect::kHyperAttrName))
    return ArgumentRole::Hyper;
  return ArgumentRole::Other;
}

StringRef mlir::dpc::getArgumentName(FunctionOpInterface func, unsigned index) {
  for (StringRef attrName :
       {DpcDialect::kParamAttrName, DpcDialect::kStateAttrName,
        DpcDialect::kInputAttrName, DpcDialect::kOptStateAttrName,
        DpcDialect::kHyperAttrName})
    if (auto name = func.getArgAttrOfType<StringAttr>(index, attrName))
      return name.getValue();
  return {};
}

std::string mlir::dpc::getResultName(FunctionOpInterface func, unsigned index) {
  for (StringRef attrName :
       {DpcDialect::kOutputAttrName, DpcDialect::kParamAttrName,
        DpcDialect::kStateAttrName, DpcDialect::kOptStateAttrName})
    if (auto name = func.getResultAttrOfType<StringAttr>(index, attrName))
      return name.getValue().str();
  if (auto name = func.getResultAttrOfType<StringAttr>(
          index, DpcDialect::kGradAttrName))
    return "grad:" + name.getValue().str();
  return {};
}
