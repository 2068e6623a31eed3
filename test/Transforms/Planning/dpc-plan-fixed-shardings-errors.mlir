// A dpc.sharding the planner cannot honour is reported where it is
// written, naming what is wrong. (Shardings that are not valid at all —
// unknown axes, wrong rank, axes used twice — are the verifier's: see
// test/Dialect/Dpc/invalid.mlir; they stop at the file's own line here.)
// RUN: split-file %s %t
// RUN: dpc-opt %t/axis.mlir --train --optimizer=sgd -o %t/axis.step.mlir
// RUN: not dpc-opt %t/axis.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: dpc-opt %t/order.mlir --train --optimizer=sgd -o %t/order.step.mlir
// RUN: not dpc-opt %t/order.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: dpc-opt %t/mesh.mlir --train --optimizer=sgd -o %t/mesh.step.mlir
// RUN: not dpc-opt %t/mesh.step.mlir -dpc-plan="mesh=4" 2>&1 | FileCheck %s --check-prefix=MESH
// RUN: not dpc-opt %t/invalid.mlir --train --optimizer=sgd 2>&1 | FileCheck %s --check-prefix=INVALID
// A fixed sharding no configuration gives is reported at its op.
// RUN: dpc-opt %t/conflict.mlir --train --optimizer=sgd -o %t/conflict.step.mlir
// RUN: not dpc-opt %t/conflict.step.mlir -dpc-plan="mesh=4 tp=1" 2>&1 | FileCheck %s --check-prefix=CONFLICT

// AXIS: error: argument 2 of @forward_backward: the planner places values on the axes 'dp' and 'tp' of @plan; 'mp' is not one of them
// ORDER: error: 'dpc.matmul': result 0: the planner splits a dimension over (dp, tp), data-parallel major, not (tp, dp)
// MESH: error: 'dpc.matmul': result 0: the planner plans on mesh @plan, not @pairs
// INVALID: invalid.mlir:6:8: error: 'dpc.matmul' op result #0: sharding #dpc.sharding<@plan, [dp, *, tp]> has 3 dimensions for a value of type 'tensor<8x16xf32>' (C3)

// CONFLICT: conflict.step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: no configuration gives the shardings fixed in the IR: the sharding [dp, tp] fixed on 'dpc.matmul'
// CONFLICT-NEXT: dpc.matmul

//--- axis.mlir
dpc.mesh @plan ["dp"=1, "mp"=4]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w", dpc.sharding = #dpc.sharding<@plan, [*, mp]>})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- order.mlir
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [(tp, dp), *]>]} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- mesh.mlir
dpc.mesh @pairs ["dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@pairs, [dp, *]>]} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- invalid.mlir
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [dp, *, tp]>]} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- conflict.mlir
dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]
func.func @forward(%x: tensor<8x64xf32> {dpc.input = "x"},
                   %labels: tensor<8xi64> {dpc.input = "labels"},
                   %w: tensor<64x16xf32> {dpc.param = "w"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]} : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %loss = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64}
      : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
