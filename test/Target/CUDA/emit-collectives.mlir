// RUN: dpc-opt %s --emit=cuda-source | FileCheck %s

// Collectives are started on the group's NCCL stream and waited for by
// the compute stream (dpc::cuda::startCollective / waitCollective), never
// by the host inside a step; a group's block is cut at the rank's
// position, which the device context holds.
dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: int32_t dpc_program_0_part0(
func.func @train_step(%g: tensor<4x4xf32>, %x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK: const DpcCollectiveCall ticket0_call = {0, 0, 0, 0, v0, [[R:v[0-9]+]], ticket0_shape, 2, 0, 0, 0, "dpc.all_reduce at
  // CHECK-NEXT: dpc_tickets[0] = dpc::cuda::startCollective(ctx, &ticket0_call);
  // CHECK-NOT: waitCollective
  %r = dpc.all_reduce %g over @plan ["dp"] <sum> {async} : tensor<4x4xf32>
  // CHECK: dpc::cuda::slice(ctx, v1, {4, 8}, {0, int64_t(dpc::cuda::groupPosition(ctx, 1)) * 4}, {1, 1}
  %s = dpc.all_slice %x over @plan ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: if (dpc::cuda::waitCollective(ctx, dpc_tickets[0]) != 0)
  %w = dpc.wait %r : tensor<4x4xf32>
  return %w, %s : tensor<4x4xf32>, tensor<4x4xf32>
}
