// RUN: dpc-opt %s -dpc-bucket-gradients -split-input-file | FileCheck %s
// RUN: dpc-opt %s -dpc-bucket-gradients=bucket-cap-mb=0.002 -split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: not dpc-opt %s -dpc-bucket-gradients=bucket-cap-mb=0 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: --bucket-cap-mb=0.00 is outside (0, 1e6]

// Three gradients reduced over dp as the backward pass makes them, read
// only by the optimizer afterwards: one bucket, reduced where the last one
// was. The tensor-parallel reduction, read at once, stays alone.
dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @backward
// SMALL-LABEL: func.func @backward
func.func @backward(%g0: tensor<16x32xf32>, %g1: tensor<32xf32>, %g2: tensor<8x8xf32>, %h: tensor<4x4xf32>)
    -> (tensor<16x32xf32>, tensor<32xf32>, tensor<8x8xf32>, tensor<4x4xf32>) {
  %a = dpc.all_reduce %g0 over @plan ["dp"] <sum> : tensor<16x32xf32>
  // CHECK: %[[T:.*]] = dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<4x4xf32>
  %t = dpc.all_reduce %h over @plan ["tp"] <sum> : tensor<4x4xf32>
  // CHECK-NEXT: %[[U:.*]] = dpc.neg %[[T]]
  // CHECK-NEXT: %[[V:.*]] = dpc.all_reduce %[[U]] over @plan ["tp"] <sum> : tensor<4x4xf32>
  %u = dpc.neg %t : tensor<4x4xf32>
  %v = dpc.all_reduce %u over @plan ["tp"] <sum> : tensor<4x4xf32>
  %b = dpc.all_reduce %g1 over @plan ["dp"] <sum> : tensor<32xf32>
  // CHECK-NEXT: %[[F0:.*]] = dpc.reshape %{{.*}} : tensor<16x32xf32> -> tensor<512xf32>
  // CHECK-NEXT: %[[F1:.*]] = dpc.reshape %{{.*}} : tensor<32xf32> -> tensor<32xf32>
  // CHECK-NEXT: %[[F2:.*]] = dpc.reshape %{{.*}} : tensor<8x8xf32> -> tensor<64xf32>
  // CHECK-NEXT: %[[B:.*]] = dpc.concat %[[F0]], %[[F1]], %[[F2]] {axis = 0 : i64} : (tensor<512xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<608xf32>
  // CHECK-NEXT: %[[R:.*]] = dpc.all_reduce %[[B]] over @plan ["dp"] <sum> : tensor<608xf32>
  // CHECK-NEXT: %[[S0:.*]] = dpc.slice %[[R]] {limit = array<i64: 512>, start = array<i64: 0>, stride = array<i64: 1>}
  // CHECK-NEXT: %[[A:.*]] = dpc.reshape %[[S0]] : tensor<512xf32> -> tensor<16x32xf32>
  // CHECK-NEXT: dpc.slice %[[R]] {limit = array<i64: 544>, start = array<i64: 512>, stride = array<i64: 1>}
  // CHECK: dpc.slice %[[R]] {limit = array<i64: 608>, start = array<i64: 544>, stride = array<i64: 1>}
  // CHECK-NOT: dpc.all_reduce
  // CHECK: return %[[A]]
  %c = dpc.all_reduce %g2 over @plan ["dp"] <sum> : tensor<8x8xf32>
  // With 2 KiB buckets: the 2 KiB gradient alone; the other two together.
  // SMALL: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<16x32xf32>
  // SMALL: dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<4x4xf32>
  // SMALL: dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<4x4xf32>
  // SMALL: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<96xf32>
  // SMALL-NOT: dpc.all_reduce
  return %a, %b, %c, %v : tensor<16x32xf32>, tensor<32xf32>, tensor<8x8xf32>, tensor<4x4xf32>
}

// -----

