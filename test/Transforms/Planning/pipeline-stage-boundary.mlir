// RUN: dpc-opt %s --train --optimizer=sgd --micro-batches=2 -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=1 --tp=1 --pp=2 --zero=0 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// Two stages: the embedding on stage 0, the MLP block and head on stage 1.
// Per micro-batch, the only values crossing are the embedded tokens
// (forward) and their gradient (backward), 4096 bytes each:
// - the up-projection's input gradient, made from stage 1's weight and
//   output gradient, stays on stage 1 although it only feeds the
//   embedding table's gradient on stage 0 (run there, it would need the
//   32x256 weight and the 4x8x256 gradient sent back);
// - the residual's two gradients are added on stage 1, before crossing;
// - the ReLU's mask is read off its result, which stage 1 keeps for the
//   down-projection's weight gradient: no pre-activation crosses.
// CHECK-LABEL: func.func @train_step.stage0
// CHECK-SAME: dpc.sent_bytes = {dp = 0 : i64, pp = 8196 : i64, tp = 0 : i64}
// CHECK-NOT: dpc.recv {{.*}} : tensor<32x256xf32>
// CHECK-NOT: dpc.recv {{.*}} : tensor<4x8x256xf32>
// CHECK-LABEL: func.func @train_step.stage1
// CHECK-SAME: dpc.sent_bytes = {dp = 0 : i64, pp = 8196 : i64, tp = 0 : i64}
// CHECK: dpc.matmul {{.*}}phase<backward>{{.*}} : (tensor<4x8x256xf32>, tensor<256x32xf32>) -> tensor<4x8x32xf32>
// CHECK: dpc.send {{.*}}phase<backward>{{.*}} : tensor<4x8x32xf32>
// CHECK-NOT: dpc.send {{.*}} : tensor<4x8x256xf32>
// CHECK: dpc.send {{.*}}phase<backward>{{.*}} : tensor<4x8x32xf32>
// CHARGED: "sent_bytes_per_step": {
// CHARGED-NEXT: "dp": 0,
// CHARGED-NEXT: "pp": 8192,
// CHARGED: "sent_bytes_per_step": {
// CHARGED-NEXT: "dp": 0,
// CHARGED-NEXT: "pp": 8192,
func.func @forward(%tokens: tensor<4x8xi64> {dpc.input = "tokens"},
                   %labels: tensor<4x8xi64> {dpc.input = "labels"},
                   %embed: tensor<64x32xf32> {dpc.param = "embed.weight"},
                   %w: tensor<32x256xf32> {dpc.param = "up.weight"},
                   %v: tensor<256x32xf32> {dpc.param = "down.weight"},
                   %head: tensor<32x64xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %e = dpc.gather %embed[%tokens] {axis = 0 : i64} : (tensor<64x32xf32>, tensor<4x8xi64>) -> tensor<4x8x32xf32>
  %0 = dpc.matmul %e, %w : (tensor<4x8x32xf32>, tensor<32x256xf32>) -> tensor<4x8x256xf32>
  %1 = dpc.relu %0 : tensor<4x8x256xf32>
  %2 = dpc.matmul %1, %v : (tensor<4x8x256xf32>, tensor<256x32xf32>) -> tensor<4x8x32xf32>
  %3 = dpc.add %e, %2 : (tensor<4x8x32xf32>, tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %4 = dpc.matmul %3, %head : (tensor<4x8x32xf32>, tensor<32x64xf32>) -> tensor<4x8x64xf32>
  %5 = dpc.reshape %4 : tensor<4x8x64xf32> -> tensor<32x64xf32>
  %6 = dpc.reshape %labels : tensor<4x8xi64> -> tensor<32xi64>
  %7 = dpc.softmax_cross_entropy %5, %6 mean {ignore_index = -100 : i64} : (tensor<32x64xf32>, tensor<32xi64>) -> tensor<f32>
  return %7 : tensor<f32>
}
