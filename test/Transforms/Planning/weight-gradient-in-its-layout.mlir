// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=0 --partition -test-dpc-communication-volume | FileCheck %s

// The up-projection's output fixed split by column over tp, then averaged
// over groups of channels; the classifier's batch split over dp and tp
// (fixed here as the planner chose before it counted the second gather of
// a stored operand; it now gathers the channels before the average, one
// collective rather than two). The plan charges moving the small pooled
// features (and their gradient) between the layouts: 32 bytes over tp. The gradient comes back
// batch-split over tp. Contracting it so with the input would make the
// up-projection's weight gradient a sum pending over tp, reduce-scattered
// into the weight's columns (8 KiB per device); the completion counts that
// reduction against the choice, and moves the output gradient into the
// weight's layout instead (an all-to-all of 512 bytes). 8292 bytes were
// sent over tp per step when only the operands were priced; 500 now.
// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: dpc.reduce_scatter {{.*}} over @plan ["tp"] {{.*}} : tensor<64x64xf32>
// CHECK: dpc.all_to_all {{.*}} over @plan ["tp"] split 1 concat 0 {{.*}} : tensor<2x64xf32> -> tensor<4x32xf32>
// CHECK: dpc.matmul {{.*}} : (tensor<64x4xf32>, tensor<4x32xf32>) -> tensor<64x32xf32>
// CHECK-NOT: dpc.reduce_scatter {{.*}} over @plan ["tp"] {{.*}} : tensor<64x64xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.sent_bytes = {dp = 8476 : i64, pp = 0 : i64, tp = 500 : i64}
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w0: tensor<64x64xf32> {dpc.param = "up.weight"},
                   %w1: tensor<4x16xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w0 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %1 = dpc.relu %0 : tensor<8x64xf32>
  %2 = dpc.reshape %1 : tensor<8x64xf32> -> tensor<8x4x16xf32>
  %3 = dpc.reduce_mean %2 [2] {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : tensor<8x4x16xf32> -> tensor<8x4xf32>
  %4 = dpc.matmul %3, %w1 {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]}
      : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %4, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
