//===- Constant.cpp - Elements of constant attributes ---------------------===//
//
// Reads the elements of a `dpc.constant` or `arith.constant` into a
// compute tensor: dense elements (splat or not) and dense resources, whose
// blob holds the elements in their little-endian storage layout.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dpc/Runtime/FloatConversion.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

/// Element `i` of a resource blob of element type `type`, as double or
/// int64 (whichever `T` is).
template <typename T>
static T readStorage(ArrayRef<char> blob, Type type, int64_t i) {
  unsigned bytes = (type.getIntOrFloatBitWidth() + 7) / 8;
  const char *at = blob.data() + i * bytes;
  if constexpr (std::is_floating_point_v<T>) {
    if (type.isF32()) {
      float value;
      std::memcpy(&value, at, 4);
      return value;
    }
    if (type.isF64()) {
      double value;
      std::memcpy(&value, at, 8);
      return static_cast<T>(value);
    }
    uint16_t bits;
    std::memcpy(&bits, at, 2);
    return type.isF16() ? ::dpc::convertFromHalf(bits)
                        : ::dpc::convertFromBFloat16(bits);
  } else {
    uint64_t value = 0;
    std::memcpy(&value, at, bytes); // little-endian host
    return static_cast<T>(value);   // wrapped to the width afterwards
  }
}

FailureOr<Tensor> interpreter::materializeConstant(Operation *op,
                                                   ElementsAttr value,
                                                   Precision precision) {
  auto type = cast<ShapedType>(value.getType());
  Type elementType = type.getElementType();
  Tensor tensor(getElementKind(elementType, precision), type.getShape());
  int64_t count = tensor.getNumElements();

  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    dispatchKind(tensor.getKind(), [&](auto zero) {
      using T = decltype(zero);
      MutableArrayRef<T> out = tensor.getData<T>();
      int64_t i = 0;
      if constexpr (std::is_floating_point_v<T>) {
        if (elementType.isF32()) {
          for (float element : dense.getValues<float>())
            out[i++] = element;
        } else {
          for (const APFloat &element : dense.getValues<APFloat>())
            out[i++] = static_cast<T>(element.convertToDouble());
        }
      } else {
        for (const APInt &element : dense.getValues<APInt>())
          out[i++] = element.getSExtValue();
      }
    });
    return tensor;
  }

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op->emitError("the constant's resource '")
             << resource.getRawHandle().getKey() << "' has no data";
    ArrayRef<char> data = blob->getData();
    int64_t bytes = (elementType.getIntOrFloatBitWidth() + 7) / 8;
    if (static_cast<int64_t>(data.size()) != count * bytes)
      return op->emitError("the constant's resource holds ")
             << data.size() << " bytes, its type needs " << count * bytes;
    dispatchKind(tensor.getKind(), [&](auto zero) {
      using T = decltype(zero);
      MutableArrayRef<T> out = tensor.getData<T>();
      for (int64_t i = 0; i < count; ++i)
        out[i] = readStorage<T>(data, elementType, i);
    });
    return tensor;
  }
  return op->emitError("the interpreter does not support constants of kind ")
         << value;
}
