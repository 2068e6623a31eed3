// RUN: dpc-opt %s --train --optimizer=sgd -o %t.mlir
// RUN: dpc-opt %t.mlir -dpc-plan-pipeline="mesh=4 dp=1 tp=4" | FileCheck %s
// The planned step is consistent (@forward, with only the overrides on it,
// is no planned function and is not checked).
// RUN: dpc-opt %t.mlir -dpc-plan-pipeline="mesh=4 dp=2 tp=2" -dpc-verify-shardings -o /dev/null
// The pipeline is the search, the completion and the reshards.
// RUN: dpc-opt %t.mlir -dpc-plan="mesh=4 dp=1 tp=4" -dpc-complete-shardings -dpc-insert-reshards | FileCheck %s
// Replanning a planned module keeps its plan.
// RUN: dpc-opt %t.mlir -dpc-plan-pipeline="mesh=4 dp=1 tp=4" -o %t.planned.mlir
// RUN: dpc-opt %t.planned.mlir -dpc-plan-pipeline="mesh=4 dp=1 tp=4" | FileCheck %s
// The completion needs a plan.
// RUN: not dpc-opt %t.mlir -dpc-complete-shardings 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// The fixed shardings need the tensor axis: on four devices the planner
// must choose tp > 1 on its own.
// RUN: dpc-opt %t.mlir -dpc-plan="mesh=4" | FileCheck %s --check-prefix=FREE
// RUN: not dpc-opt %t.mlir -dpc-plan="mesh=4 tp=1" 2>&1 | FileCheck %s --check-prefix=CONFLICT
// With two replicas the gradients leave as partial sums over them.
// RUN: dpc-opt %t.mlir -dpc-plan-pipeline="mesh=4 dp=2 tp=2" | FileCheck %s --check-prefix=DATA
// The overrides do not make @forward a planned function: partitioning the
// step leaves the model's own function whole.
// RUN: dpc-opt %t.mlir --mesh=4 --dp=2 --tp=2 --pp=1 --partition | FileCheck %s --check-prefix=PARTITION

// Left alone, the planner splits both weights by column on this MLP (one
// all-gather between the matmuls). The user fixes Megatron-LM's layout
// instead: the up-projection by column (its result split over tp) and the
// down-projection's weight by row, so that the second matmul leaves a
// partial sum over tp. Shardings name the axes of the plan's mesh, which
// the planner rewrites with the degrees it chooses.
dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=4]
func.func @forward(%x: tensor<8x1024xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w0: tensor<1024x4096xf32> {dpc.param = "up.weight"},
                   %w1: tensor<4096x1024xf32> {dpc.param = "down.weight",
                                               dpc.sharding = #dpc.sharding<@plan, [tp, *]>})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w0 {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]}
      : (tensor<8x1024xf32>, tensor<1024x4096xf32>) -> tensor<8x4096xf32>
  %1 = dpc.relu %0 : tensor<8x4096xf32>
  %2 = dpc.matmul %1, %w1 : (tensor<8x4096xf32>, tensor<4096x1024xf32>) -> tensor<8x1024xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x1024xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK: dpc.mesh @plan ["pp"=1, "dp"=1, "tp"=4]
// CHECK-NOT: dpc.mesh
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: dpc.param = "up.weight", dpc.sharding = #dpc.sharding<@plan, [*, tp]>
// CHECK-SAME: dpc.param = "down.weight", dpc.sharding = #dpc.sharding<@plan, [tp, *]>
// CHECK-SAME: dpc.grad = "up.weight", dpc.sharding = #dpc.sharding<@plan, [*, tp]>
// CHECK-SAME: dpc.grad = "down.weight", dpc.sharding = #dpc.sharding<@plan, [tp, *]>
// CHECK: dpc.matmul {{.*}}dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]
// CHECK: dpc.relu {{.*}}dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]
// CHECK: dpc.matmul {{.*}}dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]
// The backward pass follows (-dpc-plan completes every value): the
// weight gradients come out laid out as their weights (no pending sum:
// the data axis has one device), and the update keeps each weight's
// layout.
// CHECK: return
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dpc.param = "up.weight", dpc.sharding = #dpc.sharding<@plan, [*, tp]>
// CHECK-SAME: dpc.param = "down.weight", dpc.sharding = #dpc.sharding<@plan, [tp, *]>
// The loss comes back a pending mean over the samples (split over dp and
// tp) and is reduced after the call.
// CHECK: %[[STEP:.*]]:3 = call @forward_backward{{.*}}dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : mean, tp : mean]>, #dpc.sharding<@plan, [*, tp]>, #dpc.sharding<@plan, [tp, *]>]
// CHECK-NEXT: dpc.reshard %[[STEP]]#0 <@plan, []>
// CHECK: dpc.sub {{.*}}dpc.sharding = [#dpc.sharding<@plan, [*, tp]>], dpc.stage = 0
// CHECK: dpc.sub {{.*}}dpc.sharding = [#dpc.sharding<@plan, [tp, *]>], dpc.stage = 0

// FREE: dpc.plan = {{{.*}}tp = 4
// FREE-LABEL: func.func @forward_backward
// FREE-SAME: dpc.param = "down.weight", dpc.sharding = #dpc.sharding<@plan, [tp, *]>
// FREE: dpc.matmul {{.*}}dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]

// DATA: dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
// DATA-LABEL: func.func @forward_backward
// The gradients are reduced over dp inside @forward_backward (here
// reduce-scattered into the ZeRO shards the planner chose) and leave it
// with no sum pending.
// DATA-SAME: dpc.grad = "up.weight", dpc.sharding = #dpc.sharding<@plan, [{{[^]]*}}]>}
// DATA-SAME: dpc.grad = "down.weight", dpc.sharding = #dpc.sharding<@plan, [{{[^]]*}}]>}
// The mean loss over samples split across replicas is a pending mean, not
// a sum.
// DATA: dpc.softmax_cross_entropy {{.*}}dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : mean{{(, tp : mean)?}}]>]

// UNPLANNED: error: the module has no plan (dpc.mesh @plan and dpc.plan): run -dpc-plan first

// CONFLICT: .tmp.mlir:{{[0-9]+}}:3: error: no configuration gives the shardings fixed in the IR: the sharding [tp, *] fixed on argument 3 ('down.weight') is none of its strategies at dp=4 tp=1 ([*, *])

// PARTITION-LABEL: func.func @forward(
// PARTITION-SAME: tensor<4096x1024xf32> {dpc.param = "down.weight", dpc.sharding = #dpc.sharding<@plan, [tp, *]>}
// PARTITION: dpc.matmul {{.*}} : (tensor<8x4096xf32>, tensor<4096x1024xf32>) -> tensor<8x1024xf32>
// PARTITION-LABEL: func.func @forward_backward(
// PARTITION-SAME: tensor<2048x1024xf32> {dpc.param = "down.weight", dpc.sharding = #dpc.sharding<@plan, [tp, *]>}
// PARTITION-SAME: attributes {dpc.partitioned}
