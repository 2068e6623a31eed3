// RUN: dpc-opt %s -test-dpc-fused-traffic | FileCheck %s

// A bias and GeLU-like chain after a matmul stays in registers (the
// matmul's epilogue); the next matmul reads its operand from memory.
// CHECK-LABEL: func.func @mlp
func.func @mlp(%x: tensor<64x128xf32>, %w1: tensor<128x256xf32>,
               %b1: tensor<256xf32>, %w2: tensor<256x128xf32>)
    -> tensor<64x128xf32> {
  // Reads x (32 KiB) and w1 (128 KiB); writes nothing.
  // CHECK: dpc.matmul {{.*}}dpc.fused_bytes = 163840 : i64
  %0 = dpc.matmul %x, %w1 : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
  // Reads the 1 KiB bias only.
  // CHECK: dpc.add {{.*}}dpc.fused_bytes = 1024 : i64
  %1 = dpc.add %0, %b1 : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  // Its user is a matmul, which reads from memory: writes 64 KiB.
  // CHECK: dpc.relu {{.*}}dpc.fused_bytes = 65536 : i64
  %2 = dpc.relu %1 : tensor<64x256xf32>
  // Reads 64 KiB and 128 KiB, writes the returned 32 KiB.
  // CHECK: dpc.matmul {{.*}}dpc.fused_bytes = 229376 : i64
  %3 = dpc.matmul %2, %w2 : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  return %3 : tensor<64x128xf32>
}

// Between two contractions along the normalized axis, the scores and the
// softmax never reach memory (FlashAttention); they are recomputed.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>,
                     %v: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %c = dpc.constant dense<2.0> : tensor<f32>
  // Reads q and k (1 KiB each).
  // CHECK: dpc.matmul {{.*}}dpc.fused_bytes = 2048 : i64, dpc.recomputed
  %s = dpc.matmul %q, %kt : (tensor<2x16x8xf32>, tensor<2x8x16xf32>) -> tensor<2x16x16xf32>
  // CHECK: dpc.div {{.*}}dpc.fused_bytes = 4 : i64, dpc.recomputed
  %d = dpc.div %s, %c : (tensor<2x16x16xf32>, tensor<f32>) -> tensor<2x16x16xf32>
  // CHECK: dpc.softmax {{.*}}dpc.fused_bytes = 0 : i64, dpc.recomputed
  %p = dpc.softmax %d {axis = 2 : i64} : tensor<2x16x16xf32>
  // Reads v, writes the returned 1 KiB.
  // CHECK: dpc.matmul {{.*}}dpc.fused_bytes = 2048 : i64}
  %o = dpc.matmul %p, %v : (tensor<2x16x16xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// A softmax whose result is returned is written.
// CHECK-LABEL: func.func @plain_softmax
func.func @plain_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: dpc.softmax {{.*}}dpc.fused_bytes = 256 : i64}
  %0 = dpc.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
