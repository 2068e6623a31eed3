// RUN: dpc-opt %s -dpc-export-shard -split-input-file -verify-diagnostics | FileCheck %s
// Upstream MLIR's own mlir-opt reads the exported plan (the dpc ops as
// unregistered, in generic form).
// RUN: dpc-opt %s -dpc-export-shard -split-input-file -verify-diagnostics --mlir-print-op-generic -o %t.mlir
// RUN: mlir-opt %t.mlir --allow-unregistered-dialect -split-input-file | FileCheck %s --check-prefix=UPSTREAM

// CHECK: shard.grid @plan(shape = 1x2x2)
// CHECK-NOT: dpc.mesh
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>)
// CHECK-NOT: dpc.sharding
func.func @step(%x: tensor<8x16xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, tp]>},
                %w: tensor<16x4xf32> {dpc.sharding = #dpc.sharding<@plan, [tp, *]>})
    -> (tensor<8x4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}) {
  // Arguments are annotated at the entry, by mesh axis position.
  // CHECK-DAG: %[[SW:.*]] = shard.sharding @plan split_axes = {{\[\[}}2], []] : !shard.sharding
  // CHECK-DAG: %[[AW:.*]] = shard.shard %[[W]] to %[[SW]] : tensor<16x4xf32>
  // CHECK-DAG: %[[SX:.*]] = shard.sharding @plan split_axes = {{\[\[}}1], [2]] : !shard.sharding
  // CHECK-DAG: %[[AX:.*]] = shard.shard %[[X]] to %[[SX]] : tensor<8x16xf32>
  // A partial result keeps its pending reduction beside the upstream
  // sharding, which cannot say it.
  // CHECK: %[[MM:.*]] = dpc.matmul %[[AX]], %[[AW]] {dpc.stage = 0 : i64}
  // CHECK: %[[SM:.*]] = shard.sharding @plan split_axes = {{\[\[}}1], []]
  // CHECK: %[[AM:.*]] = shard.shard %[[MM]] to %[[SM]] {dpc.partial = "tp : sum"}
  %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>], dpc.stage = 0 : i64}
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  // A reshard annotates the value for its users.
  // CHECK: %[[SR:.*]] = shard.sharding @plan split_axes = {{\[\[}}1], []]
  // CHECK: %[[R:.*]] = shard.shard %[[AM]] to %[[SR]] annotate_for_users : tensor<8x4xf32>
  // CHECK-NOT: dpc.reshard
  %1 = dpc.reshard %0 <@plan, [dp, *]> : tensor<8x4xf32>
  // CHECK: dpc.relu %[[R]]
  %2 = dpc.relu %1 {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// UPSTREAM: shard.grid @plan(shape = 1x2x2)
// UPSTREAM: shard.shard {{.*}} annotate_for_users

// -----

// expected-error @+1 {{'dpc.mesh' op orders its devices, which a shard.grid cannot say}}
dpc.mesh @plan ["dp"=2] devices = [1, 0]
