// RUN: dpc-opt %s --train --optimizer=momentum -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition | FileCheck %s
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s --check-prefix=SENT
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// A data-parallel CNN step runs on each rank's own samples end to end: the
// batch norm's statistics are synchronized by all-reducing one value per
// channel (the mean's sum, then the squared deviations'), the backward
// convolution and pooling ops take the local batch, and the backward
// pass reads the forward's statistics and all-reduces its two sums in one
// call, never reduce-scattered and gathered, and not in the gradients'
// bucket, which it would wait for. Nothing gathers the batch.

// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: dpc.all_gather
// CHECK-NOT: dpc.reduce_scatter
// CHECK: dpc.conv2d {{.*}} -> tensor<2x8x6x6xf32>
// CHECK: dpc.reduce_sum {{.*}} [0, 2, 3] : tensor<2x8x6x6xf32> -> tensor<8xf32>
// CHECK: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}}: tensor<8xf32>
// CHECK: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}}: tensor<8xf32>
// CHECK: dpc.batch_norm
// CHECK-NOT: training
// CHECK-SAME: tensor<2x8x6x6xf32>, tensor<8xf32>
// CHECK: dpc.max_pool2d_grad {{.*}} : tensor<2x8x6x6xf32>, tensor<2x8x3x3xf32>
// CHECK-NOT: dpc.all_reduce {{.*}}: tensor<1x8x1x1xf32>
// CHECK: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}}: tensor<16xf32>
// CHECK: dpc.conv2d_filter_grad {{.*}} : (tensor<2x3x6x6xf32>, tensor<2x8x6x6xf32>) -> tensor<8x3x3x3xf32>
// The gradients are all-reduced in one bucket before they are returned.
// CHECK: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}}: tensor<272xf32>
// CHECK-NOT: dpc.all_gather
// CHECK-NOT: dpc.reduce_scatter
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: dpc.all_reduce {{.*}} <sum>

// Each device sends 1088 bytes for the gradients' all-reduce (272 floats
// over 2 ranks) and 32 for each of the four all-reduces of the 8 channels'
// statistics (two forward, two backward in one call); the plan charges
// those too. The 12 bytes more are the loss's scalars.
// SENT: dpc.sent_bytes = {dp = 1228 : i64, pp = 0 : i64, tp = 0 : i64}
// CHARGED: "sent_bytes_per_step": {
// CHARGED-NEXT: "dp": 1216,

func.func @forward(%x: tensor<4x3x6x6xf32> {dpc.input = "x"},
                   %labels: tensor<4xi64> {dpc.input = "labels"},
                   %f: tensor<8x3x3x3xf32> {dpc.param = "conv.weight"},
                   %gamma: tensor<8xf32> {dpc.param = "bn.weight"},
                   %beta: tensor<8xf32> {dpc.param = "bn.bias"},
                   %mean: tensor<8xf32> {dpc.state = "bn.running_mean"},
                   %var: tensor<8xf32> {dpc.state = "bn.running_var"},
                   %head: tensor<8x5xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"},
        tensor<8xf32> {dpc.state = "bn.running_mean"},
        tensor<8xf32> {dpc.state = "bn.running_var"}) {
  %0 = dpc.conv2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<4x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x6x6xf32>
  %1:5 = dpc.batch_norm %0, %gamma, %beta, %mean, %var {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32, training} : tensor<4x8x6x6xf32>, tensor<8xf32>
  %2 = dpc.relu %1#0 : tensor<4x8x6x6xf32>
  %3 = dpc.max_pool2d %2 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<4x8x6x6xf32> -> tensor<4x8x3x3xf32>
  %4 = dpc.reduce_mean %3 [2, 3] : tensor<4x8x3x3xf32> -> tensor<4x8xf32>
  %5 = dpc.matmul %4, %head : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %loss = dpc.softmax_cross_entropy %5, %labels mean {ignore_index = -100 : i64}
      : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss, %1#1, %1#2 : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}
