// A malformed dpc.sharding is reported where it is written, naming what
// is wrong.
// RUN: split-file %s %t
// RUN: dpc-opt %t/axis.mlir --train --optimizer=sgd -o %t/axis.step.mlir
// RUN: not dpc-opt %t/axis.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: dpc-opt %t/rank.mlir --train --optimizer=sgd -o %t/rank.step.mlir
// RUN: not dpc-opt %t/rank.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: dpc-opt %t/count.mlir --train --optimizer=sgd -o %t/count.step.mlir
// RUN: not dpc-opt %t/count.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: dpc-opt %t/type.mlir --train --optimizer=sgd -o %t/type.step.mlir
// RUN: not dpc-opt %t/type.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: dpc-opt %t/twice.mlir --train --optimizer=sgd -o %t/twice.step.mlir
// RUN: not dpc-opt %t/twice.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=TWICE

// AXIS: error: argument 2 of @forward_backward: sharding '[*, mp]': 'mp' is not a mesh axis (expected dp, tp, dp+tp or *)
// RANK: error: 'dpc.matmul': result 0: sharding '[dp, *, tp]': it has 3 dimensions, the tensor 2
// COUNT: error: 'dpc.matmul': 'dpc.sharding' has 2 shardings for 1 results
// TYPE: error: 'dpc.matmul': 'dpc.sharding' must be a string or an array of strings, one per result
// TWICE: error: 'dpc.matmul': result 0: sharding '[dp, *] partial(dp)': axis dp is used more than once

//--- axis.mlir

func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w", dpc.sharding = "[*, mp]"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- rank.mlir
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = ["[dp, *, tp]"]} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- count.mlir
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = ["[dp, *]", "[dp, *]"]} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- type.mlir
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = 3 : i64} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- twice.mlir
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  // A lone string stands for the one result.
  %0 = dpc.matmul %x, %w {dpc.sharding = "[dp, *] partial(dp)"} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
