// RUN: dpc-opt %s -dpc-overlap-collectives | FileCheck %s
// RUN: dpc-opt %s -dpc-overlap-collectives -dpc-overlap-collectives -o /dev/null

// A gradient reduction starts as soon as its gradient exists and is waited
// for where its reader needs it; a tensor-parallel reduction of an
// argument starts at once, and the exp that does not need it runs under it.
// The mul reading the reduction and the exp's result stays where the exp's
// result would die: sinking it to its own reader would hold that result
// longer (a weight gradient's contraction moved to the gradients' bucket
// would hold every activation gradient through the backward pass).
dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @backward
func.func @backward(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %x: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK: %[[T:.*]] = dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> {async} : tensor<4x4xf32>
  // CHECK-NEXT: %[[G:.*]] = dpc.matmul
  // CHECK-NEXT: %[[R:.*]] = dpc.all_reduce %[[G]] over @plan ["dp"] <sum> {async} : tensor<4x4xf32>
  // CHECK-NEXT: %[[E:.*]] = dpc.exp
  // CHECK-NEXT: %[[WT:.*]] = dpc.wait %[[T]] : tensor<4x4xf32>
  // CHECK-NEXT: %[[M:.*]] = dpc.mul %[[E]], %[[WT]]
  // CHECK-NEXT: %[[W:.*]] = dpc.wait %[[R]] : tensor<4x4xf32>
  // CHECK-NEXT: %[[U:.*]] = dpc.neg %[[W]]
  // CHECK-NEXT: return %[[U]], %[[M]]
  %g = dpc.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %e = dpc.exp %x : tensor<4x4xf32>
  %t = dpc.all_reduce %x over @plan ["tp"] <sum> : tensor<4x4xf32>
  %m = dpc.mul %e, %t : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<4x4xf32>
  %u = dpc.neg %r : tensor<4x4xf32>
  return %u, %m : tensor<4x4xf32>, tensor<4x4xf32>
}

