//===- TensorBoard.cpp - Scalars as TensorBoard event files ---------------===//
//
// The protobuf messages, from TensorFlow's event.proto and summary.proto:
//   Event   { double wall_time = 1; int64 step = 2;
//             string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; }
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/TensorBoard.h"
#include "dpc/Runtime/Checksum.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace dpc;

namespace {

/// TFRecord's masking, so that a CRC of data holding CRCs stays strong.
uint32_t maskedCrc(const void *data, size_t size) {
  uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

void appendVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(char((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(char(value));
}

void appendTag(std::string &out, int field, int wireType) {
  appendVarint(out, uint64_t(field) << 3 | uint64_t(wireType));
}

void appendBytes(std::string &out, int field, const std::string &bytes) {
  appendTag(out, field, 2);
  appendVarint(out, bytes.size());
  out += bytes;
}

template <typename T> void appendFixed(std::string &out, int field, T value) {
  appendTag(out, field, sizeof(T) == 8 ? 1 : 5);
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out.append(raw, sizeof(T));
}

double wallTime() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace

Status TensorBoardWriter::open(const std::string &dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Status::error(
        dir + ": cannot create the directory: " + std::strerror(errno));
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  path = dir + "/events.out.tfevents." + std::to_string(int64_t(wallTime())) +
         "." + host + ".dpc";
  file = std::fopen(path.c_str(), "wb");
  if (!file)
    return Status::error(path + ": cannot create: " + std::strerror(errno));
  std::string event;
  appendFixed(event, 1, wallTime());
  appendBytes(event, 3, "brain.Event:2");
  return writeRecord(event);
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file)
    std::fclose(file);
}

Status TensorBoardWriter::writeRecord(const std::string &data) {
  std::string record;
  uint64_t length = data.size();
  record.append(reinterpret_cast<const char *>(&length), 8);
  uint32_t lengthCrc = maskedCrc(&length, 8);
  record.append(reinterpret_cast<const char *>(&lengthCrc), 4);
  record += data;
  uint32_t dataCrc = maskedCrc(data.data(), data.size());
  record.append(reinterpret_cast<const char *>(&dataCrc), 4);
  if (std::fwrite(record.data(), 1, record.size(), file) != record.size() ||
      std::fflush(file) != 0)
    return Status::error(path + ": cannot write: " + std::strerror(errno));
  return Status::success();
}

Status TensorBoardWriter::addScalars(
    int64_t step, const std::vector<std::pair<std::string, double>> &values) {
  std::string summary;
  for (const auto &[tag, value] : values) {
    std::string entry;
    appendBytes(entry, 1, tag);
    appendFixed(entry, 2, float(value));
    appendBytes(summary, 1, entry);
  }
  std::string event;
  appendFixed(event, 1, wallTime());
  appendTag(event, 2, 0);
  appendVarint(event, uint64_t(step));
  appendBytes(event, 5, summary);
  return writeRecord(event);
}
