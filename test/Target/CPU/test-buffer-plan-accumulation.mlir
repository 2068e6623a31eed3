// RUN: dpc-opt %s -test-dpc-buffer-plan -split-input-file | FileCheck %s

// Gradients accumulated over micro-batches: the running sum is stored as
// each micro-batch's gradient is added into it. Computed inside the next
// micro-batch's add instead, it would read both terms there, and every
// micro-batch's gradient would stay alive across the passes in between
// (the arena held one more gradient set per micro-batch: here 20 KiB
// alive at most, where the stored sum needs 16).
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: dpc.live_bytes = 16384
// CHECK: %0 = dpc.matmul %arg0, %arg1 {dpc.buffer = [0]}
// CHECK: %4 = dpc.matmul %3, %2 {dpc.buffer = [{{[0-9]+}}]}
// CHECK: dpc.add %0, %4 {dpc.buffer = [{{[0-9]+}}]}
func.func @accumulate(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>,
                      %z: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %g1 = dpc.matmul %x, %y : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %a1 = dpc.matmul %y, %z : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b1 = dpc.matmul %a1, %a1 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %c1 = dpc.matmul %b1, %a1 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %g2 = dpc.matmul %c1, %b1 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %s2 = dpc.add %g1, %g2 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %a2 = dpc.matmul %z, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b2 = dpc.matmul %a2, %a2 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %c2 = dpc.matmul %b2, %a2 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %g3 = dpc.matmul %c2, %b2 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %s3 = dpc.add %s2, %g3 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = dpc.relu %s3 : tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// -----

// An elementwise chain with nothing made between its ops stays fused,
// even where its operands outweigh its result.
// CHECK-LABEL: func.func @adjacent
// CHECK: dpc.add {{.*}}dpc.buffer = ["fused"]
// CHECK-NEXT: dpc.mul {{.*}}dpc.buffer = [0]
func.func @adjacent(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = dpc.exp %x : tensor<32x32xf32>
  %b = dpc.exp %y : tensor<32x32xf32>
  %s = dpc.add %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = dpc.mul %s, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = dpc.matmul %m, %y : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// -----

// Where the fused op's operands are read later anyway, fusing it holds
// nothing more: it stays fused across the work in between.
// CHECK-LABEL: func.func @operands_read_later
// CHECK: dpc.add {{.*}}dpc.buffer = ["fused"]
func.func @operands_read_later(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = dpc.matmul %x, %y : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %s = dpc.add %a, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = dpc.matmul %y, %y : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = dpc.matmul %b, %a : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = dpc.mul %s, %c : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %m : tensor<32x32xf32>
}
