// RUN: dpc-opt %s -split-input-file -verify-diagnostics -dpc-differentiate | FileCheck %s

// The loss is the only scalar output; each op contributes its own rule.
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32> {dpc.input = "x"}, %[[W:.*]]: tensor<3x2xf32> {dpc.param = "w"}, %[[B:.*]]: tensor<2xf32> {dpc.param = "b"}, %[[L:.*]]: tensor<4xi64> {dpc.input = "labels"}
// CHECK-SAME: -> (tensor<f32> {dpc.loss, dpc.output = "loss"}, tensor<3x2xf32> {dpc.grad = "w"}, tensor<2xf32> {dpc.grad = "b"})
// The model's ops are the forward phase, what the sweep adds the backward.
// CHECK:       %[[XW:.*]] = dpc.matmul %[[X]], %[[W]] {dpc.phase = #dpc.phase<forward>}
// CHECK:       %[[Y:.*]] = dpc.add %[[XW]], %[[B]] {dpc.phase = #dpc.phase<forward>}
// CHECK:       %[[LOSS:.*]] = dpc.softmax_cross_entropy %[[Y]], %[[L]] mean {dpc.phase = #dpc.phase<forward>
// The loss gradient: softmax minus one-hot, over the kept count.
// CHECK:       %[[P:.*]] = dpc.softmax %[[Y]] {axis = 1 : i64, dpc.phase = #dpc.phase<backward>}
// CHECK:       %[[ONEHOT:.*]] = dpc.cast %{{.*}} : tensor<4x2xi1> -> tensor<4x2xf32>
// CHECK:       %[[KEPT:.*]] = dpc.compare ne, %[[L]], %{{.*}} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
// CHECK:       %[[DIFF:.*]] = dpc.sub %[[P]], %[[ONEHOT]]
// CHECK:       %[[DY:.*]] = dpc.mul %[[DIFF]], %{{.*}} : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
// The bias gradient sums the broadcast dimension away.
// CHECK:       %[[DB:.*]] = dpc.reduce_sum %[[DY]] [0]{{.*}} : tensor<4x2xf32> -> tensor<2xf32>
// The weight gradient is x^T @ dy.
// CHECK:       %[[XT:.*]] = dpc.transpose %[[X]] [1, 0]
// CHECK:       %[[DW:.*]] = dpc.matmul %[[XT]], %[[DY]] {dpc.phase = #dpc.phase<backward>}
// CHECK:       return %[[LOSS]], %[[DW]], %[[DB]]
func.func @forward(%x: tensor<4x3xf32> {dpc.input = "x"}, %w: tensor<3x2xf32> {dpc.param = "w"},
                   %b: tensor<2xf32> {dpc.param = "b"}, %labels: tensor<4xi64> {dpc.input = "labels"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = dpc.add %0, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %2 = dpc.softmax_cross_entropy %1, %labels mean {ignore_index = -100 : i64} : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// A parameter used twice gets the sum of both gradients; one the loss does
// not read gets zeros; ops off the path to the loss are not differentiated.
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {dpc.loss, dpc.output = "loss"}, tensor<4xf32> {dpc.output = "side"}, tensor<4xf32> {dpc.grad = "w"}, tensor<4xf32> {dpc.grad = "unused"})
// CHECK:       %[[SIDE:.*]] = dpc.exp
// CHECK-NOT:   dpc.exp
// CHECK:       %[[ONES:.*]] = dpc.broadcast_to
// CHECK:       %[[G1:.*]] = dpc.mul %[[ONES]], %arg0
// CHECK:       %[[G2:.*]] = dpc.mul %[[ONES]], %arg0
// CHECK:       %[[SUM:.*]] = dpc.add %[[G1]], %[[G2]]
// CHECK:       %[[ZERO:.*]] = dpc.constant {{.*}}dense<0.000000e+00>{{.*}} : tensor<4xf32>
// CHECK:       return %{{.*}}, %[[SIDE]], %[[SUM]], %[[ZERO]]
func.func @forward(%w: tensor<4xf32> {dpc.param = "w"}, %unused: tensor<4xf32> {dpc.param = "unused"})
    -> (tensor<f32> {dpc.output = "loss"}, tensor<4xf32> {dpc.output = "side"}) {
  %0 = dpc.mul %w, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = dpc.reduce_sum %0 [0] : tensor<4xf32> -> tensor<f32>
  %2 = dpc.exp %unused : tensor<4xf32>
  return %1, %2 : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{more than one scalar output could be the loss; name it with loss=<output>}}
func.func @forward(%w: tensor<4xf32> {dpc.param = "w"}) -> (tensor<f32> {dpc.output = "a"}, tensor<f32> {dpc.output = "b"}) {
  %0 = dpc.reduce_sum %w [0] : tensor<4xf32> -> tensor<f32>
  return %0, %0 : tensor<f32>, tensor<f32>
}

// -----

func.func @forward(%w: tensor<1x1x2x2xf32> {dpc.param = "w"}) -> (tensor<f32> {dpc.output = "loss"}) {
  // expected-error @+1 {{'dpc.max_pool2d_grad' has no gradient rule, but a parameter reaches the loss through it}}
  %0 = dpc.max_pool2d_grad %w, %w {kernel_shape = array<i64: 1, 1>, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
  %1 = dpc.reduce_sum %0 [0, 1, 2, 3] : tensor<1x1x2x2xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// ReLU's mask is read off its result (positive exactly where its input
// is): the next op keeps the result for its own gradient anyway, and the
// input need not be kept at all.
// CHECK-LABEL: func.func @forward_backward
// CHECK:       %[[H:.*]] = dpc.matmul
// CHECK:       %[[R:.*]] = dpc.relu %[[H]] {dpc.phase = #dpc.phase<forward>}
// CHECK-NOT:   dpc.compare gt, %[[H]]
// CHECK:       %[[MASK:.*]] = dpc.compare gt, %[[R]], %{{.*}} {dpc.phase = #dpc.phase<backward>}
// CHECK:       dpc.select %[[MASK]]
func.func @forward(%x: tensor<4x3xf32> {dpc.input = "x"}, %w: tensor<3x2xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = dpc.relu %0 : tensor<4x2xf32>
  %2 = dpc.reduce_sum %1 [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %2 : tensor<f32>
}
