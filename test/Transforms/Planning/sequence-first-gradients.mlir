// RUN: dpc-opt %s --train --optimizer=momentum -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition | FileCheck %s
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s --check-prefix=SENT
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// A sequence-first linear layer (nn.TransformerEncoder's layout) under data
// parallelism, one micro-batch. Its weight gradient is a matmul batched
// over the sequence, contracting each rank's samples (a pending sum), then
// summed over the sequence: the sum stays pending through that sum, which
// shrinks it, so the all-reduce carries the 8x3 gradient, not 4x8x3.
// The cross-entropy's one-hot compares the class indices, a constant every
// rank makes whole, with each rank's own labels: nothing is gathered or
// exchanged for it.

// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: dpc.all_gather
// CHECK-NOT: dpc.all_to_all
// CHECK: dpc.compare eq, {{.*}} : (tensor<1x3xi64>, tensor<4x1xi64>) -> tensor<4x3xi1>
// CHECK-NOT: dpc.all_gather
// CHECK-NOT: dpc.all_to_all
// CHECK: dpc.matmul {{.*}} : (tensor<4x8x1xf32>, tensor<4x1x3xf32>) -> tensor<4x8x3xf32>
// CHECK-NEXT: %[[W:.*]] = dpc.reduce_sum {{.*}} [0] {{.*}} : tensor<4x8x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: dpc.all_reduce %[[W]] over @plan ["dp"] <sum> {{.*}} : tensor<8x3xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: dpc.all_reduce {{.*}} <sum>

// What each rank sends is what the plan charged: the gradient (24 floats:
// 96 bytes) and the loss's three scalars (12 bytes), which it does not
// charge.
// SENT: dpc.sent_bytes = {dp = 108 : i64, pp = 0 : i64, tp = 0 : i64}
// CHARGED: "sent_bytes_per_step": {
// CHARGED-NEXT: "dp": 96,

func.func @forward(%x: tensor<2x4x8xf32> {dpc.input = "x"},
                   %labels: tensor<2x4xi64> {dpc.input = "labels"},
                   %w: tensor<8x3xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %s = dpc.transpose %x [1, 0, 2] : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  %y = dpc.matmul %s, %w : (tensor<4x2x8xf32>, tensor<8x3xf32>) -> tensor<4x2x3xf32>
  %b = dpc.transpose %y [1, 0, 2] : tensor<4x2x3xf32> -> tensor<2x4x3xf32>
  %logits = dpc.reshape %b : tensor<2x4x3xf32> -> tensor<8x3xf32>
  %l = dpc.reshape %labels : tensor<2x4xi64> -> tensor<8xi64>
  %loss = dpc.softmax_cross_entropy %logits, %l mean {ignore_index = -100 : i64}
      : (tensor<8x3xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
