// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// An elementwise chain is one loop, a function of its own that is never
// inlined (GCC stops vectorizing the loops of a function of hundreds):
// the add whose only user is the relu is computed inside the relu's loop,
// its scalar constant a literal, the bias read under broadcasting through
// nested loops, every pointer restrict (outputs never share storage with
// inputs). The matmul calls the kernel library; the relu's loop writes
// straight into the caller's result buffer.
// CHECK-LABEL: extern "C" int32_t dpc_program_abi_version()
// CHECK: namespace {
// CHECK-NEXT: // "dpc.relu at loc({{.*}}emit-elementwise.mlir\":{{[0-9]+}}:8)"
// CHECK-NEXT: __attribute__((noinline)) void dpc_program_0_loop0(float *__restrict out, const float *__restrict in0, const float *__restrict in1) {
// CHECK-NEXT: for (int64_t i0 = 0; i0 < 4; ++i0)
// CHECK-NEXT: for (int64_t i1 = 0; i1 < 16; ++i1)
// CHECK: const float x0 = in0[i];
// CHECK-NEXT: const float x1 = in1[i1 * 1];
// CHECK-NEXT: const float t0 = (x0) * (float(2.00000000000000000e+00));
// CHECK-NEXT: const float t1 = (t0) + (x1);
// CHECK-NEXT: const float t2 = (std::isnan(t1) || (t1) > float(0) ? (t1) : float(0));
// CHECK-NEXT: out[i] = t2;
// CHECK: } // namespace
// CHECK-EMPTY:
// CHECK-NEXT: namespace {
// CHECK-NEXT: __attribute__((noinline)) int32_t dpc_program_0_part0(
// CHECK: float *[[M:v[0-9]+]] = reinterpret_cast<float *>(arena + 0);
// CHECK-NEXT: dpc::cpu::matmul(v0, {4, 8}, false, v1, {8, 16}, false, [[M]], {4, 16});
// CHECK: float *[[R:v[0-9]+]] = static_cast<float *>(results[0]);
// CHECK-NEXT: {
// CHECK-NEXT: dpc_program_0_loop0([[R]], [[M]], v2);
// CHECK-NEXT: }
// CHECK-NOT: std::memcpy
// CHECK: // dpc_program_0: arena 256 bytes (256 alive at most, 256 without reuse), 1 loops, 2 ops fused
func.func @train_step(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>,
                      %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = dpc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %c = dpc.constant dense<2.0> : tensor<f32>
  %s = dpc.mul %m, %c : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %a = dpc.add %s, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = dpc.relu %a : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

