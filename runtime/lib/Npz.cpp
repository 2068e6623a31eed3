//===- Npz.cpp - NumPy .npz files -----------------------------------------===//
//
// An `.npz` file is a zip archive with one `.npy` entry per tensor. The
// reader walks the central directory (with its zip64 extensions, which
// `numpy.savez` uses), checks each entry's CRC-32, and inflates deflated
// entries (`numpy.savez_compressed`) with zlib. The writer stores entries
// uncompressed. Every offset read from the file is bounds-checked.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/FileIO.h"
#include "dpc/Runtime/Npy.h"

#include <cstring>
#include <zlib.h>

using namespace dpc;

namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kStored = 0;
constexpr uint16_t kDeflated = 8;

/// Little-endian reads from a byte range that fail instead of overrunning.
class ByteReader {
public:
  ByteReader(const std::string &bytes) : bytes(bytes) {}

  bool has(uint64_t offset, uint64_t count) const {
    return offset <= bytes.size() && count <= bytes.size() - offset;
  }
  uint64_t read(uint64_t offset, unsigned count) const {
    uint64_t value = 0;
    for (unsigned i = 0; i < count; ++i)
      value |=
          static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i]))
          << (8 * i);
    return value;
  }
  const char *at(uint64_t offset) const { return bytes.data() + offset; }

private:
  const std::string &bytes;
};

/// One entry of the central directory.
struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  uint64_t localHeaderOffset = 0;
};

/// Locates the central directory: its offset and number of entries.
bool findCentralDirectory(const ByteReader &in, size_t size, uint64_t &offset,
                          uint64_t &count, std::string &error) {
  if (size < kEndSize) {
    error = "too short to be a zip archive";
    return false;
  }
  // The end record sits at the end, followed by a comment of up to 64 KiB.
  size_t lowest = size - kEndSize > 0xffff ? size - kEndSize - 0xffff : 0;
  size_t end = size - kEndSize + 1;
  while (end-- > lowest)
    if (in.read(end, 4) == kEndSignature)
      break;
  if (end + 1 == lowest || in.read(end, 4) != kEndSignature) {
    error = "not a zip archive (no end of central directory)";
    return false;
  }
  count = in.read(end + 10, 2);
  offset = in.read(end + 16, 4);
  if (count != 0xffff && offset != 0xffffffff)
    return true;
  // Zip64: a locator right before the end record points at the zip64 end.
  if (end < kZip64LocatorSize ||
      in.read(end - kZip64LocatorSize, 4) != kZip64LocatorSignature) {
    error = "corrupt zip64 archive (no zip64 locator)";
    return false;
  }
  uint64_t zip64End = in.read(end - kZip64LocatorSize + 8, 8);
  if (!in.has(zip64End, kZip64EndSize) ||
      in.read(zip64End, 4) != kZip64EndSignature) {
    error = "corrupt zip64 archive (bad zip64 end record)";
    return false;
  }
  count = in.read(zip64End + 32, 8);
  offset = in.read(zip64End + 48, 8);
  return true;
}

