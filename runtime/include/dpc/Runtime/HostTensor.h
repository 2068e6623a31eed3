//===- HostTensor.h - A dense tensor in host memory -------------*- C++ -*-===//
//
// The tensor value that crosses every boundary outside the IR: model
// weights read by the importer, interpreter inputs and outputs, and the
// initial parameters of an artifact. No MLIR dependency, so the runtime
// links it too.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_HOSTTENSOR_H
#define DPC_RUNTIME_HOSTTENSOR_H

#include "dpc/Runtime/HugePageAllocator.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dpc {

/// Element types a host tensor can hold.
enum class DType { F32, F64, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// Size of one element in bytes (Bool is one byte).
size_t getDTypeSize(DType dtype);

/// Short name, as in NumPy: "float32", "int64", "bool", ...
const char *getDTypeName(DType dtype);

/// Whether `dtype` is one of the floating-point types.
bool isFloatDType(DType dtype);

/// The bytes of a tensor; large blocks on huge pages.
using Bytes = std::vector<std::byte, HugePageAllocator<std::byte>>;

/// A dense row-major tensor.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Bytes data;

  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);

  int64_t getNumElements() const;
  size_t getSizeInBytes() const { return data.size(); }

  template <typename T> T *getData() {
    return reinterpret_cast<T *>(data.data());
  }
  template <typename T> const T *getData() const {
    return reinterpret_cast<const T *>(data.data());
  }
};

/// A tensor with the name it has in the model.
struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

} // namespace dpc

#endif // DPC_RUNTIME_HOSTTENSOR_H
