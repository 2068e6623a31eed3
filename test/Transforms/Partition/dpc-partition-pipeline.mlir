// RUN: dpc-opt %s -dpc-partition=schedule=1f1b | FileCheck %s --check-prefix=ONEF
// RUN: dpc-opt %s -dpc-partition=schedule=gpipe | FileCheck %s --check-prefix=GPIPE
// RUN: not dpc-opt %s -dpc-partition=schedule=zigzag -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: pipeline schedule 'zigzag' is not built: gpipe, 1f1b or interleaved-1f1b

// Two stages, three micro-batches: h = x * w0 on stage 0, y = h * w1 on
// stage 1; the backward sends dh back. Each stage gets its own program:
// its ops, h sent forward and dh back over pp, its own results.
dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=1]
func.func private @fb(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
                      %w0: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
                      %w1: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %h = dpc.mul %x, %w0 {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = dpc.mul %h, %w1 {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g1 = dpc.mul %h, %y {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %dh = dpc.mul %w1, %y {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g0 = dpc.mul %x, %dh {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %g0, %g1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// ONEF-NOT: func.func private @fb
// ONEF-LABEL: func.func @step.stage0
// ONEF-SAME: -> (tensor<4xf32> {dpc.param = "w0", dpc.sharding = #dpc.sharding<@plan, [*]>})
// ONEF-SAME: attributes {dpc.partitioned, dpc.pipeline_stage = 0 : i64}
// 1F1B on the first of two stages: one forward ahead, then forward and
// backward in turn.
// ONEF: %[[H0:.*]] = dpc.mul
// ONEF-NEXT: dpc.send %[[H0]] over @plan ["pp"] shift 1
// ONEF: %[[H1:.*]] = dpc.mul
// ONEF-NEXT: dpc.send %[[H1]] over @plan ["pp"] shift 1
// ONEF: %[[D0:.*]] = dpc.recv over @plan ["pp"] shift -1
// ONEF-NEXT: dpc.mul %{{.*}}, %[[D0]]
// ONEF-NEXT: %[[H2:.*]] = dpc.mul
// ONEF-NEXT: dpc.send %[[H2]] over @plan ["pp"] shift 1
// ONEF: dpc.recv over @plan ["pp"] shift -1
// ONEF: dpc.recv over @plan ["pp"] shift -1
// ONEF-LABEL: func.func @step.stage1
// ONEF-SAME: -> (tensor<4xf32> {dpc.param = "w1", dpc.sharding = #dpc.sharding<@plan, [*]>}, tensor<4xf32> {dpc.output = "y", dpc.sharding = #dpc.sharding<@plan, [*]>})
// ONEF-SAME: attributes {dpc.partitioned, dpc.pipeline_stage = 1 : i64}
// ONEF: dpc.recv over @plan ["pp"] shift 1
// ONEF: dpc.send %{{.*}} over @plan ["pp"] shift -1
// ONEF: dpc.recv over @plan ["pp"] shift 1
// ONEF: dpc.send %{{.*}} over @plan ["pp"] shift -1
// ONEF: dpc.recv over @plan ["pp"] shift 1
// ONEF: dpc.send %{{.*}} over @plan ["pp"] shift -1
// GPipe: every forward first.
// GPIPE-LABEL: func.func @step.stage0
// GPIPE: dpc.send %{{.*}} over @plan ["pp"] shift 1
// GPIPE: dpc.send %{{.*}} over @plan ["pp"] shift 1
// GPIPE: dpc.send %{{.*}} over @plan ["pp"] shift 1
// GPIPE: dpc.recv over @plan ["pp"] shift -1
// GPIPE: dpc.recv over @plan ["pp"] shift -1
// GPIPE: dpc.recv over @plan ["pp"] shift -1
// GPIPE-LABEL: func.func @step.stage1
func.func @step(%x: tensor<4xf32> {dpc.input = "x", dpc.sharding = #dpc.sharding<@plan, [*]>},
                %w0: tensor<4xf32> {dpc.param = "w0", dpc.sharding = #dpc.sharding<@plan, [*]>},
                %w1: tensor<4xf32> {dpc.param = "w1", dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.param = "w0", dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.param = "w1", dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.output = "y", dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %a:3 = call @fb(%x, %w0, %w1) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %b:3 = call @fb(%x, %w0, %w1) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %c:3 = call @fb(%x, %w0, %w1) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %s0 = dpc.add %a#1, %b#1 {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t0 = dpc.add %s0, %c#1 {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n0 = dpc.sub %w0, %t0 {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s1 = dpc.add %a#2, %b#2 {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t1 = dpc.add %s1, %c#2 {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n1 = dpc.sub %w1, %t1 {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n0, %n1, %c#0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
