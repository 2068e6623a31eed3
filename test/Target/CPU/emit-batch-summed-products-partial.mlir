// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// A batched product summed over one of its two batch dimensions is not
// one product over merged rows: it stays batched, then reduced.
// CHECK-LABEL: int32_t dpc_program_0_part0(
// CHECK: dpc::cpu::matmul(
// CHECK: dpc::cpu::reduce
func.func @train_step(%x: tensor<2x3x8x4xf32> {dpc.input = "x"}, %dy: tensor<2x3x8x6xf32> {dpc.input = "dy"}) -> (tensor<3x4x6xf32> {dpc.output = "dw"}) {
  %xt = dpc.transpose %x [0, 1, 3, 2] : tensor<2x3x8x4xf32> -> tensor<2x3x4x8xf32>
  %g = dpc.matmul %xt, %dy : (tensor<2x3x4x8xf32>, tensor<2x3x8x6xf32>) -> tensor<2x3x4x6xf32>
  %s = dpc.reduce_sum %g [0] : tensor<2x3x4x6xf32> -> tensor<3x4x6xf32>
  return %s : tensor<3x4x6xf32>
}
