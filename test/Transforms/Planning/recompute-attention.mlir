// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=1 --recompute=attention --plan-report=%t.json | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: dpc-opt %t.mlir --mesh=1 --recompute=off | FileCheck %s --check-prefix=OFF

// Selective recomputation: the plan marks the forward ops of the
// attention's core (dpc.recompute: the scores' contraction, their scale,
// the softmax), and -dpc-recompute-layers clones them into the backward
// pass before its first reader, from the stored queries and transposed
// keys, so that the backward pass reads no stored scores or probabilities.
// The values' contraction and the projections are not recomputed.
// CHECK: module attributes {dpc.plan = {{{.*}}recompute = false, recompute_attention = true
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[Q:.*]] = dpc.matmul %arg0, %arg2 {dpc.phase = #dpc.phase<forward>
// CHECK: %[[KT:.*]] = dpc.transpose
// CHECK: %[[S:.*]] = dpc.matmul %[[Q]], %[[KT]] {dpc.phase = #dpc.phase<forward>, dpc.recompute
// CHECK: %[[SCALE:.*]] = dpc.constant
// CHECK: dpc.mul %[[S]], %[[SCALE]] {dpc.phase = #dpc.phase<forward>, dpc.recompute
// CHECK: %[[P:.*]] = dpc.softmax {{.*}}dpc.phase = #dpc.phase<forward>, dpc.recompute
// CHECK: dpc.matmul %[[P]], {{.*}}dpc.phase = #dpc.phase<forward>,
// CHECK-NOT: dpc.recompute
// CHECK: %[[SR:.*]] = dpc.matmul %[[Q]], %[[KT]] {dpc.phase = #dpc.phase<backward>
// CHECK-NEXT: %[[SSR:.*]] = dpc.mul %[[SR]], %[[SCALE]] {dpc.phase = #dpc.phase<backward>
// CHECK-NEXT: %[[PR:.*]] = dpc.softmax %[[SSR]] {{.*}}dpc.phase = #dpc.phase<backward>
// CHECK-NOT: %[[P]]
// CHECK: dpc.mul {{.*}}%[[PR]]
// CHECK-NOT: %[[P]]
// CHECK: return
// REPORT: "recompute": false,
// REPORT-NEXT: "recompute_attention": true,
// OFF-NOT: dpc.recompute
// OFF-NOT: recompute_attention
func.func @forward(%x: tensor<2x8x16xf32> {dpc.input = "x"},
                   %labels: tensor<2xi64> {dpc.input = "labels"},
                   %wq: tensor<16x16xf32> {dpc.param = "q.weight"},
                   %wk: tensor<16x16xf32> {dpc.param = "k.weight"},
                   %wv: tensor<16x16xf32> {dpc.param = "v.weight"},
                   %wo: tensor<16x4xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %q = dpc.matmul %x, %wq : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
  %k = dpc.matmul %x, %wk : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
  %v = dpc.matmul %x, %wv : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
  %kt = dpc.transpose %k [0, 2, 1] : tensor<2x8x16xf32> -> tensor<2x16x8xf32>
  %s = dpc.matmul %q, %kt : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %c = dpc.constant dense<2.500000e-01> : tensor<f32>
  %ss = dpc.mul %s, %c : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %p = dpc.softmax %ss {axis = 2 : i64} : tensor<2x8x8xf32>
  %o = dpc.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %pooled = dpc.reduce_mean %o [1] : tensor<2x8x16xf32> -> tensor<2x16xf32>
  %logits = dpc.matmul %pooled, %wo : (tensor<2x16xf32>, tensor<16x4xf32>) -> tensor<2x4xf32>
  %loss = dpc.softmax_cross_entropy %logits, %labels mean {ignore_index = -100 : i64}
      : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
