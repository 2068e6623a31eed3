//===- HostTensor.cpp - A dense tensor in host memory ---------------------===//
//
// Element-type queries and construction of zero-filled host tensors.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/HostTensor.h"

using namespace dpc;

size_t dpc::getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

const char *dpc::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float32";
  case DType::F64:
    return "float64";
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  case DType::I64:
    return "int64";
  case DType::I32:
    return "int32";
  case DType::I16:
    return "int16";
  case DType::I8:
    return "int8";
  case DType::U8:
    return "uint8";
  case DType::Bool:
    return "bool";
  }
  return "unknown";
}

bool dpc::isFloatDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  data.resize(static_cast<size_t>(getNumElements()) * getDTypeSize(dtype));
}

int64_t HostTensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}
