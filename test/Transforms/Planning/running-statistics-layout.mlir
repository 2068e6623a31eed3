// RUN: dpc-opt %s --train --optimizer=momentum -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=1 --tp=2 --pp=1 --zero=0 --micro-batches=2 --partition -test-dpc-communication-volume | FileCheck %s

// A batch norm split over its channels (the convolution before it fixed
// split by output channel over tp) reads and updates running statistics.
// They lie as the batch norm takes them, split over tp, in
// @forward_backward and in @train_step, so that each micro-batch's new
// statistics go to the next as they are: nothing gathers them. (Held
// whole, every step gathered them after the update, which the plan never
// charged.)
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [tp]>, dpc.state = "bn.running_mean"}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [tp]>, dpc.state = "bn.running_mean"}
// CHECK-NOT: dpc.all_gather {{.*}} : tensor<{{[0-9]+}}xf32>
// CHECK: return
dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=2]
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
  %0 = dpc.conv2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64, dpc.sharding = [#dpc.sharding<@plan, [dp, tp, *, *]>]} : (tensor<4x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<4x8x6x6xf32>
  %1:5 = dpc.batch_norm %0, %gamma, %beta, %mean, %var {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32, training} : tensor<4x8x6x6xf32>, tensor<8xf32>
  %2 = dpc.relu %1#0 : tensor<4x8x6x6xf32>
  %4 = dpc.reduce_mean %2 [2, 3] : tensor<4x8x6x6xf32> -> tensor<4x8xf32>
  %5 = dpc.matmul %4, %head : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %loss = dpc.softmax_cross_entropy %5, %labels mean {ignore_index = -100 : i64}
      : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss, %1#1, %1#2 : tensor<f32>, tensor<8xf32>, tensor<8xf32>
}
