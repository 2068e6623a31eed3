//===- Dropout.cpp - Counter-based dropout --------------------------------===//
//
// The mask comes from dpc::dropoutKeeps, which every backend shares, so a
// compiled step drops the elements the interpreted one drops.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include "dpc/Runtime/Philox.h"

using namespace dpc::cpu;

template <typename T>
void dpc::cpu::dropout(const T *input, int64_t size, int64_t seed,
                       int64_t offset, double ratio, int64_t stream, T *out) {
  double scale = 1.0 / (1.0 - ratio);
  for (int64_t i = 0; i < size; ++i) {
    bool keep = dpc::dropoutKeeps(
        static_cast<uint64_t>(seed), static_cast<uint64_t>(stream),
        static_cast<uint64_t>(offset) + static_cast<uint64_t>(i), ratio);
    out[i] = keep ? static_cast<T>(input[i] * scale) : T(0);
  }
}

template void dpc::cpu::dropout<float>(const float *, int64_t, int64_t, int64_t,
                                       double, int64_t, float *);
template void dpc::cpu::dropout<double>(const double *, int64_t, int64_t,
                                        int64_t, double, int64_t, double *);
