// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s
// RUN: dpc-opt %s --emit=cuda-source | FileCheck %s --check-prefix=CUDA

// Single-precision exp, erf, tanh and sigmoid are SimdMath.h's, which
// vectorize; double precision keeps libm's, and CUDA its own.
// CHECK-LABEL: void dpc_program_0_loop0(float *__restrict out, const float *__restrict in0) {
// CHECK: const float t0 = dpc::simd::erf(x0);
// CHECK-NEXT: const float t1 = dpc::simd::exp(t0);
// CHECK-NEXT: const float t2 = dpc::simd::tanh(t1);
// CHECK-NEXT: const float t3 = dpc::simd::sigmoid(t2);
// CHECK-LABEL: void dpc_program_0_loop1(double *__restrict out, const double *__restrict in0) {
// CHECK: const double t0 = std::erf(x0);
// CHECK-NEXT: const double t1 = std::exp(t0);
// CHECK-NEXT: const double t2 = std::tanh(t1);
// CHECK-NEXT: const double t3 = double(1) / (double(1) + std::exp(-(t2)));
// CUDA: const float t0 = std::erf(x0);
// CUDA-NEXT: const float t1 = std::exp(t0);
// CUDA-NEXT: const float t2 = std::tanh(t1);
// CUDA-NEXT: const float t3 = float(1) / (float(1) + std::exp(-(t2)));
func.func @train_step(%x: tensor<64xf32>, %y: tensor<64xf64>)
    -> (tensor<64xf32>, tensor<64xf64>) {
  %e = dpc.erf %x : tensor<64xf32>
  %p = dpc.exp %e : tensor<64xf32>
  %t = dpc.tanh %p : tensor<64xf32>
  %s = dpc.sigmoid %t : tensor<64xf32>
  %e2 = dpc.erf %y : tensor<64xf64>
  %p2 = dpc.exp %e2 : tensor<64xf64>
  %t2 = dpc.tanh %p2 : tensor<64xf64>
  %s2 = dpc.sigmoid %t2 : tensor<64xf64>
  return %s, %s2 : tensor<64xf32>, tensor<64xf64>
}
