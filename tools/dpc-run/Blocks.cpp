//===- Blocks.cpp - A rank's blocks of whole tensors ----------------------===//

#include "Blocks.h"

#include <cmath>
#include <cstring>

using namespace mlir::dpc;
using namespace mlir::dpc::artifact;

std::string artifact::formatShape(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (int64_t size : shape)
    text += (text.empty() ? "" : "x") + std::to_string(size);
  return text;
}

Status artifact::convertForSpec(const TensorSpec &spec,
                                const HostTensor &tensor, HostTensor &out) {
  if (tensor.shape != spec.shape)
    return Status::error(spec.role + " '" + spec.name + "' has shape " +
                         formatShape(tensor.shape) + ", the step takes " +
                         formatShape(spec.shape));
  out = HostTensor(spec.dtype, spec.shape);
  int64_t n = tensor.getNumElements();
  auto read = [&](int64_t i) -> double {
    switch (tensor.dtype) {
    case DType::F32:
      return tensor.getData<float>()[i];
    case DType::F64:
      return tensor.getData<double>()[i];
    case DType::I64:
      return double(tensor.getData<int64_t>()[i]);
    case DType::I32:
      return tensor.getData<int32_t>()[i];
    case DType::Bool:
    case DType::U8:
      return tensor.getData<uint8_t>()[i];
    default:
      return std::nan("");
    }
  };
  if (spec.dtype == DType::I64 && tensor.dtype == DType::I64) {
    out.data = tensor.data;
    return Status::success();
  }
  for (int64_t i = 0; i < n; ++i) {
    double value = read(i);
    if (std::isnan(value) && !isFloatDType(tensor.dtype))
      return Status::error(spec.role + " '" + spec.name + "' has dtype " +
                           getDTypeName(tensor.dtype) +
                           ", which dpc-run does not convert");
    if (spec.dtype == DType::F32)
      out.getData<float>()[i] = float(value);
    else if (spec.dtype == DType::F64)
      out.getData<double>()[i] = value;
    else
      out.getData<int64_t>()[i] = int64_t(value);
  }
  return Status::success();
}

std::vector<std::byte> artifact::extractBlock(const TensorSpec &spec,
                                              const HostTensor &global,
                                              int rank) {
  size_t element = getDTypeSize(spec.dtype);
  int64_t count = 1;
  for (int64_t size : spec.localShape)
    count *= size;
  std::vector<std::byte> block(count * element);
  forEachRow(spec.shape, spec.localShape, spec.blocks[rank], element,
             [&](size_t from, size_t to, size_t bytes) {
               std::memcpy(block.data() + to, global.data.data() + from, bytes);
             });
  return block;
}

void artifact::insertBlock(const TensorSpec &spec, HostTensor &global, int rank,
                           const std::byte *block) {
  forEachRow(spec.shape, spec.localShape, spec.blocks[rank],
             getDTypeSize(spec.dtype),
             [&](size_t to, size_t from, size_t bytes) {
               std::memcpy(global.data.data() + to, block + from, bytes);
             });
}
