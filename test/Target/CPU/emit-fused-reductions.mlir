// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s
// RUN: dpc-opt %s --emit=cuda-source | FileCheck %s --check-prefix=CUDA

// A reduction computes the elementwise chain it reads as it reads each
// element: a gradient's squares, summed for its norm, are never stored
// (the arena holds only the exp below, 128 bytes).
// The chain that broadcasts its operand (below) is a loop of its own.
// CHECK: void dpc_program_0_loop0(
// CHECK: const float x1 = in1[i1 * 1];
// CHECK-LABEL: int32_t dpc_program_0_part0(
func.func @train_step(%g: tensor<4x8xf32>, %b: tensor<8xf32>,
                      %n: tensor<4x8xi64>, %d: tensor<4x8xi64>)
    -> (tensor<f32>, tensor<4xf32>, tensor<8xf32>, tensor<4x8xf32>,
        tensor<4xi64>) {
  // CHECK: float *[[NORM:v[0-9]+]] = static_cast<float *>(results[0]);
  // CHECK-NEXT: {
  // CHECK-NEXT: const float *in0 = v0;
  // CHECK-NEXT: dpc::cpu::reduceElements<dpc::cpu::ReduceKind::Sum>({4, 8}, {0, 1}, [[NORM]], [&](int64_t i) {
  // CHECK-NEXT: const float x0 = in0[i];
  // CHECK-NEXT: const float t0 = (x0) * (x0);
  // CHECK-NEXT: return t0;
  // CHECK-NEXT: });
  // CHECK-NEXT: }
  // CUDA: dpc::cuda::reduceElements<dpc::cuda::ReduceKind::Sum>(ctx, {4, 8}, {0, 1}, {{v[0-9]+}}, [=] DPC_HOST_DEVICE(int64_t i) {
  // CUDA-NEXT: const float x0 = in0[i];
  // CUDA-NEXT: const float t0 = (x0) * (x0);
  // CUDA-NEXT: return t0;
  %sq = dpc.mul %g, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %norm = dpc.reduce_sum %sq [0, 1] : tensor<4x8xf32> -> tensor<f32>

  // A chain of two ops, a scalar constant a literal, into a mean.
  // CHECK: dpc::cpu::reduceElements<dpc::cpu::ReduceKind::Mean>({4, 8}, {1}, {{v[0-9]+}}, [&](int64_t i) {
  // CHECK-NEXT: const float x0 = in0[i];
  // CHECK-NEXT: const float t0 = (x0) * (float(5.00000000000000000e-01));
  // CHECK-NEXT: const float t1 = dpc::simd::exp(t0);
  // CHECK-NEXT: return t1;
  %half = dpc.constant dense<0.5> : tensor<f32>
  %h = dpc.mul %g, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %eh = dpc.exp %h : tensor<4x8xf32>
  %rowmean = dpc.reduce_mean %eh [1] : tensor<4x8xf32> -> tensor<4xf32>

  // A chain that broadcasts an operand is stored first: reading it at a
  // flat index would need the index of each dimension at every element.
  // An op with another reader is stored as well.
  // CHECK: float *[[E:v[0-9]+]] = reinterpret_cast<float *>(arena + 0);
  // CHECK-NEXT: {
  // CHECK-NEXT: dpc_program_0_loop0([[E]],
  // CHECK: dpc::cpu::reduce([[E]], {4, 8}, {0}, dpc::cpu::ReduceKind::Sum,
  %s = dpc.add %g, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %e = dpc.exp %s : tensor<4x8xf32>
  %col = dpc.reduce_sum %e [0] : tensor<4x8xf32> -> tensor<8xf32>
  %twice = dpc.add %e, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>

  // An integer division checks its divisor inside the reduction's walk and
  // fails after it, naming the reduction.
  // CHECK: bool dpc_divisor_zero = false;
  // CHECK-NEXT: dpc::cpu::reduceElements<dpc::cpu::ReduceKind::Sum>({4, 8}, {1}, {{v[0-9]+}}, [&](int64_t i) {
  // CHECK: dpc_divisor_zero = true
  // CHECK: return t0;
  // CHECK-NEXT: });
  // CHECK-NEXT: if (dpc_divisor_zero)
  // CHECK-NEXT: return fail(host, "dpc.reduce_sum at {{.*}}", "integer division by zero");
  // CUDA: dpc::cuda::reduceElements<dpc::cuda::ReduceKind::Sum>(ctx, {4, 8}, {1}, {{v[0-9]+}}, [=] DPC_HOST_DEVICE(int64_t i) {
  // CUDA-NEXT: bool dpc_divisor_zero = false;
  // CUDA: if (dpc_divisor_zero)
  // CUDA-NEXT: dpc::cuda::raise(faults, {{[0-9]+}}, dpc::cuda::Fault::DivisionByZero);
  // CUDA-NEXT: return t0;
  %q = dpc.div %n, %d : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi64>
  %qs = dpc.reduce_sum %q [1] : tensor<4x8xi64> -> tensor<4xi64>
  return %norm, %rowmean, %col, %twice, %qs
      : tensor<f32>, tensor<4xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xi64>
}
// CHECK: // dpc_program_0: arena 128 bytes (128 alive at most, 128 without reuse), 2 loops, 5 ops fused
