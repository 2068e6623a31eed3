// RUN: dpc-opt %s --train --optimizer=sgd --precision=bf16 -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=3 --bucket-cap-mb=0.001 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// Under ZeRO-3 with mixed precision each rank keeps its block of the fp32
// masters; a weight's bf16 copy is made from the block and gathered, for
// the forward pass and again for the backward pass, so that each gather
// sends the compute copy (as Megatron-LM and DeepSpeed do, and as the plan
// charges it), not the fp32 master: 45076 bytes over dp per step, where
// gathering the masters sent 69652.
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[UP:.*]] = dpc.cast %arg2 {{.*}} : tensor<32x256xf32> -> tensor<32x256xbf16>
// CHECK: dpc.all_gather %[[UP]] over @plan ["dp"] dim 0 {{.*}} : tensor<32x256xbf16> -> tensor<64x256xbf16>
// CHECK: %[[HEAD:.*]] = dpc.cast %arg3 {{.*}}phase<forward>{{.*}} : tensor<128x16xf32> -> tensor<128x16xbf16>
// CHECK: dpc.all_gather %[[HEAD]] over @plan ["dp"] dim 0 {{.*}} : tensor<128x16xbf16> -> tensor<256x16xbf16>
// CHECK: dpc.cast %arg3 {{.*}}phase<backward>{{.*}} : tensor<128x16xf32> -> tensor<128x16xbf16>
// CHECK: dpc.all_gather {{.*}} over @plan ["dp"] dim 1 {{.*}} : tensor<16x128xbf16> -> tensor<16x256xbf16>
// CHECK-NOT: dpc.all_gather {{.*}}xf32> -> tensor<{{.*}}xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.sent_bytes = {dp = 45076 : i64, pp = 0 : i64, tp = 0 : i64}
// CHARGED: "sent_bytes_per_step": {
// CHARGED-NEXT: "dp": 45056,
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=1]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w1: tensor<64x256xf32> {dpc.param = "up.weight"},
                   %w2: tensor<256x16xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w1 : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
  %1 = dpc.tanh %0 : tensor<8x256xf32>
  %2 = dpc.matmul %1, %w2 : (tensor<8x256xf32>, tensor<256x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
