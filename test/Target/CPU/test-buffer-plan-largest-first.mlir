// RUN: dpc-opt %s -test-dpc-buffer-plan | FileCheck %s

// Placed in the order they are made, the small %v1 leaves a gap at 0 too
// small for %v3, which then goes above everything: 2240 bytes. Placed from
// the largest down, %v3 takes 0, %v1 fits under %v2 (they are not alive at
// the same time as %v3), and the arena is the most bytes alive at once.
// CHECK-LABEL: func.func @largest_first
// CHECK-SAME: dpc.arena_bytes = 2176 : i64, dpc.live_bytes = 2176 : i64, dpc.unshared_bytes = 2240 : i64
func.func @largest_first(%x: tensor<1x16xf32>, %m: tensor<16x16xf32>, %y: tensor<272xf32>) -> (tensor<16x16xf32>, tensor<f32>, tensor<272xf32>) {
  // CHECK: dpc.matmul {{.*}}dpc.buffer = [0]
  %v1 = dpc.matmul %x, %m : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  // CHECK: dpc.matmul {{.*}}dpc.buffer = [1088]
  %v2 = dpc.matmul %m, %m : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: dpc.reduce_sum {{.*}}dpc.buffer = [2112]
  %s = dpc.reduce_sum %v1 [0, 1] : tensor<1x16xf32> -> tensor<f32>
  // CHECK: dpc.exp {{.*}}dpc.buffer = [0]
  %v3 = dpc.exp %y : tensor<272xf32>
  return %v2, %s, %v3 : tensor<16x16xf32>, tensor<f32>, tensor<272xf32>
}
