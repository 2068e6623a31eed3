//===- Philox.cpp - Counter-based random numbers --------------------------===//

#include "dpc/Runtime/Philox.h"

#include <cmath>

using namespace dpc;

namespace {
// The multipliers and the Weyl key increments of Philox4x32.
constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;

void mulHiLo(uint32_t a, uint32_t b, uint32_t &hi, uint32_t &lo) {
  uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}
} // namespace

std::array<uint32_t, 4> dpc::philox4x32(std::array<uint32_t, 4> counter,
                                        std::array<uint32_t, 2> key) {
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulHiLo(kMultiplier0, counter[0], hi0, lo0);
    mulHiLo(kMultiplier1, counter[2], hi1, lo1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
  }
  return counter;
}

bool dpc::dropoutKeeps(uint64_t seed, uint64_t stream, uint64_t index,
                       double ratio) {
  auto low = [](uint64_t v) { return static_cast<uint32_t>(v); };
  auto high = [](uint64_t v) { return static_cast<uint32_t>(v >> 32); };
  std::array<uint32_t, 4> bits =
      philox4x32({low(index), high(index), low(stream), high(stream)},
                 {low(seed), high(seed)});
  // ratio < 1, so the threshold fits in 32 bits.
  auto threshold = static_cast<uint64_t>(std::ldexp(ratio, 32));
  return bits[0] >= threshold;
}
