// RUN: dpc-opt %s --train --optimizer=adam -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=1 --partition -test-dpc-communication-volume | FileCheck %s

// ZeRO-1 on a Megatron-style MLP (fixed here: the up-projection by column,
// the down-projection by row). Each rank's ZeRO shard of a weight split
// over tp splits another dimension over dp, so that the weight gradient,
// split over tp and pending over dp, is reduce-scattered over dp within
// its tp block. With both axes on the down-projection's rows (dp major,
// across the tp blocks), its gradient was all-reduced over dp, gathered
// over tp and sliced: 16768 bytes sent over tp per step where now 384 are.
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: dpc.grad = "up.weight", dpc.sharding = #dpc.sharding<@plan, [dp, tp]>
// CHECK-SAME: dpc.grad = "down.weight", dpc.sharding = #dpc.sharding<@plan, [tp, dp]>
// CHECK-NOT: dpc.all_gather {{.*}}phase<backward>
// CHECK: dpc.reduce_scatter {{.*}} over @plan ["dp"] <sum> dim 1 {{.*}}phase<backward>{{.*}} : tensor<128x16xf32> -> tensor<128x8xf32>
// CHECK-NOT: dpc.all_gather {{.*}}phase<backward>
// CHECK: dpc.reduce_scatter {{.*}} over @plan ["dp"] <sum> dim 0 {{.*}}phase<backward>{{.*}} : tensor<64x128xf32> -> tensor<32x128xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tp = 384 : i64
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w0: tensor<64x256xf32> {dpc.param = "up.weight"},
                   %w1: tensor<256x16xf32> {dpc.param = "down.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w0 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
  %1 = dpc.relu %0 : tensor<8x256xf32>
  %2 = dpc.matmul %1, %w1 {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]} : (tensor<8x256xf32>, tensor<256x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
