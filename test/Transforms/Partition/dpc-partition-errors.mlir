// RUN: dpc-opt %s -dpc-partition -split-input-file -verify-diagnostics

// expected-error @+1 {{has no dpc.mesh: plan the step (--mesh) before partitioning it}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A value held whole on every rank is not a pending sum over an axis.
dpc.mesh @plan ["dp"=2]
func.func @replicated_to_sum(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*], partial = [dp : sum]>}) {
  // expected-error @+1 {{cannot make a value a pending sum over 'dp': it is not a partial sum there}}
  %0 = dpc.reshard %x <@plan, [*], partial = [dp : sum]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dpc.mesh @plan ["dp"=2]
func.func @unsharded_op(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  // expected-error @+1 {{'dpc.neg' op result #0 has no sharding: plan the step before partitioning it}}
  %0 = dpc.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Pipeline stages are told apart along the mesh's pp axis.
dpc.mesh @plan ["dp"=2]
// expected-error @+1 {{runs on pipeline stages, but its mesh has no 'pp' axis}}
func.func @second_stage(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>})
    -> (tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*]>}) {
  %0 = dpc.neg %x {dpc.stage = 1 : i64, dpc.sharding = [#dpc.sharding<@plan, [*]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Dropout's mask depends on each element's index in the whole tensor: a
// block split along a later dimension is not contiguous there.
dpc.mesh @plan ["dp"=2]
func.func @split_dropout(%x: tensor<4x4xf32> {dpc.sharding = #dpc.sharding<@plan, [*, dp]>},
                         %seed: tensor<i64> {dpc.sharding = #dpc.sharding<@plan, []>},
                         %offset: tensor<i64> {dpc.sharding = #dpc.sharding<@plan, []>})
    -> (tensor<4x4xf32> {dpc.sharding = #dpc.sharding<@plan, [*, dp]>}) {
  // expected-error @+1 {{'dpc.dropout' op with dimension 1 split is not partitioned yet}}
  %0 = dpc.dropout %x, %seed, %offset {ratio = 0.5 : f32, stream = 0 : i64, dpc.sharding = [#dpc.sharding<@plan, [*, dp]>]} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
