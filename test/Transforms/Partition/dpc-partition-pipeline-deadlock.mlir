// RUN: not dpc-opt %s -dpc-partition=schedule=gpipe -o /dev/null 2>&1 | FileCheck %s

// The second micro-batch's forward on stage 1 reads what the first
// micro-batch's backward makes on stage 0 (no plan does this; a hand-edited
// one can). GPipe runs every forward first, so stage 1 waits for a value
// stage 0 makes only after stage 1's own backward: the programs would wait
// on each other forever, and the pass says so instead of emitting them.
// CHECK: error: the gpipe schedule would deadlock: stage 0 waits for stage 1, stage 1 waits for stage 0
dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=1]
func.func private @fb(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
                      %w: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %h = dpc.mul %x, %w {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = dpc.mul %h, %w {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = dpc.mul %y, %w {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = dpc.mul %d, %x {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}
func.func @step(%x: tensor<4xf32> {dpc.input = "x", dpc.sharding = #dpc.sharding<@plan, [*]>},
                %w: tensor<4xf32> {dpc.param = "w", dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.output = "y", dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %a:2 = call @fb(%x, %w) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %b:2 = call @fb(%x, %a#1) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %b#0 : tensor<4xf32>
}
