// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// Collectives go through the host: an asynchronous one is started and
// waited for where its value is read (its operand's buffer stays live
// until then), its ticket in the program's array (a later part may wait
// for it); a group's block of a value is cut locally at the rank's
// position in its group.
dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: int32_t dpc_program_0_part0(
func.func @train_step(%g: tensor<4x4xf32>, %x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK: const DpcCollectiveCall ticket0_call = {0, 0, 0, 0, v0, [[R:v[0-9]+]], ticket0_shape, 2, 0, 0, 0, "dpc.all_reduce at
  // CHECK-NEXT: dpc_tickets[0] = host->start(host->self, &ticket0_call);
  // CHECK-NOT: host->wait
  %r = dpc.all_reduce %g over @plan ["dp"] <sum> {async} : tensor<4x4xf32>
  // CHECK: dpc::cpu::slice(v1, {4, 8}, {0, int64_t(host->groupPosition(host->self, 1)) * 4}, {1, 1}
  %s = dpc.all_slice %x over @plan ["tp"] dim 1 : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: if (host->wait(host->self, dpc_tickets[0]) != 0)
  %w = dpc.wait %r : tensor<4x4xf32>
  return %w, %s : tensor<4x4xf32>, tensor<4x4xf32>
}
