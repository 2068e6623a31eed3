//===- Checksum.cpp - CRC-32C ---------------------------------------------===//

#include "dpc/Runtime/Checksum.h"

#include <vector>

using namespace dpc;

uint32_t dpc::crc32c(const void *data, size_t size) {
  static const auto table = [] {
    std::vector<uint32_t> entries(256);
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t crc = i;
      for (int bit = 0; bit < 8; ++bit)
        crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
      entries[i] = crc;
    }
    return entries;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}
