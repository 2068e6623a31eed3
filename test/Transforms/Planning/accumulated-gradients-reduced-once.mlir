// RUN: dpc-opt %s --train --optimizer=adam --precision=bf16 --micro-batches=2 -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=0 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// A weight kept by column over tp and read whole by a matmul that splits
// the batch over dp and tp, in bf16, over two micro-batches. Each
// micro-batch's weight gradient is a sum pending over dp and tp; its cast
// to fp32 keeps the sum pending, so @forward_backward returns it unreduced
// and the step adds the two micro-batches' terms in fp32 before anything
// is sent. The accumulated sum is then reduced once, where the optimizer
// reads it: reduce-scattered over tp into the weight's columns and the
// column block all-reduced over dp (both weights in one bucket), not
// all-reduced whole and sliced. Before, the cast finished the sum: each
// micro-batch's bf16 gradients were reduced (twice the bytes the plan
// charged); kept pending but read whole by the averaging, they were
// all-reduced over dp and tp whole.
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: tensor<64x64xf32> {dpc.grad = "hidden.weight", dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [dp : sum, tp : sum]>}
// CHECK-NOT: dpc.all_reduce {{.*}} <sum> {{.*}} : tensor<{{[0-9]+}}x
// CHECK-NOT: dpc.reduce_scatter {{.*}} <sum>
// CHECK: return
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.sent_bytes = {dp = 10284 : i64, pp = 0 : i64, tp = 22536 : i64}
// CHECK: call @forward_backward
// CHECK-NOT: dpc.all_reduce {{.*}} : tensor<64x64xf32>
// CHECK: %[[SUM:.*]] = dpc.add %{{.*}}, %{{.*}} {{.*}}phase<optimizer>{{.*}} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
// CHECK-NEXT: dpc.reduce_scatter %[[SUM]] over @plan ["tp"] <sum> dim 1 {{.*}} : tensor<64x64xf32> -> tensor<64x32xf32>
// CHECK-NOT: dpc.all_reduce {{.*}} : tensor<64x64xf32>
// CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> {{.*}}phase<optimizer>{{.*}} : tensor<2560xf32>
// CHECK-NOT: dpc.all_reduce {{.*}} : tensor<64x64xf32>
// CHECK: return
// The plan charges that: one fp32 reduction (2560 elements a rank over
// dp, the whole gradients reduce-scattered over tp), beside the gathers.
// CHARGED: "sent_bytes_per_step": {
// CHARGED-NEXT: "dp": 10240,
// CHARGED-NEXT: "pp": 0,
// CHARGED-NEXT: "tp": 22528
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x64xf32> {dpc.param = "hidden.weight",
                                          dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
                   %head: tensor<64x16xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]}
      : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %1 = dpc.relu %0 : tensor<8x64xf32>
  %2 = dpc.matmul %1, %head {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]}
      : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
