//===- DpcAttrs.cpp - Shardings and phases --------------------------------===//
//
// The syntax and the checks of #dpc.sharding: (C1) needs only the
// attribute; (C2)-(C5) need the mesh it names and the type of the value it
// describes, so they run where the attribute is attached.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dpc;

#define GET_ATTRDEF_CLASSES
#include "dpc/Dialect/Dpc/IR/DpcAttrs.cpp.inc"

void DpcDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dpc/Dialect/Dpc/IR/DpcAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

ShardingAttr
ShardingAttr::get(MLIRContext *context, StringRef mesh,
                  ArrayRef<SmallVector<StringRef>> dims,
                  ArrayRef<std::pair<StringRef, ReductionKind>> partial) {
  Builder builder(context);
  SmallVector<Attribute> dimAttrs;
  for (ArrayRef<StringRef> axes : dims)
    dimAttrs.push_back(builder.getStrArrayAttr(axes));
  SmallVector<Attribute> partialAxes;
  SmallVector<ReductionKind> partialKinds;
  for (auto [axis, kind] : partial) {
    partialAxes.push_back(builder.getStringAttr(axis));
    partialKinds.push_back(kind);
  }
  return get(context, FlatSymbolRefAttr::get(context, mesh),
             builder.getArrayAttr(dimAttrs), builder.getArrayAttr(partialAxes),
             partialKinds);
}

ShardingAttr ShardingAttr::getReplicated(MLIRContext *context, StringRef mesh,
                                         unsigned rank) {
  return get(context, mesh, SmallVector<SmallVector<StringRef>>(rank), {});
}

SmallVector<StringRef> ShardingAttr::getDimAxes(unsigned dim) const {
  SmallVector<StringRef> axes;
  for (Attribute axis : cast<ArrayAttr>(getDims()[dim]))
    axes.push_back(cast<StringAttr>(axis).getValue());
  return axes;
}

std::optional<ReductionKind>
ShardingAttr::getPartialKind(StringRef axis) const {
  for (auto [name, kind] : llvm::zip_equal(getPartialAxes(), getPartialKinds()))
    if (cast<StringAttr>(name).getValue() == axis)
      return kind;
  return std::nullopt;
}

ShardingAttr ShardingAttr::withoutPartial() const {
  MLIRContext *context = getContext();
  return get(context, getMesh(), getDims(), ArrayAttr::get(context, {}), {});
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh, ArrayAttr dims,
                                   ArrayAttr partialAxes,
                                   ArrayRef<ReductionKind> kinds) {
  if (!mesh)
    return emitError() << "a sharding names its mesh";
  if (partialAxes.size() != kinds.size())
    return emitError() << "every partial axis has a reduction kind";
  llvm::StringSet<> seen;
  auto use = [&](Attribute axis) -> LogicalResult {
    auto name = dyn_cast<StringAttr>(axis);
    if (!name || name.getValue().empty())
      return emitError() << "mesh axes are named by non-empty strings";
    if (!seen.insert(name.getValue()).second)
      return emitError() << "mesh axis '" << name.getValue()
                         << "' is used more than once (C1)";
    return success();
  };
  for (Attribute dim : dims) {
    auto axes = dyn_cast<ArrayAttr>(dim);
    if (!axes)
      return emitError() << "each dimension holds an array of axis names";
    for (Attribute axis : axes)
      if (failed(use(axis)))
        return failure();
  }
  for (Attribute axis : partialAxes)
    if (failed(use(axis)))
      return failure();
  return success();
}

