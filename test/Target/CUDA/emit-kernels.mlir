// RUN: dpc-opt %s --emit=cuda-source | FileCheck %s

// The CUDA target shares the CPU target's walk, buffer plan and fusion: a
// chain of elementwise ops is one kernel (a lambda run for each element),
// reading its operands under broadcasting from the flat index; other ops
// call the header-only kernels with the device context first and, where
// they can fault, the op's number in the table of op descriptions; non-
// scalar constants are device data at file scope; the step ends by
// waiting for the device and reporting the first fault.
// CHECK: #include "dpc/Runtime/Cuda/Kernels.h"
// CHECK: DPC_DEVICE_DATA const int64_t dpc_program_0_[[C:v[0-9]+]]_data[2] = {int64_t(1LL), int64_t(0LL)};
// CHECK: int32_t dpc_program_0_part0({{.*}}, dpc::cuda::Context *ctx) {
// CHECK: dpc::cuda::FaultRecord *faults = ctx->faults;
func.func @train_step(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: dpc::cuda::forEach(ctx, 16, DPC_KERNEL(int64_t i) {
  // CHECK: {{\[\[maybe_unused\]\]}} const int64_t i1 = rest % 8;
  // CHECK: const float x0 = in0[i];
  // CHECK: const float x1 = in1[i1 * 1];
  // CHECK: const float t0 = std::exp(x0);
  // CHECK: const float t1 = (t0) + (x1);
  // CHECK: out[i] = t1;
  %e = dpc.exp %x : tensor<2x8xf32>
  %s = dpc.add %e, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // Under --check-finite a kernel checks the result on the device.
  // CHECK: if (host->checkFinite)
  // CHECK-NEXT: dpc::cuda::checkFinite(ctx, 0, 0, {{v[0-9]+}}, 16);
  // CHECK: dpc::cuda::softmax(ctx, {{v[0-9]+}}, {2, 8}, 1, false, {{v[0-9]+}});
  %p = dpc.softmax %s {axis = 1 : i64} : tensor<2x8xf32>
  // CHECK: int64_t *[[I:v[0-9]+]] = dpc::cuda::getDataAddress(dpc_program_0_[[C]]_data);
  %i = dpc.constant dense<[1, 0]> : tensor<2xi64>
  // CHECK: dpc::cuda::gather(ctx, 2, {{v[0-9]+}}, {2, 8}, [[I]], {2}, 0, {{v[0-9]+}});
  %g = dpc.gather %p[%i] {axis = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  // CHECK: const char *const dpc_program_0_ops[] = {
  // CHECK-NEXT: "dpc.add at
  // CHECK-NEXT: "dpc.softmax at
  // CHECK-NEXT: "dpc.gather at
  // CHECK: extern "C" int32_t dpc_program_0(
  // CHECK: dpc::cuda::Context *ctx = dpc::cuda::getContext(host);
  // CHECK: if (int32_t status = dpc_program_0_part0(host, args, results, arena, dpc_tickets, ctx))
  // CHECK: return dpc::cuda::finish(ctx, dpc_program_0_ops);
  return %g, %p : tensor<2x8xf32>, tensor<2x8xf32>
}

