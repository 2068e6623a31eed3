// RUN: dpc-opt %s -dpc-outline-stages -split-input-file -verify-diagnostics | FileCheck %s
// RUN: dpc-opt %s -dpc-outline-stages -dpc-verify-shardings -split-input-file -verify-diagnostics -o /dev/null

// Two stages: each stage's forward and backward become a function, called
// in dependency order; the activation crosses forward and its gradient
// back in transfers; the constant every stage uses is copied into each
// function that reads it.
dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=1]
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32> {{.*}}, %[[W:.*]]: tensor<4xf32>
func.func @forward_backward(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
                            %w: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>},
        tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  // CHECK-NEXT: %[[H:.*]] = call @forward_backward.stage0.forward(%[[X]], %[[W]]) {dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 0 : i64}
  // CHECK-NEXT: %[[HT:.*]] = dpc.transfer %[[H]] from 0 to 1 {dpc.sharding = [#dpc.sharding<@plan, [*]>]}
  // CHECK-NEXT: %[[G:.*]] = call @forward_backward.stage1.forward(%[[HT]])
  // CHECK-NEXT: %[[DH:.*]] = call @forward_backward.stage1.backward(%[[G]])
  // CHECK-NEXT: %[[DHT:.*]] = dpc.transfer %[[DH]] from 1 to 0
  // CHECK-NEXT: %[[DW:.*]] = call @forward_backward.stage0.backward(%[[DHT]], %[[X]])
  // CHECK-NEXT: return %[[G]], %[[DW]]
  %c = "dpc.constant"() <{value = dense<2.0> : tensor<4xf32>}> {dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 0 : i64} : () -> tensor<4xf32>
  %h = dpc.mul %x, %w {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 0 : i64}
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = dpc.mul %h, %c {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 1 : i64}
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %dh = dpc.mul %g, %c {dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 1 : i64}
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %dw = dpc.mul %dh, %x {dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 0 : i64}
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g, %dw : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func private @forward_backward.stage0.forward
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}, %{{.*}}: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
// CHECK-SAME: attributes {dpc.phase = #dpc.phase<forward>, dpc.stage = 0 : i64}
// CHECK-NEXT: dpc.mul
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @forward_backward.stage1.forward
// CHECK-NEXT: dpc.constant
// CHECK-NEXT: dpc.mul
// CHECK-LABEL: func.func private @forward_backward.stage1.backward
// CHECK-SAME: attributes {dpc.phase = #dpc.phase<backward>, dpc.stage = 1 : i64}
// CHECK-NEXT: dpc.constant
// CHECK-NEXT: dpc.mul
// CHECK-LABEL: func.func private @forward_backward.stage0.backward

// -----

// Stage 1 needs stage 0's forward and stage 0 needs stage 1's: no order
// of the stages' functions runs.
dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=1]
// expected-error @+1 {{its pipeline stages depend on each other in a cycle}}
func.func @forward_backward(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %a = dpc.neg %x {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 0 : i64} : tensor<4xf32>
  %b = dpc.neg %a {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 1 : i64} : tensor<4xf32>
  %c = dpc.neg %b {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 0 : i64} : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

dpc.mesh @plan ["pp"=2, "dp"=1, "tp"=1]
func.func @forward_backward(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %a = dpc.neg %x {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [*]>], dpc.stage = 1 : i64} : tensor<4xf32>
  // expected-error @+1 {{'dpc.exp' op runs on every stage but reads a value made on stage 1; give it a dpc.stage}}
  %b = dpc.exp %a {dpc.sharding = [#dpc.sharding<@plan, [*]>]} : tensor<4xf32>
  return %b : tensor<4xf32>
}
