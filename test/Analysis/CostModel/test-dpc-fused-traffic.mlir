// RUN: dpc-opt %s -test-dpc-fused-traffic | FileCheck %s --check-prefixes=CHECK,UNFUSED
// RUN: dpc-opt %s -test-dpc-fused-traffic=fused-attention | FileCheck %s --check-prefixes=CHECK,FUSED

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

// With a fused attention kernel, the scores and the softmax between two
// contractions along the keys' axis never reach memory (FlashAttention);
// they are recomputed. Without one, the softmax reads and writes them.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>,
                     %v: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %c = dpc.constant dense<2.0> : tensor<f32>
  // Reads q and k (1 KiB each).
  // FUSED: dpc.matmul {{.*}}dpc.fused_bytes = 2048 : i64, dpc.recomputed
  // UNFUSED: dpc.matmul {{.*}}dpc.fused_bytes = 2048 : i64}
  %s = dpc.matmul %q, %kt : (tensor<2x16x8xf32>, tensor<2x8x16xf32>) -> tensor<2x16x16xf32>
  // FUSED: dpc.div {{.*}}dpc.fused_bytes = 4 : i64, dpc.recomputed
  // UNFUSED: dpc.div {{.*}}dpc.fused_bytes = 4 : i64}
  %d = dpc.div %s, %c : (tensor<2x16x16xf32>, tensor<f32>) -> tensor<2x16x16xf32>
  // FUSED: dpc.softmax {{.*}}dpc.fused_bytes = 0 : i64, dpc.recomputed
  // UNFUSED: dpc.softmax {{.*}}dpc.fused_bytes = 2048 : i64}
  %p = dpc.softmax %d {axis = 2 : i64} : tensor<2x16x16xf32>
  // Reads v, writes the returned 1 KiB.
  // FUSED: dpc.matmul {{.*}}dpc.fused_bytes = 2048 : i64}
  // UNFUSED: dpc.matmul {{.*}}dpc.fused_bytes = 4096 : i64}
  %o = dpc.matmul %p, %v : (tensor<2x16x16xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// A softmax over the queries' axis (1) is not an online softmax: the next
// contraction does not sum over it.
// CHECK-LABEL: func.func @softmax_over_queries
func.func @softmax_over_queries(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>,
                                %v: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  // CHECK: dpc.matmul {{.*}}dpc.fused_bytes = 2048 : i64}
  %s = dpc.matmul %q, %kt : (tensor<2x16x8xf32>, tensor<2x8x16xf32>) -> tensor<2x16x16xf32>
  // CHECK: dpc.softmax {{.*}}dpc.fused_bytes = 2048 : i64}
  %p = dpc.softmax %s {axis = 1 : i64} : tensor<2x16x16xf32>
  %o = dpc.matmul %p, %v : (tensor<2x16x16xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// A layer norm between two matmuls is not an attention: its input is the
// residual stream (a full-sized operand besides the matmul), which only a
// rerun of the whole forward could rebuild, so it and the stream are
// stored.
// CHECK-LABEL: func.func @residual_layer_norm
func.func @residual_layer_norm(%x: tensor<2x16x8xf32>, %w: tensor<8x8xf32>,
                               %g: tensor<8xf32>) -> tensor<2x16x8xf32> {
  // CHECK: dpc.matmul {{.*}}dpc.fused_bytes = {{[0-9]+}} : i64}
  %a = dpc.matmul %x, %w : (tensor<2x16x8xf32>, tensor<8x8xf32>) -> tensor<2x16x8xf32>
  // CHECK: dpc.add {{.*}}dpc.fused_bytes = {{[0-9]+}} : i64}
  %r = dpc.add %x, %a : (tensor<2x16x8xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  // CHECK: dpc.layer_norm {{.*}}dpc.fused_bytes = {{[0-9]+}} : i64, epsilon
  %n = dpc.layer_norm %r, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : tensor<2x16x8xf32>, tensor<8xf32>, tensor<8xf32>
  %o = dpc.matmul %n, %w : (tensor<2x16x8xf32>, tensor<8x8xf32>) -> tensor<2x16x8xf32>
  return %o : tensor<2x16x8xf32>
}

// A softmax whose result is returned is written.
// CHECK-LABEL: func.func @plain_softmax
func.func @plain_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: dpc.softmax {{.*}}dpc.fused_bytes = 256 : i64}
  %0 = dpc.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
