// RUN: not dpc-opt %s --emit=cuda-source 2>&1 | FileCheck %s

// An op the CUDA backend does not compile yet is an error on the op.
func.func @train_step(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: error: the CUDA backend does not compile 'dpc.conv2d' yet
  %c = dpc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %c : tensor<1x1x2x2xf32>
}
