//===- Tensor.h - Values as the interpreter holds them ----------*- C++ -*-===//
//
// Inside the interpreter every value is a row-major tensor of one of three
// compute types: float, double or int64_t. Narrow types are held in a wider
// one: f16 and bf16 in float (rounded to their type after every op), and
// every integer type, i1 included, in int64_t (wrapped to its width after
// every op: sign-extended, and 0 or 1 for i1). Kernels then come in three
// instances at most, and the conversion to and from the declared types
// happens in one place.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_LIB_INTERPRETER_TENSOR_H
#define DPC_LIB_INTERPRETER_TENSOR_H

#include "dpc/Interpreter/Interpreter.h"
#include "dpc/Runtime/HugePageAllocator.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <type_traits>
#include <variant>
#include <vector>

namespace mlir::dpc::interpreter {

/// The compute type of a tensor's elements.
enum class ElementKind { F32, F64, I64 };

/// The compute type that holds `T`.
template <typename T> constexpr ElementKind getElementKindOf() {
  if constexpr (std::is_same_v<T, float>)
    return ElementKind::F32;
  else if constexpr (std::is_same_v<T, double>)
    return ElementKind::F64;
  else {
    static_assert(std::is_same_v<T, int64_t>, "not a compute type");
    return ElementKind::I64;
  }
}

/// The elements of a tensor.
template <typename T>
using Storage = std::vector<T, ::dpc::HugePageAllocator<T>>;

/// A dense row-major tensor of one compute type.
class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(ElementKind kind, ArrayRef<int64_t> shape);

  ElementKind getKind() const { return static_cast<ElementKind>(data.index()); }
  bool isFloat() const { return getKind() != ElementKind::I64; }
  ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return shape.size(); }
  int64_t getNumElements() const;

  template <typename T> MutableArrayRef<T> getData() {
    return std::get<Storage<T>>(data);
  }
  template <typename T> ArrayRef<T> getData() const {
    return std::get<Storage<T>>(data);
  }

  /// The same elements under another shape with as many elements.
  void setShape(ArrayRef<int64_t> newShape);

private:
  SmallVector<int64_t> shape;
  // The alternatives are in ElementKind's order.
  std::variant<Storage<float>, Storage<double>, Storage<int64_t>> data;
};

/// Calls `fn` with a value of the C++ type of `kind` (0.0f, 0.0 or 0), so
/// that a generic lambda can name the element type with decltype.
template <typename Fn> decltype(auto) dispatchKind(ElementKind kind, Fn &&fn) {
  switch (kind) {
  case ElementKind::F32:
    return fn(float());
  case ElementKind::F64:
    return fn(double());
  case ElementKind::I64:
    break;
  }
  return fn(int64_t());
}

/// Like dispatchKind, for kernels that only exist for floats; `kind` must
/// not be I64 (the verifiers guarantee it).
template <typename Fn>
decltype(auto) dispatchFloatKind(ElementKind kind, Fn &&fn) {
  if (kind == ElementKind::F64)
    return fn(double());
  return fn(float());
}

/// Row-major strides of `shape`, in elements.
SmallVector<int64_t> getStrides(ArrayRef<int64_t> shape);

/// The compute type of values of element type `type` under `precision`.
ElementKind getElementKind(Type type, Precision precision);

/// Rounds or wraps the elements of `tensor`, computed in its compute type,
/// to `elementType`: f16/bf16 are rounded (under Precision::F32) and
/// integers wrapped to their width.
void conformToType(Tensor &tensor, Type elementType, Precision precision);

/// `value` wrapped to a `width`-bit integer held in int64_t:
/// sign-extended, except that i1 is 0 or 1.
inline int64_t wrapToWidth(int64_t value, unsigned width) {
  if (width >= 64)
    return value;
  if (width == 1)
    return value & 1;
  uint64_t shift = 64 - width;
  return static_cast<int64_t>(static_cast<uint64_t>(value) << shift) >> shift;
}

/// The tensor of `type` (a ranked tensor type) holding `host`, converted
/// to its compute type. `host` must have been checked against `type`.
Tensor fromHostTensor(const HostTensor &host, Type type, Precision precision);

/// The host tensor for the value `tensor` of `type`: in the declared
/// dtype, except that floats are f64 under Precision::F64.
HostTensor toHostTensor(const Tensor &tensor, Type type, Precision precision);

} // namespace mlir::dpc::interpreter

#endif // DPC_LIB_INTERPRETER_TENSOR_H
