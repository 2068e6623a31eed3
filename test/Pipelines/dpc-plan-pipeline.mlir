// --train and --mesh add the registered pipelines ahead of the passes
// named on the command line, in one pass manager; the planned step's
// layout changes are explicit and every result follows from its rule.
// (The tensor axis fixed innermost: this small MLP would rather keep its
// gradient reduction within a node, residual-mlp.mlir.)
// RUN: dpc-opt %s --train --optimizer=adamw --mesh=2x2 --dp=2 --tp=2 --inner-axis=tp -dpc-verify-shardings | FileCheck %s
// The same with the pipelines spelled out.
// RUN: dpc-opt %s -dpc-train-pipeline="optimizer=adamw" -dpc-plan-pipeline="mesh=2x2 dp=2 tp=2 inner-axis=tp" -dpc-verify-shardings | FileCheck %s
// Replanning a planned step discards its reshards and places them again:
// the same plan.
// RUN: dpc-opt %s --train --optimizer=adamw --mesh=2x2 --dp=2 --tp=2 -o %t.planned.mlir
// RUN: dpc-opt %t.planned.mlir --mesh=2x2 --dp=2 --tp=2 -o %t.replanned.mlir
// RUN: diff %t.planned.mlir %t.replanned.mlir
// Without the reshards, the planned IR is not consistent: the verifier
// says where.
// RUN: not dpc-opt %s -dpc-train-pipeline -dpc-plan="mesh=2x2 dp=2 tp=2" -dpc-verify-shardings 2>&1 | FileCheck %s --check-prefix=UNRESHARDED
// --emit=shard-mlir writes the plan in upstream's shard dialect.
// RUN: dpc-opt %s --train --mesh=2x2 --dp=2 --tp=2 --emit=shard-mlir | FileCheck %s --check-prefix=SHARD
// RUN: not dpc-opt %s --train --emit=rocm -o %t.dpc 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not dpc-opt %s --train --emit=cpu 2>&1 | FileCheck %s --check-prefix=EMIT-OUT
// Code is emitted from the per-rank program: with a mesh, --emit=cpu-source
// (and cpu, cuda, cuda-source) partitions without --partition, the same
// program as with it (before, the backend met the plan's unlowered reshards).
// RUN: dpc-opt %s --train --optimizer=adamw --mesh=2x2 --dp=2 --tp=2 --emit=cpu-source -o %t.implied.cpp
// RUN: dpc-opt %s --train --optimizer=adamw --mesh=2x2 --dp=2 --tp=2 --partition --emit=cpu-source -o %t.partitioned.cpp
// RUN: diff %t.implied.cpp %t.partitioned.cpp
// RUN: FileCheck %s --check-prefix=CPU < %t.implied.cpp
// Errors of the training step point into this file.
// RUN: not dpc-opt %s --train --optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=LOCATION

// CHECK: dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: dpc.operand_shardings
// The gradients are reduced inside @forward_backward, each right after the
// op that makes it, so that the data-parallel all-reduce (a reshard here)
// overlaps the rest of the backward pass; they leave it whole.
// CHECK: %[[HEAD:.*]] = dpc.matmul {{.*}}partial = [dp : sum{{.*}}]>]{{.*}}-> tensor<64x16xf32>
// CHECK-NEXT: dpc.reshard %[[HEAD]] <@plan, [*, *]> {dpc.phase = #dpc.phase<backward>
// CHECK: %[[BLOCK:.*]] = dpc.matmul {{.*}}partial = [dp : sum{{.*}}]>]{{.*}}-> tensor<64x64xf32>
// CHECK-NEXT: dpc.reshard %[[BLOCK]] <@plan, [*, *]> {dpc.phase = #dpc.phase<backward>
// CHECK-LABEL: func.func @train_step
// Only the loss, a pending mean, is reduced after the call.
// CHECK: %[[STEP:.*]]:3 = call @forward_backward({{.*}}) {dpc.sharding = [#dpc.sharding<@plan, [], partial = [dp : mean{{.*}}]>, #dpc.sharding<@plan, [*, *]>, #dpc.sharding<@plan, [*, *]>]}
// CHECK-NEXT: dpc.reshard %[[STEP]]#0 <@plan, []>
// CHECK-NOT: dpc.reshard %[[STEP]]

// SHARD: shard.grid @plan(shape = 1x2x2)
// SHARD-NOT: #dpc.sharding
// SHARD: shard.shard {{.*}} annotate_for_users
// EMIT: dpc-opt: --emit=rocm is not a kind dpc-opt writes (mlir, shard-mlir, cpu, cpu-source, cuda or cuda-source)
// EMIT-OUT: dpc-opt: --emit=cpu writes an artifact directory: give it with -o DIR (and not --plan-only)

// CPU: int32_t dpc_program_0_part0(
// CPU: dpc::cpu::matmul(

// UNRESHARDED: error: 'dpc.matmul' op result #0 is declared

// LOCATION: dpc-plan-pipeline.mlir:[[@LINE+1]]:1: error: unknown optimizer 'rmsprop'
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w0: tensor<64x64xf32> {dpc.param = "block.weight"},
                   %w1: tensor<64x16xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w0 : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %1 = dpc.relu %0 : tensor<8x64xf32>
  %2 = dpc.add %x, %1 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %3 = dpc.matmul %2, %w1 : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %3, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
