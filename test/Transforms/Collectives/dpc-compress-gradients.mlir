// RUN: dpc-opt %s -split-input-file -dpc-compress-gradients=compression=bf16 | FileCheck %s
// RUN: dpc-opt %s -split-input-file -dpc-compress-gradients=compression=fp16 | FileCheck %s --check-prefix=FP16
// RUN: dpc-opt %s -split-input-file -dpc-compress-gradients | FileCheck %s --check-prefix=NONE
// RUN: not dpc-opt %s -split-input-file -dpc-compress-gradients=compression=topk:2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: dpc-opt %s -split-input-file -dpc-compress-gradients=compression=topk:0.25 2>&1 | FileCheck %s --check-prefix=TOPK

// BAD: error: --grad-compression=topk:2 is not a compression: none, bf16, fp16 or topk:RATIO with 0 < RATIO <= 1

dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @reductions
// NONE-NOT: dpc.cast
func.func @reductions(%g: tensor<512xf32>, %h: tensor<8x4xf32>, %a: tensor<4x4xf32>, %n: tensor<f32>)
    -> (tensor<512xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) {
  // Gradients reduced over dp travel in bf16 and come back as f32.
  // CHECK: %[[C:.*]] = dpc.cast %{{.*}} : tensor<512xf32> -> tensor<512xbf16>
  // CHECK-NEXT: %[[R:.*]] = dpc.all_reduce %[[C]] over @plan ["dp"] <sum> : tensor<512xbf16>
  // CHECK-NEXT: dpc.cast %[[R]] : tensor<512xbf16> -> tensor<512xf32>
  // FP16: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<512xf16>
  %0 = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<512xf32>
  // CHECK: dpc.reduce_scatter %{{.*}} over @plan ["dp", "tp"] <mean> dim 0 : tensor<8x4xbf16> -> tensor<2x4xbf16>
  %1 = dpc.reduce_scatter %h over @plan ["dp", "tp"] <mean> dim 0 : tensor<8x4xf32> -> tensor<2x4xf32>
  %2 = dpc.reshape %1 : tensor<2x4xf32> -> tensor<2x4xf32>
  %3 = dpc.concat %2, %2 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  // Tensor-parallel activations and scalar counts keep their precision.
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<4x4xf32>
  %4 = dpc.all_reduce %a over @plan ["tp"] <sum> : tensor<4x4xf32>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<f32>
  %5 = dpc.all_reduce %n over @plan ["dp"] <sum> : tensor<f32>
  return %0, %3, %4, %5 : tensor<512xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>
}

// -----