// ZeRO-3's gathers of parameter blocks: each starts when the previous
// one's reader runs (one gather ahead), not all at the start, and one the
// backward pass reads not before the backward pass begins, so that whole
// parameters live only around their use.
// CHECK-LABEL: func.func @zero3
func.func @zero3(%w1: tensor<2x4xf32>, %w2: tensor<2x4xf32>,
                 %w3: tensor<2x4xf32>, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-NEXT: %[[G1:.*]] = dpc.all_gather %arg0 {{.*}}async
  // CHECK-NEXT: %[[W1:.*]] = dpc.wait %[[G1]]
  // CHECK-NEXT: %[[G2:.*]] = dpc.all_gather %arg1 {{.*}}async
  // CHECK-NEXT: %[[Y1:.*]] = dpc.matmul %arg3, %[[W1]]
  // CHECK-NEXT: %[[W2:.*]] = dpc.wait %[[G2]]
  // CHECK-NEXT: %[[Y2:.*]] = dpc.matmul %[[Y1]], %[[W2]]
  // CHECK-NEXT: %[[G3:.*]] = dpc.all_gather %arg2 {{.*}}async
  // CHECK-NEXT: dpc.neg %[[Y2]] {dpc.phase = #dpc.phase<backward>}
  %g1 = dpc.all_gather %w1 over @plan ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<2x4xf32> -> tensor<4x4xf32>
  %g2 = dpc.all_gather %w2 over @plan ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<2x4xf32> -> tensor<4x4xf32>
  %g3 = dpc.all_gather %w3 over @plan ["dp"] dim 0 {dpc.phase = #dpc.phase<backward>} : tensor<2x4xf32> -> tensor<4x4xf32>
  %y1 = dpc.matmul %x, %g1 {dpc.phase = #dpc.phase<forward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %y2 = dpc.matmul %y1, %g2 {dpc.phase = #dpc.phase<forward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = dpc.neg %y2 {dpc.phase = #dpc.phase<backward>} : tensor<4x4xf32>
  %y3 = dpc.matmul %b, %g3 {dpc.phase = #dpc.phase<backward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y3 : tensor<4x4xf32>
}

// Buckets of parameter blocks (-dpc-bucket-gradients' flattened,
// concatenated blocks: here one reshaped block each) are gathered one
// bucket ahead like single blocks, each with the reshape that makes its
// input: the second when the pass begins (its first matmul; the first
// bucket's reader reshapes only), the third, made at the start with the
// others, when the second's first reader runs.
// CHECK-LABEL: func.func @zero3_buckets
func.func @zero3_buckets(%w1: tensor<2x4xf32>, %w2: tensor<2x4xf32>,
                         %w3: tensor<2x4xf32>, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-NEXT: %[[F1:.*]] = dpc.reshape %arg0
  // CHECK-NEXT: %[[G1:.*]] = dpc.all_gather %[[F1]] {{.*}}async
  // CHECK-NEXT: %[[W1:.*]] = dpc.wait %[[G1]]
  // CHECK-NEXT: %[[A1:.*]] = dpc.reshape %[[W1]]
  // CHECK-NEXT: %[[F2:.*]] = dpc.reshape %arg1
  // CHECK-NEXT: %[[G2:.*]] = dpc.all_gather %[[F2]] {{.*}}async
  // CHECK-NEXT: %[[Y1:.*]] = dpc.matmul %arg3, %[[A1]]
  // CHECK-NEXT: %[[W2:.*]] = dpc.wait %[[G2]]
  // CHECK-NEXT: %[[F3:.*]] = dpc.reshape %arg2
  // CHECK-NEXT: %[[G3:.*]] = dpc.all_gather %[[F3]] {{.*}}async
  // CHECK-NEXT: %[[A2:.*]] = dpc.reshape %[[W2]]
  // CHECK-NEXT: %[[Y2:.*]] = dpc.matmul %[[Y1]], %[[A2]]
  // CHECK-NEXT: %[[W3:.*]] = dpc.wait %[[G3]]
  // CHECK-NEXT: %[[A3:.*]] = dpc.reshape %[[W3]]
  // CHECK-NEXT: dpc.matmul %[[Y2]], %[[A3]]
  %f1 = dpc.reshape %w1 : tensor<2x4xf32> -> tensor<8xf32>
  %g1 = dpc.all_gather %f1 over @plan ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<8xf32> -> tensor<16xf32>
  %f2 = dpc.reshape %w2 : tensor<2x4xf32> -> tensor<8xf32>
  %g2 = dpc.all_gather %f2 over @plan ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<8xf32> -> tensor<16xf32>
  %f3 = dpc.reshape %w3 : tensor<2x4xf32> -> tensor<8xf32>
  %g3 = dpc.all_gather %f3 over @plan ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<8xf32> -> tensor<16xf32>
  %a1 = dpc.reshape %g1 : tensor<16xf32> -> tensor<4x4xf32>
  %y1 = dpc.matmul %x, %a1 {dpc.phase = #dpc.phase<forward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a2 = dpc.reshape %g2 : tensor<16xf32> -> tensor<4x4xf32>
  %y2 = dpc.matmul %y1, %a2 {dpc.phase = #dpc.phase<forward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a3 = dpc.reshape %g3 : tensor<16xf32> -> tensor<4x4xf32>
  %y3 = dpc.matmul %y2, %a3 {dpc.phase = #dpc.phase<forward>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y3 : tensor<4x4xf32>
}

// Gradients reduce-scattered into their shards (ZeRO-2) and returned: each
// is waited for right after the next one starts, not all at the end, so
// that at most two whole gradients are held while they are reduced.
// CHECK-LABEL: func.func @zero2
func.func @zero2(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NEXT: %[[G1:.*]] = dpc.exp %arg0
  // CHECK-NEXT: %[[S1:.*]] = dpc.reduce_scatter %[[G1]] {{.*}}async
  // CHECK-NEXT: %[[G2:.*]] = dpc.exp %arg1
  // CHECK-NEXT: %[[S2:.*]] = dpc.reduce_scatter %[[G2]] {{.*}}async
  // CHECK-NEXT: %[[W1:.*]] = dpc.wait %[[S1]]
  // CHECK-NEXT: %[[G3:.*]] = dpc.neg %arg1
  // CHECK-NEXT: %[[S3:.*]] = dpc.reduce_scatter %[[G3]] {{.*}}async
  // CHECK-NEXT: %[[W2:.*]] = dpc.wait %[[S2]]
  // CHECK-NEXT: %[[W3:.*]] = dpc.wait %[[S3]]
  // CHECK-NEXT: return %[[W1]], %[[W2]], %[[W3]]
  %g1 = dpc.exp %a : tensor<4x4xf32>
  %s1 = dpc.reduce_scatter %g1 over @plan ["dp"] <sum> dim 0 : tensor<4x4xf32> -> tensor<2x4xf32>
  %g2 = dpc.exp %b : tensor<4x4xf32>
  %s2 = dpc.reduce_scatter %g2 over @plan ["dp"] <sum> dim 0 : tensor<4x4xf32> -> tensor<2x4xf32>
  %g3 = dpc.neg %b : tensor<4x4xf32>
  %s3 = dpc.reduce_scatter %g3 over @plan ["dp"] <sum> dim 0 : tensor<4x4xf32> -> tensor<2x4xf32>
  return %s1, %s2, %s3 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
