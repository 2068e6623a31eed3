// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=0 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED

// The planner prices a layout change's backward as the gradient's own
// change, not as the forward's again. Four contractions, fixed:
// - a column-parallel one whose output a whole-width one reads: gathered
//   forward (512 bytes sent per device), and its gradient, made whole,
//   sliced for free backward;
// - a column-parallel one reading a whole value: nothing moves forward,
//   and its input's gradient is a sum pending over tp, all-reduced
//   backward (512 bytes);
// - a row-parallel one: its partial result all-reduced forward (256
//   bytes), the whole gradient it gets back taken as it is.
// 1280 bytes over tp, as the program sends them (the loss's scalars
// aside). Charging each change twice, the plan said 1536.
// CHECK-LABEL: func.func @forward_backward
// CHECK: dpc.all_gather {{.*}} over @plan ["tp"] dim 1 {{.*}}phase<forward>{{.*}} : tensor<4x32xf32> -> tensor<4x64xf32>
// CHECK: dpc.all_reduce {{.*}} over @plan ["tp"] <sum> {{.*}}phase<forward>{{.*}} : tensor<4x16xf32>
// CHECK-NOT: dpc.all_gather {{.*}} over @plan ["tp"]
// CHECK: dpc.all_reduce {{.*}} over @plan ["tp"] <sum> {{.*}}phase<backward>{{.*}} : tensor<4x32xf32>
// CHECK-NOT: dpc.all_gather {{.*}} over @plan ["tp"]
// CHECK-NOT: dpc.all_reduce {{.*}} over @plan ["tp"] <sum> {{.*}}phase<backward>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tp = 12{{[0-9][0-9]}} : i64
// CHARGED: "sent_bytes_per_step": {
// CHARGED: "tp": 1280
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x32xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w0: tensor<32x64xf32> {dpc.param = "w0"},
                   %b0: tensor<64xf32> {dpc.param = "b0"},
                   %w1: tensor<64x32xf32> {dpc.param = "w1"},
                   %w2: tensor<32x64xf32> {dpc.param = "w2"},
                   %w3: tensor<64x16xf32> {dpc.param = "w3"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w0 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = dpc.add %0, %b0 {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]}
      : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %2 = dpc.matmul %1, %w1 {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]}
      : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %3 = dpc.relu %2 : tensor<8x32xf32>
  %4 = dpc.matmul %3, %w2 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %5 = dpc.relu %4 : tensor<8x64xf32>
  %6 = dpc.matmul %5, %w3 {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]}
      : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %6, %labels mean {ignore_index = -100 : i64, dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : mean]>]}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
