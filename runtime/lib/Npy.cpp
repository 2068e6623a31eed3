//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// The `.npy` format: the magic "\x93NUMPY", a version, the length of a
// header, and the header itself, a Python dict literal such as
// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, padded
// with spaces to a multiple of 64 bytes and ended by '\n'; then the raw
// elements. The header is parsed by a small recursive-descent reader that
// accepts exactly the literals NumPy writes.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/Npy.h"
#include "dpc/Runtime/FileIO.h"

#include <algorithm>
#include <cstring>
#include <optional>

using namespace dpc;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// What the header of a `.npy` file says.
struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortranOrder;
  std::optional<std::vector<int64_t>> shape;
};

/// Reads the dict literal of a `.npy` header.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  /// Parses the whole header into `header`; on failure, `error` says why.
  bool parse(NpyHeader &header, std::string &error) {
    skipSpace();
    if (!consume('{'))
      return fail(error, "expected '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail(error, "expected a quoted key");
      skipSpace();
      if (!consume(':'))
        return fail(error, "expected ':' after '" + key + "'");
      skipSpace();
      if (key == "descr") {
        std::string descr;
        if (!parseString(descr))
          return fail(error, "'descr' is not a string (structured dtypes "
                             "are not supported)");
        header.descr = descr;
      } else if (key == "fortran_order") {
        bool value;
        if (!parseBool(value))
          return fail(error, "'fortran_order' is not True or False");
        header.fortranOrder = value;
      } else if (key == "shape") {
        std::vector<int64_t> shape;
        if (!parseShape(shape))
          return fail(error, "'shape' is not a tuple of non-negative sizes");
        header.shape = shape;
      } else {
        return fail(error, "unexpected key '" + key + "'");
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (!consume('}'))
        return fail(error, "expected ',' or '}'");
      break;
    }
    skipSpace();
    if (position != text.size())
      return fail(error, "unexpected text after the dict");
    if (!header.descr || !header.fortranOrder || !header.shape)
      return fail(error, "'descr', 'fortran_order' or 'shape' is missing");
    return true;
  }

private:
  static bool fail(std::string &error, const std::string &message) {
    error = message;
    return false;
  }

  void skipSpace() {
    while (position < text.size() &&
           (text[position] == ' ' || text[position] == '\n' ||
            text[position] == '\t' || text[position] == '\r'))
      ++position;
  }

  bool consume(char c) {
    if (position < text.size() && text[position] == c) {
      ++position;
      return true;
    }
    return false;
  }

  bool consumeWord(const char *word) {
    size_t length = std::strlen(word);
    if (text.compare(position, length, word) != 0)
      return false;
    position += length;
    return true;
  }

  bool parseString(std::string &value) {
    if (position >= text.size() ||
        (text[position] != '\'' && text[position] != '"'))
      return false;
    char quote = text[position++];
    size_t end = text.find(quote, position);
    if (end == std::string::npos)
      return false;
    value = text.substr(position, end - position);
    position = end + 1;
    return true;
  }

  bool parseBool(bool &value) {
    if (consumeWord("True"))
      value = true;
    else if (consumeWord("False"))
      value = false;
    else
      return false;
    return true;
  }

  bool parseSize(int64_t &value) {
    size_t start = position;
    value = 0;
    while (position < text.size() && text[position] >= '0' &&
           text[position] <= '9') {
      int digit = text[position++] - '0';
      if (value > (INT64_MAX - digit) / 10)
        return false;
      value = value * 10 + digit;
    }
    // Python 2 era writers appended 'L' to longs.
    consume('L');
    return position > start;
  }

  bool parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return false;
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      int64_t size;
      if (!parseSize(size))
        return false;
      shape.push_back(size);
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      return consume(')');
    }
  }

  const std::string &text;
  size_t position = 0;
};

/// An element type with the byte order its descr gives.
struct NpyType {
  DType dtype;
  bool bigEndian;
};

std::optional<NpyType> parseDescr(const std::string &descr) {
  if (descr.size() < 3)
    return std::nullopt;
  char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return std::nullopt;
  std::string kind = descr.substr(1);
  static const struct {
    const char *kind;
    DType dtype;
  } kinds[] = {{"f4", DType::F32}, {"f8", DType::F64}, {"f2", DType::F16},
               {"i8", DType::I64}, {"i4", DType::I32}, {"i2", DType::I16},
               {"i1", DType::I8},  {"u1", DType::U8},  {"b1", DType::Bool}};
  for (const auto &entry : kinds)
    if (kind == entry.kind) {
      // '|' (no byte order) is only meaningful for one-byte types.
      if (order == '|' && getDTypeSize(entry.dtype) != 1)
        return std::nullopt;
      return NpyType{entry.dtype, order == '>'};
    }
  return std::nullopt;
}

uint32_t readLittleEndian(const unsigned char *bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = 0; i < count; ++i)
    value |= static_cast<uint32_t>(bytes[i]) << (8 * i);
  return value;
}

std::string describeShape(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

} // namespace

std::string dpc::getNpyFileName(const std::string &name) {
  std::string file;
  for (char c : name) {
    if (c == '%')
      file += "%25";
    else if (c == '/')
      file += "%2F";
    else
      file += c;
  }
  return file + ".npy";
}

