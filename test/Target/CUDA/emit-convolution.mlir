// RUN: dpc-opt %s --emit=cuda-source | FileCheck %s

// Convolutions and pooling take the same parameter structs as on the CPU,
// in the CUDA kernels' namespace.
// CHECK-LABEL: int32_t dpc_program_0_part0(
func.func @train_step(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32> {
  // CHECK: dpc::cuda::conv2d(ctx, v0, {1, 1, 4, 4}, v1, {1, 1, 3, 3}, static_cast<const float *>(nullptr), dpc::cuda::Conv2DParams{{[{][{]}}1, 1}, {0, 0, 0, 0}, {1, 1}, 1}
  %c = dpc.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  // CHECK: dpc::cuda::maxPool2d(ctx, {{v[0-9]+}}, {1, 1, 2, 2}, dpc::cuda::Pool2DParams{{[{][{]}}2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false}
  %p = dpc.max_pool2d %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x2x2xf32> -> tensor<1x1x1x1xf32>
  return %p : tensor<1x1x1x1xf32>
}
