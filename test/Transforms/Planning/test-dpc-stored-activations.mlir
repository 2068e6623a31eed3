// RUN: dpc-opt %s -test-dpc-stored-activations | FileCheck %s

// Stored is what the backward pass reads of the forward pass: the ReLU's
// output (128 bytes), not the batch (an argument) and not the weight's
// transpose (made once per step from a parameter alone).
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: dpc.stored_activation_bytes = 128 : i64
func.func @forward_backward(%x: tensor<4x8xf32> {dpc.input = "x"},
                            %w: tensor<8x8xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.loss, dpc.output = "loss"},
        tensor<8x8xf32> {dpc.grad = "w"}) {
  %one = dpc.constant dense<1.0> : tensor<4x8xf32>
  // CHECK: dpc.transpose %arg1 {{.*}}dpc.phase = #dpc.phase<forward>}
  %wt = dpc.transpose %w [1, 0] {dpc.phase = #dpc.phase<forward>} : tensor<8x8xf32> -> tensor<8x8xf32>
  // CHECK: dpc.matmul {{.*}}dpc.phase = #dpc.phase<forward>}
  %h = dpc.matmul %x, %wt {dpc.phase = #dpc.phase<forward>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // CHECK: dpc.relu {{.*}}dpc.stored_bytes = [128]
  %r = dpc.relu %h {dpc.phase = #dpc.phase<forward>} : tensor<4x8xf32>
  %l = dpc.reduce_sum %r [0, 1] {dpc.phase = #dpc.phase<forward>} : tensor<4x8xf32> -> tensor<f32>
  %m = dpc.mul %one, %r {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %xt = dpc.transpose %x [1, 0] {dpc.phase = #dpc.phase<backward>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %dw = dpc.matmul %xt, %m {dpc.phase = #dpc.phase<backward>} : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %dwt = dpc.add %dw, %wt {dpc.phase = #dpc.phase<backward>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %l, %dwt : tensor<f32>, tensor<8x8xf32>
}
