// RUN: dpc-opt %s -dpc-recompute-pointwise | FileCheck %s

// A GeLU written as x * (1 + erf(x * c)) of a matmul's output x: the
// backward pass reads x, the erf's operand and the factor; the last two are
// rebuilt from x, which it holds anyway, just before their first reader.
// CHECK-LABEL: func.func @gelu
func.func @gelu(%a: tensor<4x8xf32> {dpc.input = "a"}, %w: tensor<8x8xf32>,
                %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = dpc.constant dense<0.7> : tensor<f32>
  %one = dpc.constant dense<1.0> : tensor<f32>
  // CHECK:      %[[X:.*]] = dpc.matmul
  // CHECK-NEXT: %[[D:.*]] = dpc.mul %[[X]], %{{.*}} {dpc.phase = #dpc.phase<forward>}
  // CHECK-NEXT: %[[E:.*]] = dpc.erf %[[D]] {dpc.phase = #dpc.phase<forward>}
  // CHECK-NEXT: %[[F:.*]] = dpc.add %[[E]], %{{.*}} {dpc.phase = #dpc.phase<forward>}
  // CHECK-NEXT: %[[Y:.*]] = dpc.mul %[[X]], %[[F]] {dpc.phase = #dpc.phase<forward>}
  %x = dpc.matmul %a, %w {dpc.phase = #dpc.phase<forward>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d = dpc.mul %x, %c {dpc.phase = #dpc.phase<forward>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = dpc.erf %d {dpc.phase = #dpc.phase<forward>} : tensor<4x8xf32>
  %f = dpc.add %e, %one {dpc.phase = #dpc.phase<forward>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %y = dpc.mul %x, %f {dpc.phase = #dpc.phase<forward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[G0:.*]] = dpc.mul %arg2, %[[X]] {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: %[[D2:.*]] = dpc.mul %[[X]], %{{.*}} {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: %[[E2:.*]] = dpc.erf %[[D2]] {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: %[[F2:.*]] = dpc.add %[[E2]], %{{.*}} {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: %[[G1:.*]] = dpc.mul %[[G0]], %[[F2]] {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: %[[G2:.*]] = dpc.mul %arg2, %[[D2]] {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: dpc.add %[[G1]], %[[G2]]
  // CHECK-NEXT: return %[[Y]]
  %g0 = dpc.mul %dy, %x {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g1 = dpc.mul %g0, %f {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g2 = dpc.mul %dy, %d {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = dpc.add %g1, %g2 {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %g : tensor<4x8xf32>, tensor<4x8xf32>
}

// A ReLU of a matmul the backward pass does not read stays stored: its
// operand would have to be stored instead. A weight's cast, computed once
// per step from a parameter alone, is not a per-sample activation and
// stays where the forward pass made it.
// CHECK-LABEL: func.func @relu_of_matmul
func.func @relu_of_matmul(%x: tensor<4x8xbf16> {dpc.input = "x"}, %w: tensor<8x8xf32>,
                          %dy: tensor<4x8xbf16>)
    -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  // CHECK:      %[[WB:.*]] = dpc.cast %arg1 {dpc.phase = #dpc.phase<forward>}
  // CHECK-NEXT: %[[M:.*]] = dpc.matmul
  // CHECK-NEXT: %[[R:.*]] = dpc.relu %[[M]] {dpc.phase = #dpc.phase<forward>}
  // CHECK-NEXT: %[[G:.*]] = dpc.mul %arg2, %[[R]] {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: dpc.matmul %[[G]], %[[WB]] {dpc.phase = #dpc.phase<backward>}
  %wb = dpc.cast %w {dpc.phase = #dpc.phase<forward>} : tensor<8x8xf32> -> tensor<8x8xbf16>
  %m = dpc.matmul %x, %wb {dpc.phase = #dpc.phase<forward>} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %r = dpc.relu %m {dpc.phase = #dpc.phase<forward>} : tensor<4x8xbf16>
  %g = dpc.mul %dy, %r {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %dx = dpc.matmul %g, %wb {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  return %r, %dx : tensor<4x8xbf16>, tensor<4x8xbf16>
}

// The backward pass reads the f32 cast of a bf16 matmul output that it
// does not read itself: keeping the bf16 value and casting it again costs
// half the memory.
// CHECK-LABEL: func.func @keep_the_narrow_value
func.func @keep_the_narrow_value(%a: tensor<4x8xbf16> {dpc.input = "a"},
                                 %w: tensor<8x8xbf16>, %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK:      %[[X:.*]] = dpc.matmul
  // CHECK-NEXT: %[[C:.*]] = dpc.cast %[[X]] {dpc.phase = #dpc.phase<forward>}
  // CHECK-NEXT: %[[Y:.*]] = dpc.exp %[[C]]
  // CHECK-NEXT: %[[C2:.*]] = dpc.cast %[[X]] {dpc.phase = #dpc.phase<backward>}
  // CHECK-NEXT: dpc.mul %arg2, %[[C2]] {dpc.phase = #dpc.phase<backward>}
  %x = dpc.matmul %a, %w {dpc.phase = #dpc.phase<forward>} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %c = dpc.cast %x {dpc.phase = #dpc.phase<forward>} : tensor<4x8xbf16> -> tensor<4x8xf32>
  %y = dpc.exp %c {dpc.phase = #dpc.phase<forward>} : tensor<4x8xf32>
  %g = dpc.mul %dy, %c {dpc.phase = #dpc.phase<backward>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %g : tensor<4x8xf32>, tensor<4x8xf32>
}
