// RUN: dpc-opt %s -dpc-partition=schedule=1f1b | FileCheck %s

// A weight both stages read (a table tied to the output projection): the
// first stage keeps it and updates it, and sends it to the second as the
// step begins; the second reads what it receives, never its own argument,
// which the update does not reach.
// CHECK-LABEL: func.func @step.stage0
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {dpc.input = "x"{{.*}}}, %[[W0:.*]]: tensor<4xf32> {dpc.param = "w"
// CHECK-NEXT: dpc.send %[[W0]] over @plan ["pp"] shift 1 {dpc.phase = #dpc.phase<forward>
// CHECK: dpc.mul %{{.*}}, %[[W0]]
// CHECK: dpc.sub %[[W0]]
// CHECK-LABEL: func.func @step.stage1
// CHECK-SAME: %[[W1:arg1]]: tensor<4xf32> {dpc.param = "w"
// CHECK-NOT: %[[W1]]
// CHECK: %[[GOT:.*]] = dpc.recv over @plan ["pp"] shift 1 {{.*}} : tensor<4xf32>
// CHECK-NOT: %[[W1]]
// CHECK: dpc.mul %{{.*}}, %[[GOT]]
// CHECK-NOT: %[[W1]]
// CHECK: return
dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=1]
func.func private @fb(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
                      %w: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %h = dpc.mul %x, %w {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = dpc.mul %h, %w {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g1 = dpc.mul %h, %y {dpc.stage = 1 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g0 = dpc.mul %x, %y {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %gw = dpc.add %g0, %g1 {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %gw : tensor<4xf32>, tensor<4xf32>
}
func.func @step(%x: tensor<4xf32> {dpc.input = "x", dpc.sharding = #dpc.sharding<@plan, [*]>},
                %w: tensor<4xf32> {dpc.param = "w", dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.param = "w", dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.output = "y", dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %a:2 = call @fb(%x, %w) {dpc.sharding = [#dpc.sharding<@plan, [*]>, #dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %n = dpc.sub %w, %a#1 {dpc.stage = 0 : i64, dpc.phase = #dpc.phase<optimizer>, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n, %a#0 : tensor<4xf32>, tensor<4xf32>
}
