//===- Tensor.cpp - Values as the interpreter holds them ------------------===//
//
// Construction of compute tensors, and their conversion from and to the
// declared element types: host tensors at the boundary of a call, and the
// rounding or wrapping of every op's results.
//
//===----------------------------------------------------------------------===//

#include "Tensor.h"

#include "dpc/Runtime/FloatConversion.h"

#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

Tensor::Tensor(ElementKind kind, ArrayRef<int64_t> shape) : shape(shape) {
  size_t count = getNumElements();
  switch (kind) {
  case ElementKind::F32:
    data = Storage<float>(count);
    break;
  case ElementKind::F64:
    data = Storage<double>(count);
    break;
  case ElementKind::I64:
    data = Storage<int64_t>(count);
    break;
  }
}

int64_t Tensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

void Tensor::setShape(ArrayRef<int64_t> newShape) {
  shape.assign(newShape.begin(), newShape.end());
  assert(getNumElements() ==
             static_cast<int64_t>(std::visit(
                 [](const auto &values) { return values.size(); }, data)) &&
         "reshape changes the number of elements");
}

SmallVector<int64_t> interpreter::getStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

ElementKind interpreter::getElementKind(Type type, Precision precision) {
  if (isa<IntegerType>(type))
    return ElementKind::I64;
  if (type.isF64() || precision == Precision::F64)
    return ElementKind::F64;
  return ElementKind::F32;
}

void interpreter::conformToType(Tensor &tensor, Type elementType,
                                Precision precision) {
  if (auto integer = dyn_cast<IntegerType>(elementType)) {
    unsigned width = integer.getWidth();
    if (width < 64)
      for (int64_t &value : tensor.getData<int64_t>())
        value = wrapToWidth(value, width);
    return;
  }
  if (precision == Precision::F64 || tensor.getKind() != ElementKind::F32)
    return;
  if (elementType.isF16())
    for (float &value : tensor.getData<float>())
      value = ::dpc::roundToHalf(value);
  else if (elementType.isBF16())
    for (float &value : tensor.getData<float>())
      value = ::dpc::roundToBFloat16(value);
}

std::optional<DType> mlir::dpc::getDTypeOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  Type element = tensor.getElementType();
  if (element.isF32())
    return DType::F32;
  if (element.isF64())
    return DType::F64;
  if (element.isF16())
    return DType::F16;
  if (element.isBF16())
    return DType::BF16;
  if (element.isSignlessInteger(64))
    return DType::I64;
  if (element.isSignlessInteger(32))
    return DType::I32;
  if (element.isSignlessInteger(16))
    return DType::I16;
  if (element.isSignlessInteger(8))
    return DType::I8;
  if (element.isSignlessInteger(1))
    return DType::Bool;
  return std::nullopt;
}

/// The MLIR spelling of a host tensor's type, for messages.
static std::string describe(const HostTensor &tensor) {
  static const char *const names[] = {"f32", "f64", "f16", "bf16", "i64",
                                      "i32", "i16", "i8",  "ui8",  "i1"};
  std::string text = "tensor<";
  for (int64_t size : tensor.shape)
    text += std::to_string(size) + "x";
  return text + names[static_cast<int>(tensor.dtype)] + ">";
}

std::optional<std::string>
mlir::dpc::getArgumentMismatch(Type type, const HostTensor &tensor,
                               Precision precision) {
  std::string expected;
  llvm::raw_string_ostream os(expected);
  os << type;
  std::optional<DType> dtype = getDTypeOf(type);
  if (!dtype)
    return "the interpreter does not support arguments of type " + expected;
  if (static_cast<int64_t>(tensor.data.size()) !=
      tensor.getNumElements() *
          static_cast<int64_t>(::dpc::getDTypeSize(tensor.dtype)))
    return "the tensor's data does not match its shape";
  bool dtypeMatches = tensor.dtype == *dtype;
  // Under F64, floats of any width are accepted: they all become double.
  if (precision == Precision::F64 && ::dpc::isFloatDType(*dtype))
    dtypeMatches = ::dpc::isFloatDType(tensor.dtype);
  ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
  if (!dtypeMatches || ArrayRef<int64_t>(tensor.shape) != shape)
    return "expected " + expected + ", got " + describe(tensor);
  return std::nullopt;
}

