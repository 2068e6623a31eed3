// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// A recurrent layer is one kernel call: its sizes, its operands in order,
// its sequence lengths (a typed null when it has none), its flags, then
// its results. The gradient op calls its own kernel.
// CHECK-LABEL: int32_t dpc_program_0_part0(
func.func @train_step(%x: tensor<5x2x3xf32>, %w: tensor<12x3xf32>, %r: tensor<12x4xf32>, %b: tensor<24xf32>, %h: tensor<2x4xf32>, %n: tensor<2xi32>) -> (tensor<5x2x4xf32>, tensor<12x4xf32>) {
  // CHECK: dpc::cpu::gru(dpc::cpu::RecurrentSizes{5, 2, 3, 4}, v0, v1, v2, v3, v4, static_cast<const int64_t *>(nullptr), false, true, [[Y:v[0-9]+]], [[H:v[0-9]+]])
  %y, %hT = dpc.gru %x, %w, %r, %b, %h {linear_before_reset} : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>)
  // CHECK: dpc::cpu::gruGrad(dpc::cpu::RecurrentSizes{5, 2, 3, 4}, v0, v1, v2, v3, v4, [[Y]], [[H]], v5, true, false,
  %g:5 = dpc.gru_grad %x, %w, %r, %b, %h, %y, %hT lengths %n {reverse} : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2xi32>) -> (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>)
  return %y, %g#2 : tensor<5x2x4xf32>, tensor<12x4xf32>
}
