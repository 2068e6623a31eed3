// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=1 --tp=2 --pp=1 --zero=0 --partition -test-dpc-communication-volume | FileCheck %s

// A CNN's head under tensor parallelism (fixed here as the planner lays
// out resnet18's): the convolution's channels split over tp, the pooled
// features gathered for the classifier. The pooled gradient comes back
// whole; its broadcast over the image stays whole (an op whose operands
// are all whole over an axis does not split itself over it: its reader
// takes the slice it needs for free), and the ReLU's mask, split over the
// channels, selects from it in place. Splitting the broadcast over the
// image rows instead (free, but the wrong slice) moved the mask and the
// selected gradient with two all-to-alls: 4232 bytes sent per step. The
// classifier's weight gradient is made in its own layout, not contracted
// over a batch split over tp and then reduce-scattered: 516 bytes sent,
// 512 charged (1672 when the completion priced only the operands): the
// features gathered forward (256) and again backward for that gradient,
// as they are stored split (256; the planner charged the forward's gather
// twice and no second gather before it priced each direction apart).
// CHECK-LABEL: func.func @forward_backward
// CHECK: dpc.all_gather {{.*}} over @plan ["tp"] dim 1 {{.*}}phase<forward>{{.*}} : tensor<4x16xf32> -> tensor<4x32xf32>
// CHECK-NOT: dpc.all_to_all {{.*}} : tensor<4x
// CHECK: dpc.broadcast_to {{.*}} : tensor<4x32x1x1xf32> -> tensor<4x32x4x4xf32>
// CHECK-NOT: dpc.all_to_all
// CHECK: dpc.select {{.*}} : (tensor<4x16x4x4xi1>, tensor<4x16x4x4xf32>, tensor<f32>) -> tensor<4x16x4x4xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.sent_bytes = {dp = 0 : i64, pp = 0 : i64, tp = 516 : i64}
dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=2]
func.func @forward(%x: tensor<4x8x4x4xf32> {dpc.input = "x"},
                   %labels: tensor<4xi64> {dpc.input = "labels"},
                   %w: tensor<32x8x3x3xf32> {dpc.param = "conv.weight"},
                   %head: tensor<32x10xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.conv2d %x, %w {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dpc.sharding = [#dpc.sharding<@plan, [dp, tp, *, *]>]}
      : (tensor<4x8x4x4xf32>, tensor<32x8x3x3xf32>) -> tensor<4x32x4x4xf32>
  %1 = dpc.relu %0 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp, *, *]>]} : tensor<4x32x4x4xf32>
  %2 = dpc.reduce_mean %1 [2, 3] {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]} : tensor<4x32x4x4xf32> -> tensor<4x32xf32>
  %3 = dpc.matmul %2, %head {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} : (tensor<4x32xf32>, tensor<32x10xf32>) -> tensor<4x10xf32>
  %loss = dpc.softmax_cross_entropy %3, %labels mean {ignore_index = -100 : i64}
      : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
