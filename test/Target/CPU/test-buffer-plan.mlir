// RUN: dpc-opt %s -test-dpc-buffer-plan | FileCheck %s

// The buffer plan: the exp lives at 0 until the first product reads it
// (through the folded transpose), the second product reuses its place; the
// reshape and the slice of whole rows are views; the add is computed in
// the relu's loop; the constant lives outside the arena.
// CHECK-LABEL: func.func @step
// CHECK-SAME: dpc.arena_bytes = 2048 : i64, dpc.live_bytes = 2048 : i64, dpc.unshared_bytes = 3584 : i64
func.func @step(%x: tensor<16x16xf32>) -> tensor<8x16xf32> {
  // CHECK: dpc.exp {{.*}}dpc.buffer = [0]
  %e = dpc.exp %x : tensor<16x16xf32>
  // CHECK: dpc.transpose {{.*}}dpc.buffer = ["fused"]
  %t = dpc.transpose %e [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: dpc.matmul {{.*}}dpc.buffer = [1024]
  %a = dpc.matmul %t, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: dpc.matmul {{.*}}dpc.buffer = [0]
  %b = dpc.matmul %a, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: dpc.reshape {{.*}}dpc.buffer = ["view"]
  %f = dpc.reshape %b : tensor<16x16xf32> -> tensor<256xf32>
  // CHECK: dpc.slice {{.*}}dpc.buffer = ["view"]
  %s = dpc.slice %f {start = array<i64: 64>, limit = array<i64: 192>, stride = array<i64: 1>} : tensor<256xf32> -> tensor<128xf32>
  // CHECK: dpc.constant {{.*}}dpc.buffer = ["outside"]
  %c = dpc.constant dense<1.0> : tensor<f32>
  // CHECK: dpc.add {{.*}}dpc.buffer = ["fused"]
  %g = dpc.add %s, %c : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  // CHECK: dpc.relu {{.*}}dpc.buffer = [1024]
  %r = dpc.relu %g : tensor<128xf32>
  %o = dpc.reshape %r : tensor<128xf32> -> tensor<8x16xf32>
  return %o : tensor<8x16xf32>
}
