// RUN: dpc-opt %s -test-dpc-op-cost | FileCheck %s

// CHECK-LABEL: func.func @costs
func.func @costs(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %x: tensor<2x3x8x8xf32>,
                 %f: tensor<6x3x3x3xf32>, %bias: tensor<6xf32>, %h: tensor<4x8xbf16>) {
  // 2 * (4 * 8) * 16 flops; (64 + 128 + 32) * 4 bytes.
  // CHECK: dpc.matmul {{.*}} {dpc.bytes = 896 : i64, dpc.flops = 1024 : i64}
  %0 = dpc.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  // Elementwise: one flop per result element.
  // CHECK: dpc.relu {{.*}} {dpc.bytes = 256 : i64, dpc.flops = 32 : i64}
  %1 = dpc.relu %0 : tensor<4x8xf32>
  // bf16 counts two bytes an element.
  // CHECK: dpc.exp {{.*}} {dpc.bytes = 128 : i64, dpc.flops = 32 : i64}
  %2 = dpc.exp %h : tensor<4x8xbf16>
  // 2 * (2 * 6 * 6 * 6) * (3 * 3 * 3) + (2 * 6 * 6 * 6) for the bias.
  // CHECK: dpc.conv2d {{.*}}dpc.flops = 23760 : i64
  %3 = dpc.conv2d %x, %f, %bias {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<2x6x6x6xf32>
  // 2 * 3 * 4 * 4 outputs, 4 elements a window.
  // CHECK: dpc.max_pool2d {{.*}}dpc.flops = 384 : i64
  %4 = dpc.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  // CHECK: dpc.softmax {{.*}}dpc.flops = 160 : i64
  %5 = dpc.softmax %0 {axis = 1 : i64} : tensor<4x8xf32>
  return
}

// A recurrent layer: T * B steps of 2 * 4H * (I + H) flops for its two
// products and ~3 per gate element; its gradient op about three forwards
// (the rerun forward, then the input's and the weights' products).
// CHECK-LABEL: func.func @recurrent
func.func @recurrent(%x: tensor<5x8x3xf32>, %w: tensor<16x3xf32>, %r: tensor<16x4xf32>, %b: tensor<32xf32>, %h: tensor<8x4xf32>) {
  // 40 * (2 * 16 * 7 + 3 * 16) = 10880.
  // CHECK: dpc.lstm {{.*}}dpc.flops = 10880 : i64
  %y, %hT, %cT = dpc.lstm %x, %w, %r, %b, %h, %h : (tensor<5x8x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<5x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  // CHECK: dpc.lstm_grad {{.*}}dpc.flops = 32640 : i64
  %g:6 = dpc.lstm_grad %x, %w, %r, %b, %h, %h, %y, %hT, %cT : (tensor<5x8x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<5x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<5x8x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  return
}
