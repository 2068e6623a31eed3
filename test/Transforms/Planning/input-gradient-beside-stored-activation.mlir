// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=1 --tp=2 --pp=1 --zero=0 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// A down-projection that splits the batch over tp and reads its weight,
// kept split by row, whole (gathered forward). Its input gradient,
// dY·Wᵀ, can be made as the forward's dual makes it: the batch split, the
// weight gathered again (64 KiB sent per device). Priced on its operands
// alone, two other ways looked cheaper: contracting over the split rows
// (its whole 512 KiB result then all-reduced), or splitting its columns
// from the gathered output gradient (then all-to-all'ed, 128 KiB, to the
// batch split of the stored activation whose derivative it is multiplied
// by). The completion prices a sum it leaves pending, and the layout its
// pointwise reader will move it into. 557064 bytes were sent over tp per
// step, then 360460; 262156 now, as the plan charges (the forward gather,
// the backward gather, the weight gradients' reduce-scatter).
// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: dpc.all_reduce {{.*}} : tensor<256x512xf32>
// CHECK-NOT: dpc.all_to_all {{.*}} : tensor<256x256xf32>
// CHECK: dpc.all_gather {{.*}} over @plan ["tp"] dim 1 {{.*}}phase<backward>{{.*}} : tensor<64x256xf32> -> tensor<64x512xf32>
// CHECK-NOT: dpc.all_to_all {{.*}} : tensor<256x256xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.sent_bytes = {dp = 4 : i64, pp = 0 : i64, tp = 262156 : i64}
// CHARGED: "sent_bytes_per_step": {
// CHARGED: "tp": 262144
dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=2]
func.func @forward(%x: tensor<256x32xf32> {dpc.input = "x"},
                   %labels: tensor<256xi64> {dpc.input = "labels"},
                   %up: tensor<32x512xf32> {dpc.param = "up.weight"},
                   %down: tensor<512x64xf32> {dpc.param = "down.weight",
                                              dpc.sharding = #dpc.sharding<@plan, [tp, *]>})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %up {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]}
      : (tensor<256x32xf32>, tensor<32x512xf32>) -> tensor<256x512xf32>
  %1 = dpc.tanh %0 : tensor<256x512xf32>
  %2 = dpc.matmul %1, %down {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]}
      : (tensor<256x512xf32>, tensor<512x64xf32>) -> tensor<256x64xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<256x64xf32>, tensor<256xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
