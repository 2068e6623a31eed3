// RUN: dpc-opt %s --train --optimizer=momentum --micro-batches=2 -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition | FileCheck %s
// RUN: dpc-opt %s --train --optimizer=momentum -o %t.one.mlir
// RUN: dpc-opt %t.one.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition | FileCheck %s --check-prefix=ONE

// A data-parallel embedding's gradients over two micro-batches: each rank
// scatters its own tokens' output gradients into the token table, and the
// position table's gradient (summed over the rank's samples) into the
// position table, with the sums still pending; both tables accumulate over
// the micro-batches and are all-reduced once, with the head's, in one
// bucket (50 * 16 + 8 * 16 + 16 * 5 = 1008 values). Nothing gathers the
// tokens, and nothing is reduced per micro-batch. The step takes its
// micro-batches along a leading dimension, each split over dp as the
// forward takes one, so every rank slices its own micro-batches: no
// all-to-all relays them.

// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: dpc.all_gather
// CHECK-NOT: dpc.all_reduce {{.*}}<sum>
// CHECK: dpc.scatter_add {{.*}} : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
// CHECK: dpc.scatter_add {{.*}} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<50x16xf32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<2x2x8xi64> {dpc.input = "tokens", dpc.sharding = #dpc.sharding<@plan, [*, dp, *]>}
// CHECK-NOT: dpc.all_to_all
// CHECK-NOT: dpc.all_gather
// CHECK: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}}: tensor<1008xf32>

// With one micro-batch the same tables are reduced inside the backward
// pass, in one bucket: the position table's sum over the samples is not
// all-reduced before it is scattered (a scatter that makes a gradient from
// as many bytes keeps the sum pending).
// ONE-LABEL: func.func @forward_backward
// ONE-NOT: dpc.all_gather
// ONE-NOT: dpc.all_reduce {{.*}}<sum> {{.*}}: tensor<{{[0-9x]+}}xf32>
// ONE: dpc.scatter_add {{.*}} : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
// ONE: dpc.scatter_add {{.*}} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<50x16xf32>
// ONE: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}}: tensor<1008xf32>
// ONE-LABEL: func.func @train_step
// ONE-NOT: dpc.all_reduce {{.*}}<sum>

func.func @forward(%tokens: tensor<4x8xi64> {dpc.input = "tokens"},
                   %labels: tensor<32xi64> {dpc.input = "labels"},
                   %tok: tensor<50x16xf32> {dpc.param = "tok.weight"},
                   %pos: tensor<8x16xf32> {dpc.param = "pos.weight"},
                   %head: tensor<16x5xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %idx = dpc.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %t = dpc.gather %tok[%tokens] {axis = 0 : i64} : (tensor<50x16xf32>, tensor<4x8xi64>) -> tensor<4x8x16xf32>
  %p = dpc.gather %pos[%idx] {axis = 0 : i64} : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  %pb = dpc.broadcast_to %p : tensor<8x16xf32> -> tensor<4x8x16xf32>
  %x = dpc.add %t, %pb : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %r = dpc.reshape %x : tensor<4x8x16xf32> -> tensor<32x16xf32>
  %logits = dpc.matmul %r, %head : (tensor<32x16xf32>, tensor<16x5xf32>) -> tensor<32x5xf32>
  %loss = dpc.softmax_cross_entropy %logits, %labels mean {ignore_index = -100 : i64}
      : (tensor<32x5xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
