// RUN: dpc-opt %s --train --optimizer=sgd --precision=bf16 --micro-batches=2 -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2x2 --dp=1 --tp=2 --pp=2 --zero=0 --pipeline-schedule=1f1b --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// A table tied across two pipeline stages (the lookup on the first, the
// output projection on the second), kept by column over tp, in bf16 over
// two micro-batches. The first stage keeps the table and sends its bf16
// copy once per step: each micro-batch used to cast it again and send the
// copy again. The second stage sends back each micro-batch's term of the
// gradient, reduce-scattered over tp first, so that a tp block crosses:
// with the sums kept pending over micro-batches, each term used to cross
// whole. (The sharding fixed on the table's argument of @forward used to
// make the partitioning take @forward for a pipelined step and fail.)
// CHECK-LABEL: func.func @train_step.stage0
// CHECK-SAME: dpc.sent_bytes = {dp = 0 : i64, pp = 2048 : i64
// CHECK: %[[COPY:.*]] = dpc.cast %arg0 {{.*}} : tensor<64x8xf32> -> tensor<64x8xbf16>
// CHECK-NEXT: dpc.send %[[COPY]] over @plan ["pp"] shift 1 {{.*}} : tensor<64x8xbf16>
// CHECK-NOT: dpc.cast %arg0
// CHECK-NOT: dpc.send {{.*}} : tensor<64x8xbf16>
// CHECK: dpc.recv over @plan ["pp"] shift -1 {{.*}} : tensor<64x8xbf16>
// CHECK: dpc.recv over @plan ["pp"] shift -1 {{.*}} : tensor<64x8xbf16>
// CHECK-LABEL: func.func @train_step.stage1
// CHECK: dpc.recv over @plan ["pp"] shift 1 {{.*}} : tensor<64x8xbf16>
// CHECK-NOT: dpc.recv {{.*}} : tensor<64x8xbf16>
// CHECK: dpc.reduce_scatter %{{.*}} over @plan ["tp"] <sum> dim 0 {{.*}} : tensor<16x64xbf16> -> tensor<8x64xbf16>
// CHECK: dpc.send %{{.*}} over @plan ["pp"] shift -1 {{.*}} : tensor<64x8xbf16>
// CHECK: dpc.reduce_scatter %{{.*}} over @plan ["tp"] <sum> dim 0 {{.*}} : tensor<16x64xbf16> -> tensor<8x64xbf16>
// CHECK: dpc.send %{{.*}} over @plan ["pp"] shift -1 {{.*}} : tensor<64x8xbf16>
// CHECK-NOT: dpc.send {{.*}} : tensor<64x16xbf16>
// The plan charges the copy once (1024 bytes) and each micro-batch's
// activations (512 bytes each).
// CHARGED: "sent_bytes_per_step": {
// CHARGED: "pp": 2048,
dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=2]
func.func @forward(%tokens: tensor<8x4xi64> {dpc.input = "tokens"},
                   %labels: tensor<32xi64> {dpc.input = "labels"},
                   %table: tensor<64x16xf32> {dpc.param = "table",
                                              dpc.sharding = #dpc.sharding<@plan, [*, tp]>})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.gather %table[%tokens] {axis = 0 : i64, dpc.sharding = [#dpc.sharding<@plan, [dp, *, tp]>]}
      : (tensor<64x16xf32>, tensor<8x4xi64>) -> tensor<8x4x16xf32>
  %1 = dpc.tanh %0 {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *, *]>]} : tensor<8x4x16xf32>
  %2 = dpc.transpose %table [1, 0] : tensor<64x16xf32> -> tensor<16x64xf32>
  %3 = dpc.matmul %1, %2 {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *, *]>]}
      : (tensor<8x4x16xf32>, tensor<16x64xf32>) -> tensor<8x4x64xf32>
  %4 = dpc.reshape %3 : tensor<8x4x64xf32> -> tensor<32x64xf32>
  %loss = dpc.softmax_cross_entropy %4, %labels mean {ignore_index = -100 : i64}
      : (tensor<32x64xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
