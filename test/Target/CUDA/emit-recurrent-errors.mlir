// RUN: not dpc-opt %s --emit=cuda-source 2>&1 | FileCheck %s

// The CUDA backend has no recurrent kernels yet: an LSTM is an error on
// the op, and nothing is written.
func.func @train_step(%x: tensor<5x2x3xf32>, %w: tensor<16x3xf32>, %r: tensor<16x4xf32>, %b: tensor<32xf32>, %h: tensor<2x4xf32>) -> tensor<5x2x4xf32> {
  // CHECK: error: the CUDA backend does not compile 'dpc.lstm' yet
  %y, %hT, %cT = dpc.lstm %x, %w, %r, %b, %h, %h : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<5x2x4xf32>
}
