// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// Buffers are reused once dead: the transpose's result is dead after the
// first matmul reads it, so the third value takes its place; a value and
// the operands of the op making it never share storage, and a reshape
// only re-labels its operand's buffer.
// CHECK-LABEL: extern "C" int32_t dpc_program_0(
func.func @train_step(%x: tensor<16x16xf32>) -> tensor<256xf32> {
  // CHECK: float *[[T:v[0-9]+]] = reinterpret_cast<float *>(arena + 0);
  %t = dpc.transpose %x [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: float *[[A:v[0-9]+]] = reinterpret_cast<float *>(arena + 1024);
  %a = dpc.matmul %t, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: float *[[B:v[0-9]+]] = reinterpret_cast<float *>(arena + 0);
  // CHECK-NEXT: dpc::cpu::matmul([[A]], {16, 16}, v0, {16, 16}, [[B]], {16, 16});
  %b = dpc.matmul %a, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: float *[[F:v[0-9]+]] = [[B]];
  %f = dpc.reshape %b : tensor<16x16xf32> -> tensor<256xf32>
  return %f : tensor<256xf32>
}
// CHECK: // dpc_program_0: arena 2048 bytes (3072 without reuse)