const char *dpc::getNpyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::F16:
    return "<f2";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I16:
    return "<i2";
  case DType::I8:
    return "|i1";
  case DType::U8:
    return "|u1";
  case DType::Bool:
    return "|b1";
  case DType::BF16:
    return nullptr;
  }
  return nullptr;
}

Status dpc::parseNpy(const void *data, size_t size, const std::string &source,
                     HostTensor &tensor) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  auto error = [&](const std::string &message) {
    return Status::error(source + ": " + message);
  };
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    return error("not a .npy file (bad magic)");
  unsigned major = bytes[kMagicSize], minor = bytes[kMagicSize + 1];
  if (major < 1 || major > 3 || minor != 0)
    return error("unsupported .npy format version " + std::to_string(major) +
                 "." + std::to_string(minor));
  // Version 1.0 has a 2-byte header length, later versions a 4-byte one.
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t preamble = kMagicSize + 2 + lengthSize;
  if (size < preamble)
    return error("truncated .npy header");
  size_t headerSize = readLittleEndian(bytes + kMagicSize + 2, lengthSize);
  if (headerSize > size - preamble)
    return error("truncated .npy header (" + std::to_string(headerSize) +
                 " bytes announced, " + std::to_string(size - preamble) +
                 " present)");
  std::string text(reinterpret_cast<const char *>(bytes + preamble),
                   headerSize);

  NpyHeader header;
  std::string problem;
  if (!HeaderParser(text).parse(header, problem))
    return error("bad .npy header: " + problem);
  if (*header.fortranOrder)
    return error("arrays in Fortran order are not supported; save a "
                 "C-ordered array (numpy.ascontiguousarray)");
  std::optional<NpyType> type = parseDescr(*header.descr);
  if (!type)
    return error("unsupported dtype '" + *header.descr +
                 "' (supported: f2, f4, f8, i1, i2, i4, i8, u1, b1)");

  // The announced size must fit before anything is allocated.
  size_t elementSize = getDTypeSize(type->dtype);
  uint64_t count = 1;
  for (int64_t dim : *header.shape)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      return error("shape " + describeShape(*header.shape) + " is too large");
  uint64_t dataSize;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(elementSize),
                             &dataSize))
    return error("shape " + describeShape(*header.shape) + " is too large");
  size_t present = size - preamble - headerSize;
  if (dataSize != present)
    return error(std::string(dataSize > present ? "truncated" : "corrupt") +
                 ": shape " + describeShape(*header.shape) + " of " +
                 getDTypeName(type->dtype) + " needs " +
                 std::to_string(dataSize) + " bytes of data, the file has " +
                 std::to_string(present));

  tensor = HostTensor(type->dtype, *header.shape);
  const unsigned char *elements = bytes + preamble + headerSize;
  if (dataSize > 0) // An empty tensor's storage may be null.
    std::memcpy(tensor.data.data(), elements, dataSize);
  if (type->bigEndian && elementSize > 1)
    for (size_t offset = 0; offset < dataSize; offset += elementSize)
      std::reverse(tensor.data.begin() + offset,
                   tensor.data.begin() + offset + elementSize);
  // Downstream code relies on booleans being exactly 0 or 1.
  if (type->dtype == DType::Bool)
    for (std::byte &b : tensor.data)
      b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  return Status::success();
}

Status dpc::serializeNpy(const HostTensor &tensor, std::string &bytes) {
  const char *descr = getNpyDescr(tensor.dtype);
  if (!descr)
    return Status::error(std::string("a ") + getDTypeName(tensor.dtype) +
                         " tensor cannot be written as .npy (NumPy has no " +
                         "such dtype); widen it to float32 first");
  if (static_cast<int64_t>(tensor.data.size()) !=
      tensor.getNumElements() *
          static_cast<int64_t>(getDTypeSize(tensor.dtype)))
    return Status::error("tensor data does not match its shape");

  std::string header =
      std::string("{'descr': '") + descr +
      "', 'fortran_order': False, 'shape': " + describeShape(tensor.shape) +
      ", }";
  // Pad so that the data starts on a 64-byte boundary, as NumPy does.
  size_t lengthSize = 2;
  unsigned major = 1;
  if (kMagicSize + 2 + lengthSize + header.size() + 1 > 65535) {
    lengthSize = 4;
    major = 2;
  }
  size_t preamble = kMagicSize + 2 + lengthSize;
  size_t total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  bytes.assign(kMagic, kMagicSize);
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (size_t i = 0; i < lengthSize; ++i)
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(tensor.data.data()),
               tensor.data.size());
  return Status::success();
}

Status dpc::readNpyFile(const std::string &path, HostTensor &tensor) {
  std::string contents;
  if (Status status = readFile(path, contents); status.isError())
    return status;
  return parseNpy(contents.data(), contents.size(), path, tensor);
}

Status dpc::writeNpyFile(const std::string &path, const HostTensor &tensor) {
  std::string bytes;
  if (Status status = serializeNpy(tensor, bytes); status.isError())
    return Status::error(path + ": " + status.getMessage());
  return writeFileAtomically(path, bytes);
}
