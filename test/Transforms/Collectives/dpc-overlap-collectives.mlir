// RUN: dpc-opt %s -dpc-overlap-collectives | FileCheck %s
// RUN: dpc-opt %s -dpc-overlap-collectives -dpc-overlap-collectives -o /dev/null

// A gradient reduction starts as soon as its gradient exists and is waited
// for where its reader needs it; a tensor-parallel reduction of an
// argument starts at once, and the exp that does not need it runs under it.
// The mul reading the reduction and the exp's result stays where the exp's
// result would die: sinking it to its own reader would hold that result
// longer (a weight gradient's contraction moved to the gradients' bucket
// would hold every activation gradient through the backward pass).
dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @backward
func.func @backward(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %x: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK: %[[T:.*]] = dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> {async} : tensor<4x4xf32>
  // CHECK-NEXT: %[[G:.*]] = dpc.matmul
  // CHECK-NEXT: %[[R:.*]] = dpc.all_reduce %[[G]] over @plan ["dp"] <sum> {async} : tensor<4x4xf32>
  // CHECK-NEXT: %[[E:.*]] = dpc.exp
  // CHECK-NEXT: %[[WT:.*]] = dpc.wait %[[T]] : tensor<4x4xf32>
  // CHECK-NEXT: %[[M:.*]] = dpc.mul %[[E]], %[[WT]]
  // CHECK-NEXT: %[[W:.*]] = dpc.wait %[[R]] : tensor<4x4xf32>
  // CHECK-NEXT: %[[U:.*]] = dpc.neg %[[W]]
  // CHECK-NEXT: return %[[U]], %[[M]]
  %g = dpc.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %e = dpc.exp %x : tensor<4x4xf32>
  %t = dpc.all_reduce %x over @plan ["tp"] <sum> : tensor<4x4xf32>
  %m = dpc.mul %e, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<4x4xf32>
  %u = dpc.neg %r : tensor<4x4xf32>
  return %u, %m : tensor<4x4xf32>, tensor<4x4xf32>
}
