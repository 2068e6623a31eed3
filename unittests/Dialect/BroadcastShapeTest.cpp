//===- BroadcastShapeTest.cpp - NumPy broadcasting of shapes --------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dpc;

namespace {

TEST(BroadcastShape, AlignsFromTheRight) {
  SmallVector<int64_t> a = {4, 1, 8}, b = {3, 1};
  FailureOr<SmallVector<int64_t>> shape = getBroadcastShape({a, b});
  ASSERT_TRUE(succeeded(shape));
  EXPECT_EQ(*shape, (SmallVector<int64_t>{4, 3, 8}));
}

TEST(BroadcastShape, ScalarBroadcastsToAnything) {
  SmallVector<int64_t> scalar = {}, b = {2, 5};
  FailureOr<SmallVector<int64_t>> shape = getBroadcastShape({scalar, b});
  ASSERT_TRUE(succeeded(shape));
  EXPECT_EQ(*shape, (SmallVector<int64_t>{2, 5}));
}

TEST(BroadcastShape, RejectsMismatchedSizes) {
  SmallVector<int64_t> a = {4, 3}, b = {2};
  EXPECT_TRUE(failed(getBroadcastShape({a, b})));
}

TEST(BroadcastShape, ThreeOperands) {
  SmallVector<int64_t> a = {1, 8}, b = {6, 1}, c = {1};
  FailureOr<SmallVector<int64_t>> shape = getBroadcastShape({a, b, c});
  ASSERT_TRUE(succeeded(shape));
  EXPECT_EQ(*shape, (SmallVector<int64_t>{6, 8}));
}

} // namespace
