//===- Philox.h - Counter-based random numbers ------------------*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a keyed bijection of 128-bit counters. A random number is a
// pure function of (key, counter), so any rank can compute the number of
// any element without state or communication; dropout masks come from here
// in the interpreter and in every backend, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PHILOX_H
#define DPC_RUNTIME_PHILOX_H

#include <array>
#include <cstdint>

namespace dpc {

/// Philox4x32-10 of `counter` under `key`.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

/// Whether dropout keeps element `index` of the tensor of dropout site
/// `stream` in the step seeded with `seed`: the first word of
/// philox4x32((index, stream), seed) is at least `ratio * 2^32`.
bool dropoutKeeps(uint64_t seed, uint64_t stream, uint64_t index, double ratio);

} // namespace dpc

#endif // DPC_RUNTIME_PHILOX_H
