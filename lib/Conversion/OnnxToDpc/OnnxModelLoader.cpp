//===- OnnxModelLoader.cpp - Reading ONNX files and tensors ---------------===//
//
// Tensor data may sit in typed repeated fields, in `raw_data` (little
// endian) or in an external file named by `external_data`; all three are
// decoded here, with every size checked before it is trusted.
//
//===----------------------------------------------------------------------===//

#include "OnnxModelLoader.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

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

/// Reads the `expected` bytes of `proto`'s external data. The file must
/// lie inside the model's folder (after resolving links): a model cannot
/// make dpc read /etc/passwd or ../../secret. Every field is checked, and
/// the file's size, before anything is allocated.
static bool readExternalData(const onnx::TensorProto &proto,
                             const std::string &modelDir, ::dpc::Bytes &out,
                             uint64_t expected, std::string &error) {
  std::string location;
  uint64_t offset = 0, length = expected;
  for (const auto &entry : proto.external_data()) {
    llvm::StringRef value(entry.value());
    if (entry.key() == "location") {
      location = entry.value();
    } else if ((entry.key() == "offset" && value.getAsInteger(10, offset)) ||
               (entry.key() == "length" && value.getAsInteger(10, length))) {
      error = "tensor '" + proto.name() + "' has external data whose " +
              entry.key() + " '" + entry.value() +
              "' is not a non-negative integer";
      return false;
    }
  }
  if (location.empty()) {
    error = "tensor '" + proto.name() + "' has external data without location";
    return false;
  }
  if (llvm::sys::path::is_absolute(location)) {
    error = "tensor '" + proto.name() +
            "' has external data at the absolute "
            "path '" +
            location +
            "'; ONNX locations are relative to the "
            "model's folder";
    return false;
  }
  llvm::SmallString<256> folder, path;
  if (llvm::sys::fs::real_path(modelDir.empty() ? "." : modelDir, folder)) {
    error = "cannot resolve the model's folder '" + modelDir + "'";
    return false;
  }
  llvm::SmallString<256> joined(folder);
  llvm::sys::path::append(joined, location);
  if (std::error_code ec = llvm::sys::fs::real_path(joined, path)) {
    error = "external data file '" + location + "' of tensor '" + proto.name() +
            "' cannot be opened: " + ec.message();
    return false;
  }
  llvm::StringRef inside(path);
  if (!inside.consume_front(folder) ||
      !llvm::sys::path::is_separator(inside.empty() ? '\0' : inside.front())) {
    error = "external data file '" + location + "' of tensor '" + proto.name() +
            "' is outside the model's folder '" + folder.str().str() +
            "'; refusing to read it";
    return false;
  }
  if (length != expected) {
    error = "external data of tensor '" + proto.name() + "' has " +
            std::to_string(length) + " bytes, its shape needs " +
            std::to_string(expected);
    return false;
  }
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(path, size) || offset > size ||
      size - offset < length) {
    error = "external data file '" + location + "' is too short for tensor '" +
            proto.name() + "' (needs " + std::to_string(length) +
            " bytes at offset " + std::to_string(offset) + ")";
    return false;
  }
  std::ifstream file(path.str().str(), std::ios::binary);
  if (!file) {
    error = "external data file '" + location + "' of tensor '" + proto.name() +
            "' cannot be opened: " + std::strerror(errno);
    return false;
  }
  out.resize(length);
  file.seekg(static_cast<std::streamoff>(offset));
  file.read(reinterpret_cast<char *>(out.data()),
            static_cast<std::streamsize>(length));
  if (static_cast<uint64_t>(file.gcount()) != length) {
    error = "external data file '" + location +
            "' could not be read for "
            "tensor '" +
            proto.name() + "'";
    return false;
  }
  return true;
}

/// The values `proto` holds in its typed field for elements of `dtype`.
static int64_t getTypedFieldSize(const onnx::TensorProto &proto, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return proto.float_data_size();
  case DType::F64:
    return proto.double_data_size();
  case DType::I64:
    return proto.int64_data_size();
  default:
    return proto.int32_data_size();
  }
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
  // The size is checked against the data the file holds before anything
  // is allocated: a model cannot claim 2^40 elements with 16 bytes.
  uint64_t elementSize = getDTypeSize(*dtype);
  uint64_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0) {
      error = "tensor '" + proto.name() + "' has a negative dimension";
      return false;
    }
    if (dim != 0 && n > (uint64_t(1) << 62) / elementSize / uint64_t(dim)) {
      error = "tensor '" + proto.name() +
              "' has more elements than dpc can "
              "hold (its dimensions multiply past 2^62 bytes)";
      return false;
    }
    n *= uint64_t(dim);
  }
  uint64_t bytes = n * elementSize;
  bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  if (!external && proto.has_raw_data() && proto.raw_data().size() != bytes) {
    error = "tensor '" + proto.name() + "' has " +
            std::to_string(proto.raw_data().size()) +
            " bytes of raw data, its shape needs " + std::to_string(bytes);
    return false;
  }
  if (!external && !proto.has_raw_data() &&
      uint64_t(getTypedFieldSize(proto, *dtype)) != n) {
    error = "tensor '" + proto.name() + "' has " +
            std::to_string(getTypedFieldSize(proto, *dtype)) +
            " values, its shape needs " + std::to_string(n);
    return false;
  }
  if (external) {
    tensor = HostTensor();
    tensor.dtype = *dtype;
    tensor.shape = shape;
    return readExternalData(proto, modelDir, tensor.data, bytes, error);
  }
  tensor = HostTensor(*dtype, shape);
  if (proto.has_raw_data()) {
    std::memcpy(tensor.data.data(), proto.raw_data().data(), bytes);
    return true;
  }
  // The typed field's size was checked above.
  switch (*dtype) {
  case DType::F32:
    copyTyped(proto.float_data(), tensor);
    return true;
  case DType::F64:
    copyTyped(proto.double_data(), tensor);
    return true;
  case DType::I64:
    copyTyped(proto.int64_data(), tensor);
    return true;
  default:
    copyTyped(proto.int32_data(), tensor);
    return true;
  }
}
