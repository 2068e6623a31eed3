//===- DpcDialect.cpp - The dpc dialect -----------------------------------===//
//
// Registers the ops and checks the `dpc.*` argument attributes that mark
// parameters, state and inputs.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::dpc;

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
  if (name == kShardingAttrName && !isa<StringAttr>(attribute.getValue()))
    return op->emitError("'")
           << name << "' must be a string such as \"[dp, *, tp]\"";
  if (!isa<StringAttr>(attribute.getValue()))
    return op->emitError("'")
           << name << "' must hold the tensor's name as a string";
  if (name == kInputAttrName || name == kHyperAttrName ||
      name == kShardingAttrName)
    return success();
  // Parameters and state are floating-point tensors: they are updated by
  // the optimizer or by running statistics.
  Type type = op->getRegion(regionIndex).getArgument(argIndex).getType();
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
  if (name == kShardingAttrName && !isa<StringAttr>(attribute.getValue()))
    return op->emitError("'")
           << name << "' must be a string such as \"[dp, *, tp]\"";
  if (!isa<StringAttr>(attribute.getValue()))
    return op->emitError("'")
           << name << "' must hold the tensor's name as a string";
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
