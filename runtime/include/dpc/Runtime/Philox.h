//===- Philox.h - Counter-based random numbers ------------------*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a keyed bijection of 128-bit counters. A random number is a
// pure function of (key, counter), so any rank can compute the number of
// any element without state or communication; dropout masks come from here
// in the interpreter and in every backend, bit for bit. Inline and callable
// from GPU code, so that the CUDA backend draws the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PHILOX_H
#define DPC_RUNTIME_PHILOX_H

#include <cstdint>

#ifdef __CUDACC__
#define DPC_PHILOX_HOST_DEVICE __host__ __device__
#else
#define DPC_PHILOX_HOST_DEVICE
#endif

namespace dpc {

/// Philox4x32-10 of `counter` under `key`, in place.
DPC_PHILOX_HOST_DEVICE inline void philox4x32(uint32_t counter[4],
                                              uint32_t key0, uint32_t key1) {
  // The multipliers and the Weyl key increments of Philox4x32.
  constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    uint64_t product0 = uint64_t(kMultiplier0) * counter[0];
    uint64_t product1 = uint64_t(kMultiplier1) * counter[2];
    uint32_t hi0 = uint32_t(product0 >> 32), lo0 = uint32_t(product0);
    uint32_t hi1 = uint32_t(product1 >> 32), lo1 = uint32_t(product1);
    uint32_t next0 = hi1 ^ counter[1] ^ key0, next2 = hi0 ^ counter[3] ^ key1;
    counter[0] = next0;
    counter[1] = lo1;
    counter[2] = next2;
    counter[3] = lo0;
  }
}

/// Whether dropout keeps element `index` of the tensor of dropout site
/// `stream` in the step seeded with `seed`: the first word of
/// philox4x32((index, stream), seed) is at least `ratio * 2^32`.
DPC_PHILOX_HOST_DEVICE inline bool dropoutKeeps(uint64_t seed, uint64_t stream,
                                                uint64_t index, double ratio) {
  uint32_t counter[4] = {uint32_t(index), uint32_t(index >> 32),
                         uint32_t(stream), uint32_t(stream >> 32)};
  philox4x32(counter, uint32_t(seed), uint32_t(seed >> 32));
  // ratio < 1, so the threshold fits in 32 bits; scaling by 2^32 is exact.
  auto threshold = uint64_t(ratio * 4294967296.0);
  return counter[0] >= threshold;
}

} // namespace dpc

#endif // DPC_RUNTIME_PHILOX_H
