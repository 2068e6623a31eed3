// RUN: dpc-opt %s --train --optimizer=adam -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=1 --partition -test-dpc-communication-volume | FileCheck %s

// ZeRO-1 on a column-parallel layer with a bias. The bias is split over tp
// and has no other dimension for dp to split: its shard is `(tp, dp)`, dp
// minor, so that its gradient, split over tp and pending over dp, is
// reduce-scattered over dp within its tp block (in one bucket with the
// weight's), and the update's new block gathered over dp alone (4096 + 64
// floats per tp block). With dp major (across the tp blocks) the
// gradient was gathered over tp in the backward pass and the updated
// parameter gathered over tp again.
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: dpc.grad = "up.bias", dpc.sharding = #dpc.sharding<@plan, [(tp, dp)]>
// CHECK-NOT: dpc.all_gather {{.*}} over @plan ["tp"
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.param = "up.bias", dpc.sharding = #dpc.sharding<@plan, [tp]>
// CHECK-NOT: dpc.all_gather {{.*}} over @plan ["tp"
// CHECK: dpc.all_gather {{.*}} over @plan ["dp"] dim 0 {{.*}} : tensor<4160xf32> -> tensor<8320xf32>
// CHECK-NOT: dpc.all_gather {{.*}} over @plan ["tp"
// CHECK: return
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w0: tensor<64x256xf32> {dpc.param = "up.weight"},
                   %b0: tensor<256xf32> {dpc.param = "up.bias"},
                   %w1: tensor<256x16xf32> {dpc.param = "down.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w0 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
  %1 = dpc.add %0, %b0 : (tensor<8x256xf32>, tensor<256xf32>) -> tensor<8x256xf32>
  %2 = dpc.relu %1 : tensor<8x256xf32>
  %3 = dpc.matmul %2, %w1 {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]} : (tensor<8x256xf32>, tensor<256x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %3, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
