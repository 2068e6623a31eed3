// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=1 --tp=2 --pp=1 --zero=0 --plan-report=- -o /dev/null | FileCheck %s

// The up-projection's weight is fixed split by column over tp, but its
// product splits the batch there: it reads the weight whole, so its
// backward makes the whole weight's gradient (64x256 floats) before
// reducing it into the shard, beside its output's (4x256 floats): 65536 +
// 4096 bytes of temporaries, more than the classifier's 4352.
// CHECK: "gradients": 40960,
// CHECK: "temporaries": 69632,
// CHECK-NEXT: "total": 155904

dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w1: tensor<64x256xf32> {dpc.param = "up.weight",
                                            dpc.sharding = #dpc.sharding<@plan, [*, tp]>},
                   %w2: tensor<256x16xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w1 {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]}
      : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
  %1 = dpc.relu %0 : tensor<8x256xf32>
  %2 = dpc.matmul %1, %w2 : (tensor<8x256xf32>, tensor<256x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