// Top-k with error feedback: the step takes and returns each rank's
// residual (one row per device), threaded through the function that
// reduces the gradient; 16 of 64 entries go out, as values and indices.
// TOPK: remark: top-k gradient compression: each rank sends 192 of 256 gradient bytes per step (ratio 0.750)
dpc.mesh @plan ["dp"=2]
// TOPK-LABEL: func.func private @backward
// TOPK-SAME: (%[[G:[^:]*]]: tensor<8x8xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>}, %[[E:[^:]*]]: tensor<1x64xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
// TOPK-SAME: -> (tensor<8x8xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>}, tensor<1x64xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
func.func private @backward(%g: tensor<8x8xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<8x8xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>}) attributes {dpc.partitioned} {
  // TOPK: %[[F:.*]] = dpc.reshape %[[G]] : tensor<8x8xf32> -> tensor<64xf32>
  // TOPK: %[[C:.*]] = dpc.reshape %[[E]] : tensor<1x64xf32> -> tensor<64xf32>
  // TOPK: %[[Y:.*]] = dpc.add %[[F]], %[[C]]
  // TOPK: %[[V:.*]], %[[I:.*]] = dpc.top_k %[[Y]] k 16 : tensor<64xf32> -> tensor<16xf32>, tensor<16xi64>
  // TOPK: %[[S:.*]] = dpc.scatter_add %[[V]][%[[I]]] {axis = 0 : i64} : (tensor<16xf32>, tensor<16xi64>) -> tensor<64xf32>
  // TOPK: %[[L:.*]] = dpc.sub %[[Y]], %[[S]]
  // TOPK: %[[R:.*]] = dpc.reshape %[[L]] : tensor<64xf32> -> tensor<1x64xf32>
  // TOPK: %[[GV:.*]] = dpc.all_gather %[[V]] over @plan ["dp"] dim 0 : tensor<16xf32> -> tensor<32xf32>
  // TOPK: %[[GI:.*]] = dpc.all_gather %[[I]] over @plan ["dp"] dim 0 : tensor<16xi64> -> tensor<32xi64>
  // TOPK: %[[D:.*]] = dpc.scatter_add %[[GV]][%[[GI]]] {axis = 0 : i64} : (tensor<32xf32>, tensor<32xi64>) -> tensor<64xf32>
  // TOPK: %[[O:.*]] = dpc.reshape %[[D]] : tensor<64xf32> -> tensor<8x8xf32>
  // TOPK-NOT: dpc.all_reduce
  // TOPK: return %[[O]], %[[R]]
  %0 = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
// Calls chain the residual; the step marks it as optimizer state.
// TOPK-LABEL: func.func @step
// TOPK-SAME: %[[E0:[^:]*]]: tensor<1x64xf32> {dpc.opt_state = "gradient0:topk_residual", dpc.sharding = #dpc.sharding<@plan, [dp, *]>}
// TOPK: %[[A:.*]]:2 = call @backward(%{{.*}}, %[[E0]])
// TOPK: %[[B:.*]]:2 = call @backward(%{{.*}}, %[[A]]#1)
// TOPK: return %{{.*}}, %[[B]]#1 : tensor<8x8xf32>, tensor<1x64xf32>
func.func @step(%g: tensor<8x8xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
    -> (tensor<8x8xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *]>}) attributes {dpc.partitioned} {
  %0 = call @backward(%g) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @backward(%g) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = dpc.add %0, %1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}

// -----

dpc.mesh @plan ["dp"=2]
// Synchronized batch norm's statistics, summed over dp for the passes'
// computations, keep their precision and are sent whole; the gradient,
// summed for the optimizer alone, is compressed.
// CHECK-LABEL: func.func @statistics
// CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<64xf32>
// CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<backward>} : tensor<64xf32>
// CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<backward>} : tensor<64xbf16>
// TOPK-LABEL: func.func @statistics
// TOPK-COUNT-2: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum>{{.*}}: tensor<64xf32>
// TOPK-NOT: dpc.all_reduce
// TOPK: dpc.top_k
func.func @statistics(%x: tensor<4x64xf32>, %dy: tensor<4x64xf32>, %g: tensor<64xf32>)
    -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<64xf32>) attributes {dpc.partitioned} {
  %s = dpc.reduce_sum %x [0] : tensor<4x64xf32> -> tensor<64xf32>
  %r = dpc.all_reduce %s over @plan ["dp"] <sum> : tensor<64xf32>
  %w = dpc.reshape %r : tensor<64xf32> -> tensor<64xf32>
  %y = dpc.sub %x, %w {dpc.phase = #dpc.phase<forward>} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %t = dpc.reduce_sum %dy [0] {dpc.phase = #dpc.phase<backward>} : tensor<4x64xf32> -> tensor<64xf32>
  %u = dpc.all_reduce %t over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<backward>} : tensor<64xf32>
  %dx = dpc.sub %dy, %u {dpc.phase = #dpc.phase<backward>} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %q = dpc.all_reduce %g over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<backward>} : tensor<64xf32>
  %m = dpc.reshape %q : tensor<64xf32> -> tensor<64xf32>
  return %y, %dx, %m : tensor<4x64xf32>, tensor<4x64xf32>, tensor<64xf32>
}