/// Reads the central-directory entry at `offset`, advancing it.
bool readEntry(const ByteReader &in, uint64_t &offset, ZipEntry &entry,
               std::string &error) {
  if (!in.has(offset, kCentralHeaderSize) ||
      in.read(offset, 4) != kCentralHeaderSignature) {
    error = "corrupt central directory";
    return false;
  }
  entry.flags = in.read(offset + 8, 2);
  entry.method = in.read(offset + 10, 2);
  entry.crc = in.read(offset + 16, 4);
  entry.compressedSize = in.read(offset + 20, 4);
  entry.uncompressedSize = in.read(offset + 24, 4);
  uint64_t nameSize = in.read(offset + 28, 2);
  uint64_t extraSize = in.read(offset + 30, 2);
  uint64_t commentSize = in.read(offset + 32, 2);
  entry.localHeaderOffset = in.read(offset + 42, 4);
  uint64_t name = offset + kCentralHeaderSize;
  if (!in.has(name, nameSize + extraSize + commentSize)) {
    error = "corrupt central directory";
    return false;
  }
  entry.name.assign(in.at(name), nameSize);

  // The zip64 extra field holds, in this order, whichever of the three
  // fields above are saturated.
  uint64_t extra = name + nameSize, extraEnd = extra + extraSize;
  while (extra + 4 <= extraEnd) {
    uint64_t id = in.read(extra, 2), size = in.read(extra + 2, 2);
    uint64_t field = extra + 4;
    if (field + size > extraEnd)
      break;
    if (id == kZip64ExtraId) {
      uint64_t *targets[] = {&entry.uncompressedSize, &entry.compressedSize,
                             &entry.localHeaderOffset};
      for (uint64_t *target : targets) {
        if (*target != 0xffffffff)
          continue;
        if (field + 8 > extra + 4 + size) {
          error = "corrupt zip64 extra field of '" + entry.name + "'";
          return false;
        }
        *target = in.read(field, 8);
        field += 8;
      }
    }
    extra += 4 + size;
  }
  offset = extraEnd + commentSize;
  return true;
}

/// Inflates raw deflate data of `entry` into `output`.
bool inflateEntry(const char *data, const ZipEntry &entry, std::string &output,
                  std::string &error) {
  output.resize(entry.uncompressedSize);
  z_stream stream;
  std::memset(&stream, 0, sizeof(stream));
  // Negative window bits: raw deflate, without a zlib header.
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
    error = "cannot initialize zlib";
    return false;
  }
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data));
  stream.avail_in = static_cast<uInt>(entry.compressedSize);
  stream.next_out = reinterpret_cast<Bytef *>(output.data());
  stream.avail_out = static_cast<uInt>(output.size());
  int result = inflate(&stream, Z_FINISH);
  uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (result != Z_STREAM_END || produced != entry.uncompressedSize) {
    error = "corrupt deflated data";
    return false;
  }
  return true;
}

} // namespace

Status dpc::readNpzFile(const std::string &path,
                        std::vector<NamedTensor> &tensors) {
  std::string bytes;
  if (Status status = readFile(path, bytes); status.isError())
    return status;
  auto fail = [&](const std::string &message) {
    return Status::error(path + ": " + message);
  };
  ByteReader in(bytes);
  uint64_t offset, count;
  std::string problem;
  if (!findCentralDirectory(in, bytes.size(), offset, count, problem))
    return fail(problem);

  tensors.clear();
  for (uint64_t i = 0; i < count; ++i) {
    ZipEntry entry;
    if (!readEntry(in, offset, entry, problem))
      return fail(problem);
    auto failEntry = [&](const std::string &message) {
      return fail("entry '" + entry.name + "': " + message);
    };
    // Directories carry no tensor.
    if (!entry.name.empty() && entry.name.back() == '/')
      continue;
    const std::string suffix = ".npy";
    if (entry.name.size() <= suffix.size() ||
        entry.name.compare(entry.name.size() - suffix.size(), suffix.size(),
                           suffix) != 0)
      return failEntry("not a .npy file");
    if (entry.flags & 1)
      return failEntry("encrypted entries are not supported");
    if (entry.method != kStored && entry.method != kDeflated)
      return failEntry("compression method " + std::to_string(entry.method) +
                       " is not supported (only stored and deflated)");
    if (entry.compressedSize > 0xffffffffu ||
        entry.uncompressedSize > 0xffffffffu)
      return failEntry("entries over 4 GiB are not supported");

    uint64_t local = entry.localHeaderOffset;
    if (!in.has(local, kLocalHeaderSize) ||
        in.read(local, 4) != kLocalHeaderSignature)
      return failEntry("corrupt local header");
    uint64_t data = local + kLocalHeaderSize + in.read(local + 26, 2) +
                    in.read(local + 28, 2);
    if (!in.has(data, entry.compressedSize))
      return failEntry("truncated archive");

    std::string inflated;
    const char *contents = in.at(data);
    uint64_t size = entry.compressedSize;
    if (entry.method == kDeflated) {
      // Deflate expands at most about 1032:1; a larger claimed size is
      // garbage, and must not be allocated.
      if (entry.uncompressedSize > entry.compressedSize * 1032 + 1024)
        return failEntry("corrupt sizes");
      if (!inflateEntry(contents, entry, inflated, problem))
        return failEntry(problem);
      contents = inflated.data();
      size = inflated.size();
    } else if (entry.compressedSize != entry.uncompressedSize) {
      return failEntry("corrupt sizes");
    }
    uLong crc = crc32(0L, reinterpret_cast<const Bytef *>(contents),
                      static_cast<uInt>(size));
    if (crc != entry.crc)
      return failEntry("CRC-32 mismatch (corrupt data)");

    NamedTensor tensor;
    tensor.name = entry.name.substr(0, entry.name.size() - suffix.size());
    if (Status status =
            parseNpy(contents, size, path + ": entry '" + entry.name + "'",
                     tensor.tensor);
        status.isError())
      return status;
    tensors.push_back(std::move(tensor));
  }
  return Status::success();
}

