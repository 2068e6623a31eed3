// RUN: dpc-opt %s --train --optimizer=adam -o %t.mlir
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition | FileCheck %s --check-prefix=ZERO0
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=1 --partition | FileCheck %s --check-prefix=ZERO1
// RUN: dpc-opt %t.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=3 --partition --plan-report=%t.zero3.json -test-dpc-communication-volume | FileCheck %s --check-prefix=ZERO3
// RUN: FileCheck %s --input-file=%t.zero3.json --check-prefix=CHARGED3
// RUN: dpc-opt %s --train --optimizer=adam --micro-batches=2 -o %t.micro.mlir
// RUN: dpc-opt %t.micro.mlir --mesh=2 --dp=2 --tp=1 --pp=1 --zero=0 --partition | FileCheck %s --check-prefix=MICRO

// Without ZeRO each replica needs the whole gradient: the two weights'
// gradients are all-reduced, in one bucket, in the backward pass (where it
// overlaps what is left of it), not after the call.
// ZERO0-LABEL: func.func @forward_backward
// ZERO0: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}} : tensor<5120xf32>
// ZERO0-NOT: dpc.reduce_scatter
// ZERO0-LABEL: func.func @train_step
// ZERO0-NOT: dpc.all_reduce {{.*}} <sum>
// ZERO0-NOT: dpc.reduce_scatter

// Under ZeRO (1 as 2 and 3) each replica updates its shard: the gradients
// are reduce-scattered in the backward pass, never all-reduced and sliced,
// in one bucket of two rows (row r: each gradient's block r, the head's
// 512 elements then the hidden layer's 2048, in the order the backward
// pass makes them); each rank's blocks come back side by side. The updated
// shards are gathered (in one bucket).
// ZERO1-LABEL: func.func @forward_backward
// ZERO1-NOT: dpc.all_reduce {{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xf32>
// ZERO1: %[[HEAD:.*]] = dpc.reshape {{.*}} : tensor<64x16xf32> -> tensor<2x512xf32>
// ZERO1-NEXT: %[[HIDDEN:.*]] = dpc.reshape {{.*}} : tensor<64x64xf32> -> tensor<2x2048xf32>
// ZERO1-NEXT: %[[ROWS:.*]] = dpc.concat %[[HEAD]], %[[HIDDEN]] {axis = 1 : i64}
// ZERO1-NEXT: %[[SCATTERED:.*]] = dpc.reduce_scatter %[[ROWS]] over @plan ["dp"] <sum> dim 0 {{.*}} : tensor<2x2560xf32> -> tensor<1x2560xf32>
// ZERO1-NOT: dpc.reduce_scatter
// ZERO1: %[[MINE:.*]] = dpc.wait %[[SCATTERED]]
// ZERO1-NEXT: %[[HEADBLOCK:.*]] = dpc.slice %[[MINE]] {limit = array<i64: 1, 512>, start = array<i64: 0, 0>, {{.*}} -> tensor<1x512xf32>
// ZERO1-NEXT: dpc.reshape %[[HEADBLOCK]] : tensor<1x512xf32> -> tensor<32x16xf32>
// ZERO1-NEXT: %[[HIDDENBLOCK:.*]] = dpc.slice %[[MINE]] {limit = array<i64: 1, 2560>, start = array<i64: 0, 512>, {{.*}} -> tensor<1x2048xf32>
// ZERO1-NEXT: dpc.reshape %[[HIDDENBLOCK]] : tensor<1x2048xf32> -> tensor<32x64xf32>
// ZERO1-LABEL: func.func @train_step
// ZERO1-NOT: dpc.all_reduce {{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xf32>
// ZERO1-NOT: dpc.reduce_scatter
// ZERO1: dpc.all_gather {{.*}} over @plan ["dp"] dim 0 {{.*}} : tensor<2560xf32> -> tensor<5120xf32>

// ZeRO-3 keeps only each rank's block of a weight: @forward_backward takes
// the blocks, gathers both weights for the forward pass in one bucket
// (under the 25 MiB cap) before the first matmul, and gathers the head's
// again for the backward pass, which reads it (the hidden layer's input
// needs no gradient), started after the forward pass's last matmul, not
// before: no whole weight lives from one pass to the other.
// Each rank sends 10240 bytes for the forward gathers, 10240 for the
// reduce-scatters and 2048 for the backward gather, as the plan charges
// (the 20 bytes more are scalars).
// ZERO3-LABEL: func.func @forward_backward
// ZERO3-SAME: dpc.param = "hidden.weight", dpc.sharding = #dpc.sharding<@plan, [dp, *]>
// ZERO3-SAME: dpc.param = "head.weight", dpc.sharding = #dpc.sharding<@plan, [dp, *]>
// ZERO3: %[[H:.*]] = dpc.reshape %arg2 : tensor<32x64xf32> -> tensor<2048xf32>
// ZERO3-NEXT: %[[O:.*]] = dpc.reshape %arg3 : tensor<32x16xf32> -> tensor<512xf32>
// ZERO3-NEXT: %[[B:.*]] = dpc.concat %[[H]], %[[O]]
// ZERO3-NEXT: dpc.all_gather %[[B]] over @plan ["dp"] dim 0 {{.*}}phase<forward>{{.*}} : tensor<2560xf32> -> tensor<5120xf32>
// ZERO3-NOT: dpc.all_gather
// ZERO3: dpc.matmul {{.*}}phase<forward>{{.*}} -> tensor<4x64xf32>
// ZERO3-NOT: dpc.all_gather
// ZERO3: dpc.matmul {{.*}}phase<forward>{{.*}} -> tensor<4x16xf32>
// ZERO3-NOT: dpc.matmul
// ZERO3: dpc.all_gather %arg3 over @plan ["dp"] dim 0 {{.*}}phase<backward>{{.*}} : tensor<32x16xf32> -> tensor<64x16xf32>
// ZERO3: dpc.reduce_scatter
// ZERO3-LABEL: func.func @train_step
// ZERO3-SAME: dpc.sent_bytes = {dp = 22548 : i64, pp = 0 : i64, tp = 0 : i64}
// ZERO3-NOT: dpc.all_gather {{.*}} over @plan ["dp"]
// CHARGED3: "sent_bytes_per_step": {
// CHARGED3-NEXT: "dp": 22528,

// Over two micro-batches the gradients are added while their sums are
// still pending over dp, and reduced once, in one bucket, for the update:
// inside the last micro-batch's backward pass (inlined), each sum made as
// soon as its last gradient is.
// MICRO-LABEL: func.func @forward_backward
// MICRO-NOT: dpc.all_reduce {{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xf32>
// MICRO-LABEL: func.func @train_step
// MICRO: call @forward_backward
// MICRO-NOT: call @forward_backward
// MICRO-NOT: dpc.all_reduce {{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xf32>
// MICRO: dpc.matmul {{.*}}phase<forward>
// MICRO: dpc.matmul {{.*}}phase<backward>{{.*}} -> tensor<64x16xf32>
// MICRO-NEXT: dpc.add {{.*}} : (tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
// MICRO: dpc.matmul {{.*}}phase<backward>{{.*}} -> tensor<64x64xf32>
// MICRO-NEXT: dpc.add {{.*}} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
// MICRO: dpc.all_reduce {{.*}} over @plan ["dp"] <sum> {{.*}} : tensor<5120xf32>
// MICRO-NOT: dpc.all_reduce {{.*}} : tensor<{{[0-9]+}}x{{[0-9]+}}xf32>
// MICRO-NOT: dpc.reduce_scatter

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
