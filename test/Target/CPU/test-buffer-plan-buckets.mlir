// RUN: dpc-opt %s -test-dpc-buffer-plan -split-input-file | FileCheck %s

// A gradient bucket: the gradients that only the bucket's concatenation
// reads (through their flattening reshapes) are made inside its storage,
// so the concatenation copies nothing; the all-reduce, whose operand is
// dead once it starts, reduces the bucket where it lies.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func @bucket
// CHECK-SAME: dpc.arena_bytes = 4160 : i64, dpc.live_bytes = 4160 : i64
func.func @bucket(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>, tensor<16x16xf32>) {
  // CHECK: dpc.exp {{.*}}dpc.buffer = [0]
  %e = dpc.exp %x : tensor<16x16xf32>
  // CHECK: dpc.matmul {{.*}}dpc.buffer = ["at 1024"]
  %g0 = dpc.matmul %e, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: dpc.reduce_sum {{.*}}dpc.buffer = ["at 2048"]
  %g1 = dpc.reduce_sum %e [0] : tensor<16x16xf32> -> tensor<16xf32>
  // A gradient read by anything else keeps a buffer of its own.
  // CHECK: dpc.matmul {{.*}}dpc.buffer = [0]
  %g2 = dpc.matmul %x, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %f0 = dpc.reshape %g0 : tensor<16x16xf32> -> tensor<256xf32>
  %f2 = dpc.reshape %g2 : tensor<16x16xf32> -> tensor<256xf32>
  // CHECK: dpc.concat {{.*}}dpc.buffer = [1024]
  %b = dpc.concat %f0, %g1, %f2 {axis = 0 : i64} : (tensor<256xf32>, tensor<16xf32>, tensor<256xf32>) -> tensor<528xf32>
  // CHECK: dpc.all_reduce {{.*}}dpc.buffer = ["view"]
  %r = dpc.all_reduce %b over @plan ["dp"] <sum> {async} : tensor<528xf32>
  %w = dpc.wait %r : tensor<528xf32>
  %s0 = dpc.slice %w {start = array<i64: 0>, limit = array<i64: 256>, stride = array<i64: 1>} : tensor<528xf32> -> tensor<256xf32>
  %s1 = dpc.slice %w {start = array<i64: 256>, limit = array<i64: 272>, stride = array<i64: 1>} : tensor<528xf32> -> tensor<16xf32>
  %o0 = dpc.reshape %s0 : tensor<256xf32> -> tensor<16x16xf32>
  // CHECK: dpc.exp {{.*}}dpc.buffer = [3136]
  %n = dpc.exp %g2 : tensor<16x16xf32>
  return %o0, %s1, %n : tensor<16x16xf32>, tensor<16xf32>, tensor<16x16xf32>
}

// -----

// An operand read after the all-reduce starts keeps its values: the
// reduction gets a buffer of its own.
dpc.mesh @plan ["dp"=2]
// CHECK-LABEL: func.func @read_while_reduced
func.func @read_while_reduced(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  // CHECK: dpc.exp {{.*}}dpc.buffer = [0]
  %e = dpc.exp %x : tensor<16x16xf32>
  // CHECK: dpc.all_reduce {{.*}}dpc.buffer = [1024]
  %r = dpc.all_reduce %e over @plan ["dp"] <sum> {async} : tensor<16x16xf32>
  %l = dpc.log %e : tensor<16x16xf32>
  %w = dpc.wait %r : tensor<16x16xf32>
  return %w, %l : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Making the bucket's operands in it would keep all of it alive from the
// first, through the large temporary made between them: they keep their
// own buffers.
// CHECK-LABEL: func.func @bucket_over_a_peak
// CHECK-SAME: dpc.live_bytes = 32832 : i64
func.func @bucket_over_a_peak(%x: tensor<16x16xf32>, %y: tensor<64x64xf32>) -> (tensor<272xf32>, tensor<64xf32>) {
  // CHECK: dpc.reduce_sum {{.*}}dpc.buffer = [0]
  %g0 = dpc.reduce_sum %x [0] : tensor<16x16xf32> -> tensor<16xf32>
  %t = dpc.exp %y : tensor<64x64xf32>
  %u = dpc.matmul %t, %t : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %v = dpc.reduce_sum %u [0] : tensor<64x64xf32> -> tensor<64xf32>
  // CHECK: dpc.matmul %arg0, %arg0 {dpc.buffer = [{{[0-9]+}}]}
  %g1 = dpc.matmul %x, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %f1 = dpc.reshape %g1 : tensor<16x16xf32> -> tensor<256xf32>
  %b = dpc.concat %g0, %f1 {axis = 0 : i64} : (tensor<16xf32>, tensor<256xf32>) -> tensor<272xf32>
  return %b, %v : tensor<272xf32>, tensor<64xf32>
}