// A gradient read before the next one is reduced closes its bucket; kinds,
// groups and element types bucket apart. Pure ops reading a reduced
// gradient wait until their result is needed.
dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @apart
// SMALL-LABEL: func.func @apart
func.func @apart(%g0: tensor<4xf32>, %g1: tensor<4xf32>, %g2: tensor<4xf32>, %g3: tensor<4xf16>, %g4: tensor<4xf32>, %g5: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<4xf32>
  %a = dpc.all_reduce %g0 over @plan ["dp"] <sum> : tensor<4xf32>
  %n = dpc.all_reduce %a over @plan ["tp"] <sum> : tensor<4xf32>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<4xf32>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <mean> : tensor<4xf32>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<4xf16>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp", "tp"] <sum> : tensor<4xf32>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<8xf32>
  // CHECK-NOT: dpc.all_reduce
  %b0 = dpc.all_reduce %g1 over @plan ["dp"] <sum> : tensor<4xf32>
  %b = dpc.transpose %b0 [0] : tensor<4xf32> -> tensor<4xf32>
  %c = dpc.all_reduce %g2 over @plan ["dp"] <mean> : tensor<4xf32>
  %d = dpc.all_reduce %g3 over @plan ["dp"] <sum> : tensor<4xf16>
  %e = dpc.all_reduce %g4 over @plan ["dp", "tp"] <sum> : tensor<4xf32>
  %f = dpc.all_reduce %g5 over @plan ["dp"] <sum> : tensor<4xf32>
  // CHECK: dpc.transpose
  // CHECK-NEXT: return
  return %n, %b, %c, %d, %e, %f : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>
}

// -----

// ZeRO's all-gathers of updated parameter blocks along dimension 0 share a
// bucket: one all-gather of the concatenated blocks, and each parameter put
// back together from its piece of every rank's part (here 2 ranks, parts of
// 4 + 2 elements).
dpc.mesh @zero ["dp"=2]
// CHECK-LABEL: func.func @gathers
func.func @gathers(%a: tensor<2x2xf32>, %b: tensor<2xf32>) -> (tensor<4x2xf32>, tensor<4xf32>) {
  // CHECK: %[[FA:.*]] = dpc.reshape %{{.*}} : tensor<2x2xf32> -> tensor<4xf32>
  // CHECK: %[[FB:.*]] = dpc.reshape %{{.*}} : tensor<2xf32> -> tensor<2xf32>
  // CHECK: %[[C:.*]] = dpc.concat %[[FA]], %[[FB]] {axis = 0 : i64} : (tensor<4xf32>, tensor<2xf32>) -> tensor<6xf32>
  // CHECK: %[[G:.*]] = dpc.all_gather %[[C]] over @zero ["dp"] dim 0 : tensor<6xf32> -> tensor<12xf32>
  // CHECK: %[[A0:.*]] = dpc.slice %[[G]] {limit = array<i64: 4>, start = array<i64: 0>, stride = array<i64: 1>}
  // CHECK: %[[A1:.*]] = dpc.slice %[[G]] {limit = array<i64: 10>, start = array<i64: 6>, stride = array<i64: 1>}
  // CHECK: %[[A:.*]] = dpc.concat %[[A0]], %[[A1]] {axis = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  // CHECK: dpc.reshape %[[A]] : tensor<8xf32> -> tensor<4x2xf32>
  // CHECK: dpc.slice %[[G]] {limit = array<i64: 6>, start = array<i64: 4>, stride = array<i64: 1>}
  // CHECK: dpc.slice %[[G]] {limit = array<i64: 12>, start = array<i64: 10>, stride = array<i64: 1>}
  // CHECK-NOT: dpc.all_gather
  %ga = dpc.all_gather %a over @zero ["dp"] dim 0 : tensor<2x2xf32> -> tensor<4x2xf32>
  %gb = dpc.all_gather %b over @zero ["dp"] dim 0 : tensor<2xf32> -> tensor<4xf32>
  return %ga, %gb : tensor<4x2xf32>, tensor<4xf32>
}

// -----

