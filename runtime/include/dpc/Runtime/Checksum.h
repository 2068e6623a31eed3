//===- Checksum.h - CRC-32C -------------------------------------*- C++ -*-===//
//
// The Castagnoli CRC: TFRecord files (TensorBoard) frame records with it,
// and checkpoints check their shards with it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CHECKSUM_H
#define DPC_RUNTIME_CHECKSUM_H

#include <cstddef>
#include <cstdint>

namespace dpc {

/// CRC-32C of `size` bytes at `data`.
uint32_t crc32c(const void *data, size_t size);

} // namespace dpc

#endif // DPC_RUNTIME_CHECKSUM_H