/// One axis name: a bare identifier.
static ParseResult parseAxisName(AsmParser &parser,
                                 SmallVectorImpl<Attribute> &axes) {
  StringRef name;
  if (parser.parseKeyword(&name))
    return failure();
  axes.push_back(parser.getBuilder().getStringAttr(name));
  return success();
}

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringAttr mesh;
  if (parser.parseLess() || parser.parseSymbolName(mesh) || parser.parseComma())
    return {};
  SmallVector<Attribute> dims;
  auto parseDim = [&]() -> ParseResult {
    SmallVector<Attribute> axes;
    if (succeeded(parser.parseOptionalStar())) {
      // A whole dimension.
    } else if (succeeded(parser.parseOptionalLParen())) {
      if (parser.parseCommaSeparatedList(
              [&] { return parseAxisName(parser, axes); }) ||
          parser.parseRParen())
        return failure();
    } else if (parseAxisName(parser, axes)) {
      return failure();
    }
    dims.push_back(ArrayAttr::get(context, axes));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return {};
  SmallVector<Attribute> partialAxes;
  SmallVector<ReductionKind> kinds;
  if (succeeded(parser.parseOptionalComma())) {
    auto parsePartial = [&]() -> ParseResult {
      StringRef kindName;
      SMLoc kindLoc;
      if (parseAxisName(parser, partialAxes) || parser.parseColon())
        return failure();
      kindLoc = parser.getCurrentLocation();
      if (parser.parseKeyword(&kindName))
        return failure();
      std::optional<ReductionKind> kind = symbolizeReductionKind(kindName);
      if (!kind)
        return parser.emitError(kindLoc, "unknown reduction kind '")
               << kindName << "' (expected sum, mean, max or min)";
      kinds.push_back(*kind);
      return success();
    };
    if (parser.parseKeyword("partial") || parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                       parsePartial))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(
      loc, context, FlatSymbolRefAttr::get(mesh), ArrayAttr::get(context, dims),
      ArrayAttr::get(context, partialAxes), kinds);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printSymbolName(getMesh().getValue());
  printer << ", [";
  for (unsigned dim = 0; dim < getRank(); ++dim) {
    if (dim)
      printer << ", ";
    SmallVector<StringRef> axes = getDimAxes(dim);
    if (axes.empty())
      printer << "*";
    else if (axes.size() == 1)
      printer << axes.front();
    else
      printer << "(" << llvm::join(axes, ", ") << ")";
  }
  printer << "]";
  if (isPartial()) {
    printer << ", partial = [";
    llvm::interleaveComma(llvm::zip_equal(getPartialAxes(), getPartialKinds()),
                          printer, [&](auto entry) {
                            auto [axis, kind] = entry;
                            printer << cast<StringAttr>(axis).getValue()
                                    << " : " << stringifyReductionKind(kind);
                          });
    printer << "]";
  }
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Checks against the mesh and the value
//===----------------------------------------------------------------------===//

MeshOp mlir::dpc::lookupMesh(ShardingAttr sharding, Operation *scope) {
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(scope,
                                                      sharding.getMesh());
}

LogicalResult
mlir::dpc::verifyShardingFor(ShardingAttr sharding, Type type, Operation *scope,
                             function_ref<InFlightDiagnostic()> emitError) {
  MeshOp mesh = lookupMesh(sharding, scope);
  if (!mesh)
    return emitError() << "sharding " << sharding << " names no dpc.mesh (C2)";
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || shaped.getRank() != int64_t(sharding.getRank()))
    return emitError() << "sharding " << sharding << " has "
                       << sharding.getRank() << " dimensions for a value of "
                       << "type " << type << " (C3)";
  auto sizeOf = [&](StringRef axis) -> FailureOr<int64_t> {
    std::optional<int64_t> size = mesh.getAxisSize(axis);
    if (!size)
      return emitError() << "sharding " << sharding << ": '" << axis
                         << "' is not an axis of mesh @" << mesh.getSymName()
                         << " (C4)";
    return *size;
  };
  for (Attribute axis : sharding.getPartialAxes())
    if (failed(sizeOf(cast<StringAttr>(axis).getValue())))
      return failure();
  for (unsigned dim = 0; dim < sharding.getRank(); ++dim) {
    int64_t shards = 1;
    for (StringRef axis : sharding.getDimAxes(dim)) {
      FailureOr<int64_t> size = sizeOf(axis);
      if (failed(size))
        return failure();
      shards *= *size;
    }
    if (shaped.getDimSize(dim) % shards != 0)
      return emitError() << "sharding " << sharding << " splits dimension "
                         << dim << " of size " << shaped.getDimSize(dim)
                         << " into " << shards
                         << " shards, which does not divide it (C5)";
  }
  return success();
}

ShardingAttr mlir::dpc::getCanonicalSharding(ShardingAttr sharding,
                                             MeshOp mesh) {
  auto isUnit = [&](Attribute axis) {
    return mesh.getAxisSize(cast<StringAttr>(axis).getValue()) == 1;
  };
  MLIRContext *context = sharding.getContext();
  SmallVector<Attribute> dims;
  for (Attribute dim : sharding.getDims()) {
    SmallVector<Attribute> axes;
    llvm::copy_if(cast<ArrayAttr>(dim), std::back_inserter(axes),
                  [&](Attribute axis) { return !isUnit(axis); });
    dims.push_back(ArrayAttr::get(context, axes));
  }
  SmallVector<Attribute> partialAxes;
  SmallVector<ReductionKind> kinds;
  for (Attribute axis : mesh.getAxisNames())
    if (!isUnit(axis))
      if (std::optional<ReductionKind> kind =
              sharding.getPartialKind(cast<StringAttr>(axis).getValue())) {
        partialAxes.push_back(axis);
        kinds.push_back(*kind);
      }
  return ShardingAttr::get(context, sharding.getMesh(),
                           ArrayAttr::get(context, dims),
                           ArrayAttr::get(context, partialAxes), kinds);
}

