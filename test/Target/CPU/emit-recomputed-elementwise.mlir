// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// Pieces of a GeLU derivative read by two loops are recomputed in each
// (test-buffer-plan-recompute.mlir); a loop whose ops read a piece twice
// (`x / sqrt 2`, through the erf and its own square) computes it once.
// CHECK-LABEL: void dpc_program_0_loop0(
// CHECK: dpc::simd::erf(
// CHECK-NOT: dpc::simd::erf(
// CHECK: out[i] =
// CHECK-LABEL: void dpc_program_0_loop1(
// CHECK: const float [[S:t[0-9]+]] = (x1) / (float(1.41
// CHECK-NEXT: dpc::simd::erf([[S]])
// CHECK-NOT: / (float(1.41
// CHECK-NOT: dpc::simd::erf(
// CHECK: = ([[S]]) * ([[S]]);
// CHECK-NOT: / (float(1.41
// CHECK: out[i] =
func.func @train_step(%x: tensor<64x64xf32>, %dy: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %root2 = dpc.constant dense<1.41421354> : tensor<f32>
  %one = dpc.constant dense<1.000000e+00> : tensor<f32>
  %s = dpc.div %x, %root2 : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %e = dpc.erf %s : tensor<64x64xf32>
  %p = dpc.add %e, %one : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %g = dpc.mul %x, %p : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %w = dpc.matmul %g, %dy : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = dpc.mul %dy, %p : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %q = dpc.mul %s, %s : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %n = dpc.neg %q : tensor<64x64xf32>
  %k = dpc.exp %n : tensor<64x64xf32>
  %d = dpc.add %a, %k : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %w, %d : tensor<64x64xf32>, tensor<64x64xf32>
}
