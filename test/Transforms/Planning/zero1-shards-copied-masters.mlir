// RUN: dpc-opt %s --train --optimizer=adam --precision=bf16 -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=1 --partition --plan-report=%t.json -test-dpc-communication-volume | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=MEMORY
// RUN: dpc-opt %s --train --optimizer=adam --precision=bf16 --micro-batches=4 -o %t.micro.mlir
// RUN: dpc-opt %t.micro.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=1 --partition --plan-report=%t.micro.json | FileCheck %s --check-prefix=MICRO
// RUN: FileCheck %s --input-file=%t.micro.json --check-prefix=MICROMEMORY
// RUN: dpc-opt %t.micro.mlir --mesh=2x2 --dp=2 --tp=1 --pp=2 --zero=1 --pipeline-schedule=1f1b --partition -test-dpc-communication-volume | FileCheck %s --check-prefix=PIPE

// Under mixed precision ZeRO-1 keeps each rank's block of the fp32 masters
// (with Adam's moments), as Megatron-LM's distributed optimizer does: the
// forward pass casts the rank's blocks to bf16 and gathers the bf16 copies
// (one bucket, 2560 elements a rank, in the order the pass reads them),
// which both passes read whole. The
// optimizer updates the blocks in place of gathering updated fp32 shards.
// Each rank sends 5120 bytes for the gather and 5120 for the gradients'
// reduce-scatter, as the plan charges.
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: tensor<32x64xf32> {dpc.param = "hidden.weight", dpc.sharding = #dpc.sharding<@plan, [dp, *]>}
// CHECK-SAME: tensor<32x16xf32> {dpc.param = "head.weight", dpc.sharding = #dpc.sharding<@plan, [dp, *]>}
// CHECK: %[[HIDDEN:.*]] = dpc.cast %{{.*}} : tensor<32x64xf32> -> tensor<32x64xbf16>
// CHECK-NEXT: %[[H:.*]] = dpc.reshape %[[HIDDEN]] : tensor<32x64xbf16> -> tensor<2048xbf16>
// CHECK-NEXT: %[[HEAD:.*]] = dpc.cast %{{.*}} : tensor<32x16xf32> -> tensor<32x16xbf16>
// CHECK-NEXT: %[[O:.*]] = dpc.reshape %[[HEAD]] : tensor<32x16xbf16> -> tensor<512xbf16>
// CHECK-NEXT: %[[BUCKET:.*]] = dpc.concat %[[H]], %[[O]]
// CHECK-NEXT: dpc.all_gather %[[BUCKET]] over @plan ["dp"] dim 0 {{.*}}phase<forward>{{.*}} : tensor<2560xbf16> -> tensor<5120xbf16>
// CHECK-NOT: dpc.all_gather
// CHECK: dpc.reduce_scatter %{{.*}} over @plan ["dp"] <sum> dim 0 {{.*}} : tensor<2x2560xbf16> -> tensor<1x2560xbf16>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<32x64xf32> {dpc.param = "hidden.weight", dpc.sharding = #dpc.sharding<@plan, [dp, *]>}
// CHECK-SAME: dpc.sent_bytes = {dp = 10260 : i64, pp = 0 : i64, tp = 0 : i64}
// CHECK-NOT: dpc.all_gather
// CHECK: return
// The hidden layer's 4096 parameters hold 2 bytes of bf16 copy whole, and
// 4 of fp32 gradient, 4 of master and 8 of moments over 2 ranks: 12 bytes
// each (18 under ZeRO-0).
// MEMORY: "repeat_model_state_bytes": 49152,
// MEMORY: "sent_bytes_per_step": {
// MEMORY-NEXT: "dp": 10240,

// Over four micro-batches each would gather the copies again (4 x 2 bytes
// a parameter, more than the master's 4): the step keeps whole masters and
// gathers the updated fp32 shards once, after the update.
// MICRO-LABEL: func.func @forward_backward
// MICRO-SAME: tensor<64x64xf32> {dpc.param = "hidden.weight", dpc.sharding = #dpc.sharding<@plan, [*, *]>}
// MICRO-NOT: dpc.all_gather
// MICRO-LABEL: func.func @train_step
// MICRO-SAME: tensor<64x64xf32> {dpc.param = "hidden.weight", dpc.sharding = #dpc.sharding<@plan, [*, *]>}
// MICRO: dpc.all_gather %{{.*}} over @plan ["dp"] dim 0 {{.*}}phase<optimizer>{{.*}} : tensor<2560xf32> -> tensor<5120xf32>
// MICROMEMORY: "repeat_model_state_bytes": 57344,

// On pipeline stages, which inline their micro-batches, the four
// micro-batches share one gather of the copies: the masters stay blocks
// over dp, the copies' bucket is gathered once a step, and the summed
// fp32 gradients are reduce-scattered once, after the last micro-batch
// (15360 bytes a rank, as charged; 8 more are scalars).
// PIPE-LABEL: func.func @train_step.stage0
// PIPE-SAME: tensor<32x64xf32> {dpc.param = "hidden.weight", dpc.sharding = #dpc.sharding<@plan, [dp, *]>}
// PIPE-SAME: dpc.sent_bytes = {dp = 15368 : i64
// PIPE: dpc.all_gather %{{.*}} over @plan ["dp"] dim 0 {{.*}}phase<forward>{{.*}} : tensor<2560xbf16> -> tensor<5120xbf16>
// PIPE-NOT: dpc.all_gather
// PIPE: dpc.reduce_scatter %{{.*}} over @plan ["dp"] <sum> dim 0 {{.*}}phase<optimizer>{{.*}} : tensor<64x64xf32> -> tensor<32x64xf32>
// PIPE-NOT: dpc.all_gather
// PIPE-LABEL: func.func @train_step.stage1

func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x64xf32> {dpc.param = "hidden.weight"},
                   %head: tensor<64x16xf32> {dpc.param = "head.weight"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %1 = dpc.relu %0 : tensor<8x64xf32>
  %2 = dpc.matmul %1, %head : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