// ZeRO's reduce-scatters of gradients along dimension 0 bucket as rows:
// row r of the bucket holds each member's block r (a 4x2 gradient as two
// rows of 4, a 2-vector as two rows of 1), and each rank's blocks come back
// side by side. A scatter along another dimension is left alone. With
// 0.002 MiB buckets (2097 bytes, counting what a bucket sends: the members
// whole) each 1000-float gradient is scattered alone.
dpc.mesh @zs ["dp"=2]
// CHECK-LABEL: func.func @scatters
// SMALL-LABEL: func.func @scatters
func.func @scatters(%a: tensor<4x2xf32>, %b: tensor<2xf32>, %c: tensor<2x4xf32>,
                    %d: tensor<1000xf32>, %e: tensor<1000xf32>)
    -> (tensor<2x2xf32>, tensor<1xf32>, tensor<2x2xf32>, tensor<500xf32>, tensor<500xf32>) {
  // CHECK: dpc.reduce_scatter %arg2 over @zs ["dp"] <sum> dim 1 : tensor<2x4xf32> -> tensor<2x2xf32>
  // CHECK-NEXT: %[[RA:.*]] = dpc.reshape %arg0 : tensor<4x2xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %[[RB:.*]] = dpc.reshape %arg1 : tensor<2xf32> -> tensor<2x1xf32>
  // CHECK-NEXT: %[[RD:.*]] = dpc.reshape %arg3 : tensor<1000xf32> -> tensor<2x500xf32>
  // CHECK-NEXT: %[[RE:.*]] = dpc.reshape %arg4 : tensor<1000xf32> -> tensor<2x500xf32>
  // CHECK-NEXT: %[[ROWS:.*]] = dpc.concat %[[RA]], %[[RB]], %[[RD]], %[[RE]] {axis = 1 : i64} : {{.*}} -> tensor<2x1005xf32>
  // CHECK-NEXT: %[[MINE:.*]] = dpc.reduce_scatter %[[ROWS]] over @zs ["dp"] <sum> dim 0 : tensor<2x1005xf32> -> tensor<1x1005xf32>
  // CHECK-NEXT: %[[BA:.*]] = dpc.slice %[[MINE]] {limit = array<i64: 1, 4>, start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<1x1005xf32> -> tensor<1x4xf32>
  // CHECK-NEXT: dpc.reshape %[[BA]] : tensor<1x4xf32> -> tensor<2x2xf32>
  // CHECK-NEXT: %[[BB:.*]] = dpc.slice %[[MINE]] {limit = array<i64: 1, 5>, start = array<i64: 0, 4>, stride = array<i64: 1, 1>} : tensor<1x1005xf32> -> tensor<1x1xf32>
  // CHECK-NEXT: dpc.reshape %[[BB]] : tensor<1x1xf32> -> tensor<1xf32>
  // CHECK-NOT: dpc.reduce_scatter
  // SMALL: dpc.reduce_scatter {{.*}} : tensor<2x5xf32> -> tensor<1x5xf32>
  // SMALL: dpc.reduce_scatter %arg3 {{.*}} : tensor<1000xf32> -> tensor<500xf32>
  // SMALL: dpc.reduce_scatter %arg4 {{.*}} : tensor<1000xf32> -> tensor<500xf32>
  // SMALL-NOT: dpc.reduce_scatter
  %ra = dpc.reduce_scatter %a over @zs ["dp"] <sum> dim 0 : tensor<4x2xf32> -> tensor<2x2xf32>
  %rb = dpc.reduce_scatter %b over @zs ["dp"] <sum> dim 0 : tensor<2xf32> -> tensor<1xf32>
  %rc = dpc.reduce_scatter %c over @zs ["dp"] <sum> dim 1 : tensor<2x4xf32> -> tensor<2x2xf32>
  %rd = dpc.reduce_scatter %d over @zs ["dp"] <sum> dim 0 : tensor<1000xf32> -> tensor<500xf32>
  %re = dpc.reduce_scatter %e over @zs ["dp"] <sum> dim 0 : tensor<1000xf32> -> tensor<500xf32>
  return %ra, %rb, %rc, %rd, %re : tensor<2x2xf32>, tensor<1xf32>, tensor<2x2xf32>, tensor<500xf32>, tensor<500xf32>
}