/// The number of blocks `sharding` splits each dimension into on `mesh`.
static SmallVector<int64_t> getShardCounts(ShardingAttr sharding, MeshOp mesh) {
  SmallVector<int64_t> counts;
  for (unsigned dim = 0; dim < sharding.getRank(); ++dim) {
    int64_t shards = 1;
    for (StringRef axis : sharding.getDimAxes(dim))
      shards *= mesh.getAxisSize(axis).value_or(1);
    counts.push_back(shards);
  }
  return counts;
}

RankedTensorType mlir::dpc::getLocalType(ShardingAttr sharding,
                                         RankedTensorType global, MeshOp mesh) {
  SmallVector<int64_t> shape(global.getShape());
  for (auto [size, shards] :
       llvm::zip_equal(shape, getShardCounts(sharding, mesh)))
    size /= shards;
  return global.clone(shape);
}

RankedTensorType mlir::dpc::getGlobalType(ShardingAttr sharding,
                                          RankedTensorType local, MeshOp mesh) {
  SmallVector<int64_t> shape(local.getShape());
  for (auto [size, shards] :
       llvm::zip_equal(shape, getShardCounts(sharding, mesh)))
    size *= shards;
  return local.clone(shape);
}

SmallVector<int64_t> mlir::dpc::getDeviceCoordinates(MeshOp mesh,
                                                     int64_t device) {
  ArrayRef<int64_t> meshShape = mesh.getShape();
  int64_t position = device;
  if (std::optional<ArrayRef<int64_t>> ids = mesh.getDevices())
    position = llvm::find(*ids, device) - ids->begin();
  SmallVector<int64_t> coordinates(meshShape.size());
  for (int64_t i = meshShape.size() - 1; i >= 0; --i) {
    coordinates[i] = position % meshShape[i];
    position /= meshShape[i];
  }
  return coordinates;
}

SmallVector<int64_t> mlir::dpc::getBlockStart(ShardingAttr sharding,
                                              MeshOp mesh, int64_t device,
                                              ArrayRef<int64_t> globalShape) {
  ArrayRef<int64_t> meshShape = mesh.getShape();
  SmallVector<int64_t> coordinates = getDeviceCoordinates(mesh, device);
  SmallVector<int64_t> start;
  for (auto [dim, size] : llvm::enumerate(globalShape)) {
    // The block index is mixed-radix over the dimension's axes, the first
    // axis most significant.
    int64_t block = 0, blocks = 1;
    for (StringRef axis : sharding.getDimAxes(dim)) {
      unsigned index = *mesh.getAxisIndex(axis);
      block = block * meshShape[index] + coordinates[index];
      blocks *= meshShape[index];
    }
    start.push_back(block * (size / blocks));
  }
  return start;
}

SmallVector<ShardingAttr> mlir::dpc::getResultShardings(Operation *op) {
  SmallVector<ShardingAttr> shardings;
  auto array = op->getAttrOfType<ArrayAttr>(DpcDialect::kShardingAttrName);
  if (!array)
    return shardings;
  for (Attribute element : array)
    shardings.push_back(dyn_cast<ShardingAttr>(element));
  return shardings;
}

ShardingAttr mlir::dpc::getSharding(Value value) {
  if (auto result = dyn_cast<OpResult>(value)) {
    if (auto reshard = dyn_cast<ReshardOp>(result.getOwner()))
      return reshard.getSharding();
    SmallVector<ShardingAttr> shardings = getResultShardings(result.getOwner());
    return result.getResultNumber() < shardings.size()
               ? shardings[result.getResultNumber()]
               : ShardingAttr();
  }
  auto arg = cast<BlockArgument>(value);
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return {};
  return func.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(),
                                             DpcDialect::kShardingAttrName);
}

bool mlir::dpc::isPlanned(FunctionOpInterface func) {
  if (func.getNumArguments() == 0)
    return false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (!func.getArgAttr(i, DpcDialect::kShardingAttrName))
      return false;
  return true;
}
