// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// Buffers are reused once dead: the exp's result is dead after the first
// matmul reads it, so the third value takes its place; a value and the
// operands of the op making it never share storage; a reshape and a slice
// of whole rows only re-label their operand's buffer; a transpose that only
// GEMMs read is folded into them.
// CHECK-LABEL: int32_t dpc_program_0_part0(
func.func @train_step(%x: tensor<16x16xf32>) -> tensor<128xf32> {
  // CHECK: float *[[E:v[0-9]+]] = reinterpret_cast<float *>(arena + 0);
  %e = dpc.exp %x : tensor<16x16xf32>
  // CHECK-NOT: dpc::cpu::transpose
  %t = dpc.transpose %e [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  // CHECK: float *[[A:v[0-9]+]] = reinterpret_cast<float *>(arena + 1024);
  // CHECK-NEXT: dpc::cpu::matmul([[E]], {16, 16}, true, v0, {16, 16}, false, [[A]], {16, 16});
  %a = dpc.matmul %t, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: float *[[B:v[0-9]+]] = reinterpret_cast<float *>(arena + 0);
  // CHECK-NEXT: dpc::cpu::matmul([[A]], {16, 16}, false, v0, {16, 16}, false, [[B]], {16, 16});
  %b = dpc.matmul %a, %x : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: float *[[F:v[0-9]+]] = [[B]];
  %f = dpc.reshape %b : tensor<16x16xf32> -> tensor<256xf32>
  // CHECK: float *[[S:v[0-9]+]] = [[F]] + 64;
  %s = dpc.slice %f {start = array<i64: 64>, limit = array<i64: 192>, stride = array<i64: 1>} : tensor<256xf32> -> tensor<128xf32>
  // CHECK: std::memcpy(results[0], [[S]], 512);
  return %s : tensor<128xf32>
}
// CHECK: // dpc_program_0: arena 2048 bytes (2048 alive at most, 3072 without reuse)
