// RUN: dpc-opt %s -test-dpc-buffer-plan -split-input-file | FileCheck %s

// A GeLU derivative's pieces: `x / sqrt 2` is read by the erf chain and by
// its own square, `1 + erf` by two loops. What they are made from (the
// argument x) is alive throughout, so each is recomputed in every loop
// that reads it rather than stored: the two loops hold their results
// alone (two 16 KiB buffers, where storing the pieces held two more).
// CHECK-LABEL: func.func @gelu_derivative
// CHECK-SAME: dpc.live_bytes = 32768
// (emit-recomputed-elementwise.mlir: the loops as emitted.)
// CHECK: dpc.div {{.*}}dpc.buffer = ["fused"]
// CHECK: dpc.add {{.*}}dpc.buffer = ["fused"]
// CHECK: dpc.mul %arg0, {{.*}}dpc.buffer = [{{[0-9]+}}]
func.func @gelu_derivative(%x: tensor<64x64xf32>, %dy: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %root2 = dpc.constant dense<1.41421354> : tensor<f32>
  %one = dpc.constant dense<1.000000e+00> : tensor<f32>
  %s = dpc.div %x, %root2 : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %e = dpc.erf %s : tensor<64x64xf32>
  %p = dpc.add %e, %one : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %g = dpc.mul %x, %p : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %w = dpc.matmul %g, %dy : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = dpc.mul %dy, %p : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %q = dpc.mul %s, %s : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %n = dpc.neg %q : tensor<64x64xf32>
  %k = dpc.exp %n : tensor<64x64xf32>
  %d = dpc.add %a, %k : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %w, %d : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Where recomputing would keep its operand alive longer (the product is
// read by nothing else after the first loop), the piece is stored.
// CHECK-LABEL: func.func @operand_dies
// CHECK: dpc.exp {{.*}}dpc.buffer = [{{[0-9]+}}]
func.func @operand_dies(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %m = dpc.matmul %x, %y : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = dpc.exp %m : tensor<64x64xf32>
  %a = dpc.add %e, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = dpc.matmul %a, %y : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = dpc.mul %e, %r : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r, %b : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A reduction reads its fused operands at flat indices, where none may be
// broadcast: a piece made under broadcasting (a batch norm's centred
// input) that a summed loop reads is stored, though its operands live on.
// CHECK-LABEL: func.func @broadcast_into_reduction
// CHECK: dpc.sub {{.*}}dpc.buffer = [{{[0-9]+}}]
// CHECK: dpc.mul {{.*}}dpc.buffer = ["fused"]
func.func @broadcast_into_reduction(%x: tensor<8x64xf32>, %m: tensor<1x64xf32>)
    -> (tensor<64xf32>, tensor<8x64xf32>) {
  %c = dpc.sub %x, %m : (tensor<8x64xf32>, tensor<1x64xf32>) -> tensor<8x64xf32>
  %q = dpc.mul %c, %c : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %s = dpc.reduce_sum %q [0] : tensor<8x64xf32> -> tensor<64xf32>
  %e = dpc.exp %c : tensor<8x64xf32>
  return %s, %e : tensor<64xf32>, tensor<8x64xf32>
}
