// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// A linear layer's backward pass as autodiff builds it: the weight
// gradient is a transposed product, transpose(x^T . dy), and the input
// gradient reads the forward's transposed weight transposed back. Both
// become single GEMMs reading their operands transposed where needed: no
// transposed copy is made, and the arena holds nothing.
// CHECK-LABEL: int32_t dpc_program_0_part0(
// CHECK-NOT: dpc::cpu::transpose
// CHECK: float *[[DW:v[0-9]+]] = static_cast<float *>(results[0]);
// CHECK-NEXT: dpc::cpu::matmul(v1, {8, 6}, true, v0, {8, 4}, false, [[DW]], {6, 4});
// CHECK: float *[[Y:v[0-9]+]] = static_cast<float *>(results[2]);
// CHECK-NEXT: dpc::cpu::matmul(v0, {8, 4}, false, v2, {6, 4}, true, [[Y]], {8, 6});
// CHECK: float *[[DX:v[0-9]+]] = static_cast<float *>(results[1]);
// CHECK-NEXT: dpc::cpu::matmul(v1, {8, 6}, false, v2, {6, 4}, false, [[DX]], {8, 4});
// CHECK-NOT: dpc::cpu::transpose
// CHECK: // dpc_program_0: arena 0 bytes
func.func @train_step(%x: tensor<8x4xf32> {dpc.input = "x"}, %dy: tensor<8x6xf32> {dpc.input = "dy"}, %w: tensor<6x4xf32> {dpc.param = "w"}) -> (tensor<6x4xf32> {dpc.output = "dw"}, tensor<8x4xf32> {dpc.output = "dx"}, tensor<8x6xf32> {dpc.output = "y"}) {
  %xt = dpc.transpose %x [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %g = dpc.matmul %xt, %dy : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %dw = dpc.transpose %g [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %wt = dpc.transpose %w [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %y = dpc.matmul %x, %wt : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %wtt = dpc.transpose %wt [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %dx = dpc.matmul %dy, %wtt : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  return %dw, %dx, %y : tensor<6x4xf32>, tensor<8x4xf32>, tensor<8x6xf32>
}
