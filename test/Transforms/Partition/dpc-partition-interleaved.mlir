// RUN: dpc-opt %s -dpc-partition | FileCheck %s
// RUN: not dpc-opt %s -dpc-partition=schedule=1f1b -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE-CHUNK

// ONE-CHUNK: error: the 1f1b schedule cannot run a plan of 2 model chunks per stage: interleaved-1f1b runs several, gpipe and 1f1b one

// Two stages of two chunks each (the plan's `chunks`): four pipeline
// positions, h0 = x*w (0), h1 = h0*w (1), h2 = h1*w (2), y = h2*w (3), the
// gradients back from 3 to 0. Position k runs on stage k % 2. `%r`
// recomputes a forward value for the backward pass (it reads no gradient)
// and is read on position 3: it runs there, not on position 2 (which
// would send it to a later position during the backward pass).
module attributes {dpc.plan = {chunks = 2 : i64, pp = 2 : i64, schedule = "interleaved-1f1b"}} {
dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=1]
func.func private @fb(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
                      %w: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %h0 = dpc.mul %x, %w {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h1 = dpc.sub %h0, %w {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h2 = dpc.add %h1, %w {dpc.stage = 2 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = dpc.div %h2, %w {dpc.stage = 3 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d2 = dpc.max %y, %w {dpc.stage = 3 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = dpc.exp %h1 {dpc.stage = 2 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : tensor<4xf32>
  %e = dpc.mul %r, %d2 {dpc.stage = 3 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d1 = dpc.min %d2, %h1 {dpc.stage = 2 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d0 = dpc.pow %d1, %h0 {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = dpc.mul %d0, %x {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %g, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
func.func @step(%x: tensor<4xf32> {dpc.input = "x", dpc.sharding = #dpc.sharding<@plan, [*]>},
                %w: tensor<4xf32> {dpc.param = "w", dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.output = "g", dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.output = "e", dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %a:3 = call @fb(%x, %w) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %b:3 = call @fb(%x, %w) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %g = dpc.add %a#1, %b#1 {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = dpc.add %a#2, %b#2 {dpc.stage = 3 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g, %e : tensor<4xf32>, tensor<4xf32>
}
}

// Stage 0 (positions 0 and 2): four forwards (Megatron-LM's warm-up of
// 2 * (pp - 1 - stage) + (chunks - 1) * pp), then the backwards, chunk 1
// (position 2) before chunk 0.
// The weight every position reads is stage 0's (it updates it): sent to
// stage 1 with the first micro-batch's forward pass.
// CHECK-LABEL: func.func @step.stage0
// CHECK: dpc.send %arg1 over @plan ["pp"] shift 1
// CHECK: %[[H0A:.*]] = dpc.mul %arg0, %arg1 {{.*}}dpc.stage = 0
// CHECK-NEXT: dpc.send %[[H0A]] over @plan ["pp"] shift 1
// CHECK: %[[H0B:.*]] = dpc.mul %arg0, %arg1
// CHECK-NEXT: dpc.send %[[H0B]]
// CHECK: %[[H1A:.*]] = dpc.recv
// CHECK-NEXT: %[[H2A:.*]] = dpc.add %[[H1A]], %arg1
// CHECK-NEXT: dpc.send %[[H2A]]
// CHECK: %[[H1B:.*]] = dpc.recv
// CHECK-NEXT: %[[H2B:.*]] = dpc.add %[[H1B]], %arg1
// CHECK-NEXT: dpc.send %[[H2B]]
// CHECK: dpc.min %{{.*}}, %[[H1A]]
// CHECK: dpc.min %{{.*}}, %[[H1B]]
// CHECK: dpc.mul %{{.*}}, %arg0
// CHECK: dpc.mul %{{.*}}, %arg0
// CHECK-NOT: dpc.exp
// CHECK: return
// Stage 1 (positions 1 and 3): two forwards of chunk 0, then chunk 1's
// forward and backward in turn; the recomputed exp runs here.
// CHECK-LABEL: func.func @step.stage1
// CHECK: %[[W:.*]] = dpc.recv over @plan ["pp"] shift 1
// CHECK-NEXT: %[[H0A:.*]] = dpc.recv over @plan ["pp"] shift 1
// CHECK-NEXT: %[[H1A:.*]] = dpc.sub %[[H0A]], %[[W]] {{.*}}dpc.stage = 1
// CHECK-NEXT: dpc.send %[[H1A]] over @plan ["pp"] shift -1
// CHECK: %[[H1B:.*]] = dpc.sub
// CHECK: %[[YA:.*]] = dpc.div
// CHECK-NEXT: %[[D2A:.*]] = dpc.max %[[YA]], %[[W]]
// CHECK-NEXT: dpc.send %[[D2A]]
// CHECK-NEXT: %[[RA:.*]] = dpc.exp %[[H1A]]
// CHECK-NEXT: dpc.mul %[[RA]], %[[D2A]]
// CHECK-NEXT: dpc.recv
// CHECK-NEXT: %[[YB:.*]] = dpc.div
// CHECK-NEXT: %[[D2B:.*]] = dpc.max %[[YB]], %[[W]]
// CHECK: dpc.exp %[[H1B]]
// CHECK: dpc.pow %{{.*}}, %[[H0A]]
// CHECK: dpc.pow
// CHECK: return