// -----

// ZeRO-3 gathers the parameter blocks the function takes in each pass that
// reads them, all made where the pass begins: each moves to just before
// its first reader, and a bucket of them, ready from the start, is made
// where its first member was, so buckets follow the order in which the
// pass reads the parameters (the backward pass reads w2 first) and none
// holds a parameter whole from the forward pass into the backward pass.
// Two blocks overflow the small cap: each is gathered alone, just before
// its reader.
dpc.mesh @z3 ["dp"=2]
// CHECK-LABEL: func.func @zero3
// SMALL-LABEL: func.func @zero3
func.func @zero3(%x: tensor<600xf32>, %w1: tensor<300xf32>, %w2: tensor<300xf32>) -> tensor<600xf32> {
  // CHECK: %[[F:.*]] = dpc.concat {{.*}} -> tensor<600xf32>
  // CHECK-NEXT: %[[FG:.*]] = dpc.all_gather %[[F]] over @z3 ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<600xf32> -> tensor<1200xf32>
  // CHECK: dpc.mul
  // CHECK: dpc.mul
  // CHECK: %[[R2:.*]] = dpc.reshape %arg2 : tensor<300xf32> -> tensor<300xf32>
  // CHECK-NEXT: %[[R1:.*]] = dpc.reshape %arg1 : tensor<300xf32> -> tensor<300xf32>
  // CHECK-NEXT: %[[B:.*]] = dpc.concat %[[R2]], %[[R1]] {axis = 0 : i64} : (tensor<300xf32>, tensor<300xf32>) -> tensor<600xf32>
  // CHECK-NEXT: %[[BG:.*]] = dpc.all_gather %[[B]] over @z3 ["dp"] dim 0 {dpc.phase = #dpc.phase<backward>} : tensor<600xf32> -> tensor<1200xf32>
  // CHECK: dpc.mul
  // CHECK: dpc.mul
  // CHECK-NOT: dpc.all_gather
  // SMALL: dpc.all_gather %arg1 {{.*}}forward
  // SMALL-NEXT: dpc.mul
  // SMALL-NEXT: dpc.all_gather %arg2 {{.*}}forward
  // SMALL-NEXT: dpc.mul
  // SMALL-NEXT: dpc.all_gather %arg2 {{.*}}backward
  // SMALL-NEXT: dpc.mul
  // SMALL-NEXT: dpc.all_gather %arg1 {{.*}}backward
  // SMALL-NEXT: dpc.mul
  %f1 = dpc.all_gather %w1 over @z3 ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<300xf32> -> tensor<600xf32>
  %f2 = dpc.all_gather %w2 over @z3 ["dp"] dim 0 {dpc.phase = #dpc.phase<forward>} : tensor<300xf32> -> tensor<600xf32>
  %y1 = dpc.mul %x, %f1 {dpc.phase = #dpc.phase<forward>} : (tensor<600xf32>, tensor<600xf32>) -> tensor<600xf32>
  %y2 = dpc.mul %y1, %f2 {dpc.phase = #dpc.phase<forward>} : (tensor<600xf32>, tensor<600xf32>) -> tensor<600xf32>
  %b1 = dpc.all_gather %w1 over @z3 ["dp"] dim 0 {dpc.phase = #dpc.phase<backward>} : tensor<300xf32> -> tensor<600xf32>
  %b2 = dpc.all_gather %w2 over @z3 ["dp"] dim 0 {dpc.phase = #dpc.phase<backward>} : tensor<300xf32> -> tensor<600xf32>
  %z2 = dpc.mul %y2, %b2 {dpc.phase = #dpc.phase<backward>} : (tensor<600xf32>, tensor<600xf32>) -> tensor<600xf32>
  %z1 = dpc.mul %z2, %b1 {dpc.phase = #dpc.phase<backward>} : (tensor<600xf32>, tensor<600xf32>) -> tensor<600xf32>
  return %z1 : tensor<600xf32>
}
