// RUN: dpc-opt %s -dpc-recompute-layers | FileCheck %s
// RUN: sed 's/{recompute = true}/{recompute = true, recompute_attention = 1 : i64}/' %s | not dpc-opt -dpc-recompute-layers 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: sed 's/{recompute = true}/{recompute = "on"}/' %s | not dpc-opt -dpc-recompute-layers 2>&1 | FileCheck %s --check-prefix=BADON
// BAD: error: dpc.plan's recompute_attention (1 : i64) is not true or false
// BADON: error: dpc.plan's recompute ("on") is not true or false

// Two layers, h1 = tanh(x w) and y = tanh(h1 w), under a plan with
// recomputation: the layers' inputs (x, an argument, and h1, marked
// dpc.checkpoint) are kept; the matmul outputs the tanh gradients read are
// recomputed right before the backward op that needs them, layer 2's
// before layer 1's. The weight's transpose is made once per step and
// stays.
module attributes {dpc.plan = {recompute = true}} {
func.func @fb(%x: tensor<4x4xf32> {dpc.input = "x"}, %w: tensor<4x4xf32> {dpc.param = "w"},
              %dy: tensor<4x4xf32> {dpc.input = "dy"}) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %wt = dpc.transpose %w [1, 0] {dpc.phase = #dpc.phase<forward>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %a1 = dpc.matmul %x, %w {dpc.phase = #dpc.phase<forward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h1 = dpc.tanh %a1 {dpc.phase = #dpc.phase<forward>, dpc.checkpoint} : tensor<4x4xf32>
  %a2 = dpc.matmul %h1, %w {dpc.phase = #dpc.phase<forward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = dpc.tanh %a2 {dpc.phase = #dpc.phase<forward>} : tensor<4x4xf32>
  %t2 = dpc.mul %y, %y {dpc.phase = #dpc.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g2 = dpc.mul %dy, %t2 {dpc.phase = #dpc.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %dh1 = dpc.matmul %g2, %wt {dpc.phase = #dpc.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t1 = dpc.mul %h1, %a1 {dpc.phase = #dpc.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = dpc.mul %dh1, %t1 {dpc.phase = #dpc.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %g1, %g2 : tensor<4x4xf32>, tensor<4x4xf32>
}
}

// CHECK-LABEL: func.func @fb
// CHECK: %[[WT:.*]] = dpc.transpose
// CHECK: %[[A1:.*]] = dpc.matmul %arg0, %arg1 {dpc.phase = #dpc.phase<forward>}
// CHECK: %[[H1:.*]] = dpc.tanh %[[A1]] {dpc.checkpoint, dpc.phase = #dpc.phase<forward>}
// CHECK: dpc.matmul %[[H1]], %arg1 {dpc.phase = #dpc.phase<forward>}
// CHECK: dpc.tanh
// Layer 2, recomputed from h1 before its backward.
// CHECK-NEXT: %[[A2R:.*]] = dpc.matmul %[[H1]], %arg1 {dpc.phase = #dpc.phase<backward>}
// CHECK-NEXT: %[[YR:.*]] = dpc.tanh %[[A2R]] {dpc.phase = #dpc.phase<backward>}
// CHECK-NEXT: dpc.mul %[[YR]], %[[YR]]
// CHECK-NEXT: %[[G2:.*]] = dpc.mul %arg2
// CHECK-NEXT: %[[DH1:.*]] = dpc.matmul %[[G2]], %[[WT]]
// Layer 1, recomputed from x; h1 itself is kept.
// CHECK-NEXT: %[[A1R:.*]] = dpc.matmul %arg0, %arg1 {dpc.phase = #dpc.phase<backward>}
// CHECK-NEXT: dpc.mul %[[H1]], %[[A1R]]

