// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// The gradients that only a bucket reads are made inside it: the matmul
// and the sum write at the bucket's offsets, the concatenation copies only
// the gradient that is also a result, and the all-reduce reduces the bucket
// where it lies (its input and output are the same buffer).
// CHECK-LABEL: int32_t dpc_program_0_part0(
// CHECK: float *[[G0:v[0-9]+]] = reinterpret_cast<float *>(arena + 1024);
// CHECK-NEXT: dpc::cpu::matmul({{.*}}, [[G0]], {16, 16});
// CHECK: float *[[G1:v[0-9]+]] = reinterpret_cast<float *>(arena + 2048);
// CHECK-NEXT: dpc::cpu::reduce({{.*}}, [[G1]]);
// CHECK: float *[[G2:v[0-9]+]] = static_cast<float *>(results[1]);
// CHECK: float *[[F2:v[0-9]+]] = [[G2]];
// CHECK-NEXT: float *[[B:v[0-9]+]] = reinterpret_cast<float *>(arena + 1024);
// CHECK-NEXT: std::memcpy([[B]] + 272, [[F2]], 1024);
// CHECK: float *[[R:v[0-9]+]] = [[B]];
// CHECK: const DpcCollectiveCall ticket0_call = {0, 0, 0, 0, [[B]], [[R]],
// CHECK: // dpc_program_0: arena 3136 bytes
dpc.mesh @plan ["dp"=2]
func.func @train_step(%x: tensor<16x16xf32> {dpc.input = "x"}) -> (tensor<528xf32> {dpc.output = "b"}, tensor<16x16xf32> {dpc.output = "g2"}) {
  %e = dpc.exp %x : tensor<16x16xf32>
  %g0 = dpc.matmul %e, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %g1 = dpc.reduce_sum %e [0] : tensor<16x16xf32> -> tensor<16xf32>
  %g2 = dpc.matmul %x, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %f0 = dpc.reshape %g0 : tensor<16x16xf32> -> tensor<256xf32>
  %f2 = dpc.reshape %g2 : tensor<16x16xf32> -> tensor<256xf32>
  %b = dpc.concat %f0, %g1, %f2 {axis = 0 : i64} : (tensor<256xf32>, tensor<16xf32>, tensor<256xf32>) -> tensor<528xf32>
  %r = dpc.all_reduce %b over @plan ["dp"] <sum> {async} : tensor<528xf32>
  %w = dpc.wait %r : tensor<528xf32>
  %n = dpc.exp %w : tensor<528xf32>
  return %n, %g2 : tensor<528xf32>, tensor<16x16xf32>
}
