//===- OnnxModelLoader.cpp - Reading ONNX files and tensors ---------------===//
//
// Tensor data may sit in typed repeated fields, in `raw_data` (little
// endian) or in an external file named by `external_data`; all three are
// decoded here, with every size checked before it is trusted.
//
//===----------------------------------------------------------------------===//

#include "OnnxModelLoader.h"

#include <cstring>
#include <fstream>
#include <sstream>

using namespace mlir::dpc::onnx_import;
using ::dpc::DType;
using ::dpc::HostTensor;

bool mlir::dpc::onnx_import::loadModel(const std::string &path,
                                       onnx::ModelProto &model,
                                       std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::stringstream bytes;
  bytes << file.rdbuf();
  std::string data = bytes.str();
  if (!model.ParseFromString(data)) {
    error = "'" + path +
            "' is not a valid ONNX model (truncated or malformed protobuf)";
    return false;
  }
  if (!model.has_graph() || model.ir_version() <= 0) {
    error = "'" + path + "' is not a valid ONNX model (no graph or IR version)";
    return false;
  }
  return true;
}

std::optional<DType> mlir::dpc::onnx_import::getDType(int onnxDataType) {
  switch (onnxDataType) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT16:
    return DType::I16;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

std::string mlir::dpc::onnx_import::getOnnxTypeName(int onnxDataType) {
  if (onnx::TensorProto::DataType_IsValid(onnxDataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(onnxDataType));
  return "type " + std::to_string(onnxDataType);
}

/// Reads `length` bytes at `offset` of an external data file.
static bool readExternalData(const onnx::TensorProto &proto,
                             const std::string &modelDir,
                             std::vector<std::byte> &out, size_t expected,
                             std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : proto.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = std::stoll(entry.value());
    else if (entry.key() == "length")
      length = std::stoll(entry.value());
  }
  if (location.empty()) {
    error = "tensor '" + proto.name() + "' has external data without location";
    return false;
  }
  std::string path =
      location.front() == '/' ? location : modelDir + "/" + location;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "external data file '" + path + "' of tensor '" + proto.name() +
            "' cannot be opened: " + std::strerror(errno);
    return false;
  }
  if (length < 0)
    length = static_cast<int64_t>(expected);
  if (static_cast<size_t>(length) != expected) {
    error = "external data of tensor '" + proto.name() + "' has " +
            std::to_string(length) + " bytes, its shape needs " +
            std::to_string(expected);
    return false;
  }
  out.resize(expected);
  file.seekg(offset);
  file.read(reinterpret_cast<char *>(out.data()), length);
  if (file.gcount() != length) {
    error = "external data file '" + path + "' is too short for tensor '" +
            proto.name() + "' (needs " + std::to_string(length) +
            " bytes at offset " + std::to_string(offset) + ")";
    return false;
  }
  return true;
}

/// Copies typed-field values, converting each to the element type.
template <typename Field>
static void copyTyped(const Field &field, HostTensor &tensor) {
  int64_t n = tensor.getNumElements();
  switch (tensor.dtype) {
  case DType::F32:
    for (int64_t i = 0; i < n; ++i)
      tensor.getData<float>()[i] = static_cast<float>(field[i]);
    break;
  case DType::F64:
    for (int64_t i = 0; i < n; ++i)
      tensor.getData<double>()[i] = static_cast<double>(field[i]);
    break;
  case DType::I64:
    for (int64_t i = 0; i < n; ++i)
      tensor.getData<int64_t>()[i] = static_cast<int64_t>(field[i]);
    break;
  case DType::I32:
    for (int64_t i = 0; i < n; ++i)
      tensor.getData<int32_t>()[i] = static_cast<int32_t>(field[i]);
    break;
  case DType::I16:
  case DType::F16:
  case DType::BF16:
    // int32_data holds the 16-bit patterns of these types.
    for (int64_t i = 0; i < n; ++i)
      tensor.getData<uint16_t>()[i] = static_cast<uint16_t>(field[i]);
    break;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    for (int64_t i = 0; i < n; ++i)
      tensor.getData<uint8_t>()[i] = static_cast<uint8_t>(field[i]);
    break;
  }
}

bool mlir::dpc::onnx_import::decodeTensor(const onnx::TensorProto &proto,
                                          const std::string &modelDir,
                                          HostTensor &tensor,
                                          std::string &error) {
  std::optional<DType> dtype = getDType(proto.data_type());
  if (!dtype) {
    error = "tensor '" + proto.name() + "' has unsupported element type " +
            getOnnxTypeName(proto.data_type());
    return false;
  }
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t dim : shape)
    if (dim < 0) {
      error = "tensor '" + proto.name() + "' has a negative dimension";
      return false;
    }
  tensor = HostTensor(*dtype, shape);
  size_t bytes = tensor.getSizeInBytes();
  int64_t n = tensor.getNumElements();

  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return readExternalData(proto, modelDir, tensor.data, bytes, error);
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes) {
      error = "tensor '" + proto.name() + "' has " +
              std::to_string(proto.raw_data().size()) +
              " bytes of raw data, its shape needs " + std::to_string(bytes);
      return false;
    }
    std::memcpy(tensor.data.data(), proto.raw_data().data(), bytes);
    return true;
  }
  auto check = [&](int size) {
    if (size == n)
      return true;
    error = "tensor '" + proto.name() + "' has " + std::to_string(size) +
            " values, its shape needs " + std::to_string(n);
    return false;
  };
  switch (*dtype) {
  case DType::F32:
    if (!check(proto.float_data_size()))
      return false;
    copyTyped(proto.float_data(), tensor);
    return true;
  case DType::F64:
    if (!check(proto.double_data_size()))
      return false;
    copyTyped(proto.double_data(), tensor);
    return true;
  case DType::I64:
    if (!check(proto.int64_data_size()))
      return false;
    copyTyped(proto.int64_data(), tensor);
    return true;
  default:
    if (!check(proto.int32_data_size()))
      return false;
    copyTyped(proto.int32_data(), tensor);
    return true;
  }
}
