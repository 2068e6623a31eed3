// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=1 --tp=2 --pp=1 --zero=0 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=CHARGED
// RUN: dpc-opt %t.mlir --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=0 --partition -test-dpc-communication-volume | FileCheck %s --check-prefix=DPTP

// A table kept split by column over tp, read by a lookup (split by column,
// as the table) and, transposed, by an output projection that splits the
// batch over tp and reads it whole. Its gradient has two terms: the
// lookup's, made by column after its output gradient is moved back into
// the lookup's layout (an all-to-all, as the forward's), and the
// projection's, a sum pending over tp, transposed and added to it. Wanted
// by column where each term is made, not only at the end, the pending term
// is reduce-scattered into the columns once (2 KiB sent per device), and
// the sum is made by column. Before, both terms were made whole, the
// pending one all-reduced (4 KiB), and the sum sliced: 10760 bytes sent
// over tp where the plan charged 5120.
// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: dpc.all_reduce {{.*}} : tensor<16x64xf32>
// CHECK: dpc.reduce_scatter {{.*}} over @plan ["tp"] <sum> dim 1 {{.*}} : tensor<64x16xf32> -> tensor<64x8xf32>
// CHECK-NOT: dpc.all_reduce {{.*}} : tensor<64x16xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.sent_bytes = {dp = 4 : i64, pp = 0 : i64, tp = 5128 : i64}
// CHARGED: "sent_bytes_per_step": {
// CHARGED: "tp": 5120

// Over dp as well, the projection's term is pending over dp and tp, the
// lookup's over dp alone: the sum keeps what both hold pending (dp), the
// first term's tp sum reduce-scattered before it, and the table's gradient
// is all-reduced over dp once (2 KiB, as charged), not each term (4 KiB).
// DPTP-LABEL: func.func @forward_backward
// DPTP: dpc.reduce_scatter {{.*}} over @plan ["tp"] <sum> dim 1 {{.*}} : tensor<64x16xf32> -> tensor<64x8xf32>
// DPTP: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}} : tensor<64x8xf32>
// DPTP-NOT: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}} : tensor<{{64x8|1024}}xf32>
// DPTP-LABEL: func.func @train_step
// DPTP-SAME: dpc.sent_bytes = {dp = 2072 : i64, pp = 0 : i64, tp = 4612 : i64}
dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=2]
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
