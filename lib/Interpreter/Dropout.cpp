//===- Dropout.cpp - Counter-based dropout --------------------------------===//
//
// The mask comes from dpc::dropoutKeeps, which every backend shares, so an
// interpreted step and a compiled one drop the same elements.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dpc/Runtime/Philox.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

Tensor interpreter::dropout(const Tensor &input, int64_t seed, int64_t offset,
                            double ratio, int64_t stream) {
  Tensor result(input.getKind(), input.getShape());
  double scale = 1.0 / (1.0 - ratio);
  dispatchKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    MutableArrayRef<T> out = result.getData<T>();
    for (size_t i = 0; i < in.size(); ++i) {
      bool keep = ::dpc::dropoutKeeps(static_cast<uint64_t>(seed),
                                      static_cast<uint64_t>(stream),
                                      static_cast<uint64_t>(offset) + i, ratio);
      out[i] = keep ? static_cast<T>(in[i] * scale) : T(0);
    }
  });
  return result;
}
