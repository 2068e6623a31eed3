//===- Elementwise.cpp - Elementwise kernels with broadcasting ------------===//
//
// The non-template parts of the elementwise kernels: broadcast strides and
// the three-way select.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.h"

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

SmallVector<int64_t>
interpreter::getBroadcastStrides(ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> resultShape) {
  SmallVector<int64_t> own = getStrides(shape);
  SmallVector<int64_t> strides(resultShape.size(), 0);
  size_t offset = resultShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      strides[offset + d] = own[d];
  return strides;
}

Tensor interpreter::selectBroadcast(const Tensor &condition,
                                    const Tensor &onTrue, const Tensor &onFalse,
                                    ArrayRef<int64_t> resultShape) {
  Tensor result(onTrue.getKind(), resultShape);
  std::array<SmallVector<int64_t>, 3> strides = {
      getBroadcastStrides(condition.getShape(), resultShape),
      getBroadcastStrides(onTrue.getShape(), resultShape),
      getBroadcastStrides(onFalse.getShape(), resultShape)};
  ArrayRef<int64_t> test = condition.getData<int64_t>();
  dispatchKind(onTrue.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> a = onTrue.getData<T>(), b = onFalse.getData<T>();
    MutableArrayRef<T> out = result.getData<T>();
    forEachBroadcast<3>(resultShape, strides, [&](int64_t i, auto offsets) {
      out[i] = test[offsets[0]] ? a[offsets[1]] : b[offsets[2]];
    });
  });
  return result;
}