namespace {

void appendLittleEndian(std::string &out, uint64_t value, unsigned count) {
  for (unsigned i = 0; i < count; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xff);
}

} // namespace

Status dpc::writeNpzFile(const std::string &path,
                         const std::vector<NamedTensor> &tensors) {
  std::string archive, directory;
  for (const NamedTensor &tensor : tensors) {
    std::string npy;
    if (Status status = serializeNpy(tensor.tensor, npy); status.isError())
      return Status::error(path + ": '" + tensor.name +
                           "': " + status.getMessage());
    std::string name = tensor.name + ".npy";
    if (npy.size() > 0xfffffffeu || archive.size() > 0xfffffffeu ||
        name.size() > 0xffff)
      return Status::error(path + ": '" + tensor.name +
                           "' is too large for an archive without zip64");
    uint32_t crc = crc32(0L, reinterpret_cast<const Bytef *>(npy.data()),
                         static_cast<uInt>(npy.size()));
    uint64_t localOffset = archive.size();

    // Version needed 2.0, no flags, stored, no date.
    auto appendCommon = [&](std::string &out) {
      appendLittleEndian(out, 20, 2);
      appendLittleEndian(out, 0, 2);
      appendLittleEndian(out, kStored, 2);
      appendLittleEndian(out, 0, 2);
      appendLittleEndian(out, 0x21, 2); // 1980-01-01, the zip epoch
      appendLittleEndian(out, crc, 4);
      appendLittleEndian(out, npy.size(), 4);
      appendLittleEndian(out, npy.size(), 4);
      appendLittleEndian(out, name.size(), 2);
      appendLittleEndian(out, 0, 2);
    };
    appendLittleEndian(archive, kLocalHeaderSignature, 4);
    appendCommon(archive);
    archive += name;
    archive += npy;

    appendLittleEndian(directory, kCentralHeaderSignature, 4);
    appendLittleEndian(directory, 20, 2); // made by
    appendCommon(directory);
    appendLittleEndian(directory, 0, 2); // comment
    appendLittleEndian(directory, 0, 2); // disk
    appendLittleEndian(directory, 0, 2); // internal attributes
    appendLittleEndian(directory, 0, 4); // external attributes
    appendLittleEndian(directory, localOffset, 4);
    directory += name;
  }
  if (tensors.size() >= 0xffff || archive.size() > 0xfffffffeu)
    return Status::error(path + ": too many or too large tensors for an " +
                         "archive without zip64");
  uint64_t directoryOffset = archive.size();
  archive += directory;
  appendLittleEndian(archive, kEndSignature, 4);
  appendLittleEndian(archive, 0, 2);
  appendLittleEndian(archive, 0, 2);
  appendLittleEndian(archive, tensors.size(), 2);
  appendLittleEndian(archive, tensors.size(), 2);
  appendLittleEndian(archive, directory.size(), 4);
  appendLittleEndian(archive, directoryOffset, 4);
  appendLittleEndian(archive, 0, 2);
  return writeFileAtomically(path, archive);
}
