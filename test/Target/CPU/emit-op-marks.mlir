// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s
// RUN: dpc-opt %s --emit=cuda-source | FileCheck %s --check-prefix=CUDA

// Under host->profile a CPU program marks its start and the end of every
// op that emits code (the matmul, the loop the add and relu are one of,
// the copy the return makes), after its NaN check, numbered as the manifest's "ops" lists
// them; the reshape is a view and emits nothing to time. CUDA programs,
// whose kernels finish after their launch, mark nothing.
// CHECK: int32_t dpc_program_0_part0(
// CHECK: dpc::cpu::matmul(
// CHECK-NEXT: if (host->checkFinite
// CHECK-NEXT: return fail(
// CHECK-NEXT: if (host->profile)
// CHECK-NEXT: host->mark(host->self, 0);
// CHECK: dpc_program_0_loop0(
// CHECK-NEXT: }
// CHECK-NEXT: if (host->checkFinite
// CHECK-NEXT: return fail(
// CHECK-NEXT: if (host->profile)
// CHECK-NEXT: host->mark(host->self, 1);
// CHECK-NEXT: float *[[VIEW:v[0-9]+]] = v{{[0-9]+}};
// CHECK-NEXT: std::memcpy(results[1], [[VIEW]], 256);
// CHECK-NEXT: if (host->profile)
// CHECK-NEXT: host->mark(host->self, 2);
// CHECK-NEXT: return 0;
// The program marks its start before calling its parts.
// CHECK: extern "C" int32_t dpc_program_0(
// CHECK: if (host->profile)
// CHECK-NEXT: host->mark(host->self, -1);
// CHECK: if (int32_t status = dpc_program_0_part0(host, args, results, arena, dpc_tickets))
// CHECK-NEXT: return status;

// CUDA-NOT: host->mark
// CUDA-NOT: host->profile
func.func @train_step(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>,
                      %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<64xf32>) {
  %m = dpc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = dpc.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = dpc.relu %a : tensor<4x16xf32>
  %f = dpc.reshape %r : tensor<4x16xf32> -> tensor<64xf32>
  return %r, %f : tensor<4x16xf32>, tensor<64xf32>
}