namespace {

/// Element `i` of a float host tensor, as double.
double readFloat(const HostTensor &host, int64_t i) {
  switch (host.dtype) {
  case DType::F32:
    return host.getData<float>()[i];
  case DType::F64:
    return host.getData<double>()[i];
  case DType::F16:
    return ::dpc::convertFromHalf(host.getData<uint16_t>()[i]);
  case DType::BF16:
    return ::dpc::convertFromBFloat16(host.getData<uint16_t>()[i]);
  default:
    break;
  }
  return 0.0;
}

/// Element `i` of an integer host tensor.
int64_t readInteger(const HostTensor &host, int64_t i) {
  switch (host.dtype) {
  case DType::I64:
    return host.getData<int64_t>()[i];
  case DType::I32:
    return host.getData<int32_t>()[i];
  case DType::I16:
    return host.getData<int16_t>()[i];
  case DType::I8:
    return host.getData<int8_t>()[i];
  case DType::U8:
    return host.getData<uint8_t>()[i];
  case DType::Bool:
    return host.getData<uint8_t>()[i] != 0;
  default:
    break;
  }
  return 0;
}

} // namespace

Tensor interpreter::fromHostTensor(const HostTensor &host, Type type,
                                   Precision precision) {
  auto tensorType = cast<RankedTensorType>(type);
  Tensor tensor(getElementKind(tensorType.getElementType(), precision),
                tensorType.getShape());
  int64_t count = tensor.getNumElements();
  dispatchKind(tensor.getKind(), [&](auto zero) {
    using T = decltype(zero);
    MutableArrayRef<T> values = tensor.getData<T>();
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_floating_point_v<T>)
        values[i] = static_cast<T>(readFloat(host, i));
      else
        values[i] = readInteger(host, i);
    }
  });
  return tensor;
}

HostTensor interpreter::toHostTensor(const Tensor &tensor, Type type,
                                     Precision precision) {
  auto tensorType = cast<RankedTensorType>(type);
  DType dtype = *getDTypeOf(type);
  if (precision == Precision::F64 && ::dpc::isFloatDType(dtype))
    dtype = DType::F64;
  HostTensor host(dtype, std::vector<int64_t>(tensorType.getShape().begin(),
                                              tensorType.getShape().end()));
  int64_t count = tensor.getNumElements();
  dispatchKind(tensor.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> values = tensor.getData<T>();
    for (int64_t i = 0; i < count; ++i) {
      T value = values[i];
      switch (dtype) {
      case DType::F32:
        host.getData<float>()[i] = static_cast<float>(value);
        break;
      case DType::F64:
        host.getData<double>()[i] = static_cast<double>(value);
        break;
      case DType::F16:
        host.getData<uint16_t>()[i] =
            ::dpc::convertToHalf(static_cast<double>(value));
        break;
      case DType::BF16:
        host.getData<uint16_t>()[i] =
            ::dpc::convertToBFloat16(static_cast<double>(value));
        break;
      case DType::I64:
        host.getData<int64_t>()[i] = static_cast<int64_t>(value);
        break;
      case DType::I32:
        host.getData<int32_t>()[i] = static_cast<int32_t>(value);
        break;
      case DType::I16:
        host.getData<int16_t>()[i] = static_cast<int16_t>(value);
        break;
      case DType::I8:
        host.getData<int8_t>()[i] = static_cast<int8_t>(value);
        break;
      case DType::U8:
      case DType::Bool:
        host.getData<uint8_t>()[i] = static_cast<uint8_t>(value);
        break;
      }
    }
  });
  return host;
}
