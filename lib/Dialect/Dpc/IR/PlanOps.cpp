//===- PlanOps.cpp - dpc.mesh, dpc.reshard and dpc.transfer ---------------===//
//
// The ops that carry a plan rather than compute: the mesh a plan runs on,
// the abstract change of a value's sharding, and a value's move between
// pipeline stages.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::dpc;

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

std::optional<int64_t> MeshOp::getAxisSize(StringRef name) {
  for (auto [axis, size] : llvm::zip(getAxisNames(), getShape()))
    if (cast<StringAttr>(axis).getValue() == name)
      return size;
  return std::nullopt;
}

std::optional<unsigned> MeshOp::getAxisIndex(StringRef name) {
  for (auto [i, axis] : llvm::enumerate(getAxisNames()))
    if (cast<StringAttr>(axis).getValue() == name)
      return i;
  return std::nullopt;
}

SmallVector<int64_t> MeshOp::getGroup(int64_t device, ArrayRef<StringRef> axes) {
  ArrayRef<int64_t> shape = getShape();
  // A position in the mesh is the row-major index of its coordinates; the
  // device there is that index, or its entry in `devices`.
  std::optional<ArrayRef<int64_t>> ids = getDevices();
  int64_t position = device;
  if (ids)
    position = llvm::find(*ids, device) - ids->begin();
  SmallVector<int64_t> coordinates(shape.size());
  for (int64_t i = shape.size() - 1, rest = position; i >= 0; --i) {
    coordinates[i] = rest % shape[i];
    rest /= shape[i];
  }
  SmallVector<unsigned> varying;
  int64_t size = 1;
  for (StringRef axis : axes) {
    varying.push_back(*getAxisIndex(axis));
    size *= shape[varying.back()];
  }
  SmallVector<int64_t> group;
  for (int64_t member = 0; member < size; ++member) {
    // The member's coordinates along `axes`, the first axis major.
    for (int64_t i = varying.size() - 1, rest = member; i >= 0; --i) {
      coordinates[varying[i]] = rest % shape[varying[i]];
      rest /= shape[varying[i]];
    }
    int64_t at = 0;
    for (auto [coordinate, extent] : llvm::zip_equal(coordinates, shape))
      at = at * extent + coordinate;
    group.push_back(ids ? (*ids)[at] : at);
  }
  return group;
}

int64_t MeshOp::getNumDevices() {
  int64_t devices = 1;
  for (int64_t size : getShape())
    devices *= size;
  return devices;
}

ParseResult MeshOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  SmallVector<Attribute> axes;
  SmallVector<int64_t> shape;
  Builder &builder = parser.getBuilder();
  auto parseAxis = [&]() -> ParseResult {
    std::string axis;
    int64_t size;
    if (parser.parseString(&axis) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    axes.push_back(builder.getStringAttr(axis));
    shape.push_back(size);
    return success();
  };
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes) ||
      parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseAxis))
    return failure();
  result.addAttribute(getAxisNamesAttrName(result.name),
                      builder.getArrayAttr(axes));
  result.addAttribute(getShapeAttrName(result.name),
                      builder.getDenseI64ArrayAttr(shape));
  if (succeeded(parser.parseOptionalKeyword("devices"))) {
    SmallVector<int64_t> devices;
    if (parser.parseEqual() ||
        parser.parseCommaSeparatedList(
            OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
              return parser.parseInteger(devices.emplace_back());
            }))
      return failure();
    result.addAttribute(getDevicesAttrName(result.name),
                        builder.getDenseI64ArrayAttr(devices));
  }
  return parser.parseOptionalAttrDict(result.attributes);
}

void MeshOp::print(OpAsmPrinter &printer) {
  printer << " ";
  printer.printSymbolName(getSymName());
  printer << " [";
  llvm::interleaveComma(
      llvm::zip(getAxisNames(), getShape()), printer, [&](auto axis) {
        printer << "\"" << cast<StringAttr>(std::get<0>(axis)).getValue()
                << "\"=" << std::get<1>(axis);
      });
  printer << "]";
  if (std::optional<ArrayRef<int64_t>> devices = getDevices()) {
    printer << " devices = [";
    llvm::interleaveComma(*devices, printer);
    printer << "]";
  }
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                {getSymNameAttrName(), getAxisNamesAttrName(),
                                 getShapeAttrName(), getDevicesAttrName()});
}

static bool isIdentifier(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name.front()) || name.front() == '_'))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

LogicalResult MeshOp::verify() {
  if (getShape().empty() || getAxisNames().size() != getShape().size())
    return emitOpError("has ")
           << getShape().size() << " axis sizes and " << getAxisNames().size()
           << " axis names, and needs at least one (C1)";
  llvm::StringSet<> names;
  for (Attribute axis : getAxisNames()) {
    StringRef name = cast<StringAttr>(axis).getValue();
    if (!isIdentifier(name))
      return emitOpError("axis name '")
             << name << "' is not an identifier (C2)";
    if (!names.insert(name).second)
      return emitOpError("axis name '") << name << "' appears twice (C2)";
  }
  constexpr int64_t kMaxDevices = int64_t(1) << 31;
  int64_t devices = 1;
  for (auto [axis, size] : llvm::zip(getAxisNames(), getShape())) {
    if (size < 1)
      return emitOpError("axis '")
             << cast<StringAttr>(axis).getValue() << "' has size " << size
             << "; sizes are at least 1 (C3)";
    if (size > kMaxDevices || devices > kMaxDevices / size)
      return emitOpError("has more than 2^31 devices (C3)");
    devices *= size;
  }
  if (std::optional<ArrayRef<int64_t>> ids = getDevices()) {
    SmallVector<bool> seen(devices, false);
    bool permutation = int64_t(ids->size()) == devices;
    for (int64_t id : *ids) {
      permutation = permutation && id >= 0 && id < devices && !seen[id];
      if (!permutation)
        break;
      seen[id] = true;
    }
    if (!permutation)
      return emitOpError("devices must be a permutation of 0..")
             << devices - 1 << " (C4)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReshardOp
//===----------------------------------------------------------------------===//

LogicalResult ReshardOp::verify() {
  // (C1) is AllTypesMatch's.
  return verifyShardingFor(getSharding(), getResult().getType(), *this,
                           [&] { return emitOpError("(C2): "); });
}

//===----------------------------------------------------------------------===//
// TransferOp
//===----------------------------------------------------------------------===//

LogicalResult TransferOp::verify() {
  // (C1) is AllTypesMatch's.
  int64_t from = getFromAttr().getInt(), to = getToAttr().getInt();
  if (from < 0 || to < 0 || from == to)
    return emitOpError("moves from stage ")
           << from << " to stage " << to
           << "; stages are distinct and non-negative (C2)";
  return success();
}
