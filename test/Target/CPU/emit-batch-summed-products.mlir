// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// A linear layer over [batch, sequence, features]: autodiff makes its
// weight gradient as a product per sample summed over the batch,
// transpose(reduce_sum(x^T . dy, [0])). It becomes one GEMM over the
// batch's 16 rows, reading x and dy where they lie and writing the
// gradient: no per-sample products (2 x 4 x 6 floats), no reduction, no
// transposed copy, and the arena holds nothing.
// CHECK-LABEL: int32_t dpc_program_0_part0(
// CHECK-NOT: dpc::cpu::transpose
// CHECK-NOT: dpc::cpu::reduce
// CHECK: float *[[DW:v[0-9]+]] = static_cast<float *>(results[0]);
// CHECK-NEXT: dpc::cpu::matmul({{v[0-9]+}}, {16, 6}, true, {{v[0-9]+}}, {16, 4}, false, [[DW]], {6, 4});
// CHECK-NOT: dpc::cpu::reduce
// CHECK: // dpc_program_0: arena 0 bytes
func.func @train_step(%x: tensor<2x8x4xf32> {dpc.input = "x"}, %dy: tensor<2x8x6xf32> {dpc.input = "dy"}) -> (tensor<6x4xf32> {dpc.output = "dw"}) {
  %xt = dpc.transpose %x [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %g = dpc.matmul %xt, %dy : (tensor<2x4x8xf32>, tensor<2x8x6xf32>) -> tensor<2x4x6xf32>
  %s = dpc.reduce_sum %g [0] : tensor<2x4x6xf32> -> tensor<4x6xf32>
  %dw = dpc.transpose %s [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  return %dw : tensor<6x4xf32>
}
