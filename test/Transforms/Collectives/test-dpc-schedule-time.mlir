// RUN: dpc-opt %s -test-dpc-schedule-time="cluster=h100-sxm" | FileCheck %s
// RUN: dpc-opt %s -test-dpc-schedule-time="cluster=cpu-host" | FileCheck %s --check-prefix=CPU
// RUN: not dpc-opt %s -test-dpc-schedule-time="cluster=nowhere" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: --cluster=nowhere:

// A gradient's all-reduce started before a large contraction and waited
// for after it is hidden: the compute stream never waits. Waited for at
// once, all of it is exposed. Two collectives in a row share the one
// communication thread: the second starts when the first ends.
//
// On GPUs communication has engines of its own and hides for free; on a
// CPU host Gloo's copies and reductions take the cores the compute runs on
// (cpu-host's overlap is 0.15), so the matmul that hides the all-reduce
// runs longer by 0.85 of it (`contention`). A collective waited for before
// the compute overlaps nothing and costs no contention.

dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=2]

// CHECK-LABEL: func.func @hidden
// CHECK-SAME: contention = 0.000000e+00 : f64, exposed = 0.000000e+00 : f64
// CHECK-SAME: tp_communication = 0.000000e+00 : f64, tp_exposed = 0.000000e+00 : f64
// CPU-LABEL: func.func @hidden
// CPU-SAME: contention = {{[1-9][^ ]*}} : f64, exposed = 0.000000e+00 : f64
func.func @hidden(%a: tensor<2048x2048xf32>, %g: tensor<1024xf32>)
    -> (tensor<2048x2048xf32>, tensor<1024xf32>) attributes {dpc.partitioned} {
  %r = dpc.all_reduce %g over @plan ["dp"] <sum> {async} : tensor<1024xf32>
  %m = dpc.matmul %a, %a : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %w = dpc.wait %r : tensor<1024xf32>
  return %m, %w : tensor<2048x2048xf32>, tensor<1024xf32>
}

// CHECK-LABEL: func.func @exposed
// CHECK-SAME: communication = [[C:[^ ]+]] : f64, compute = {{[^ ]+}} : f64, contention = 0.000000e+00 : f64, exposed = [[C]] : f64
// CHECK-SAME: tp_communication = [[C]] : f64, tp_exposed = [[C]] : f64
// CPU-LABEL: func.func @exposed
// CPU-SAME: contention = 0.000000e+00 : f64
func.func @exposed(%a: tensor<2048x2048xf32>, %g: tensor<1024xf32>)
    -> (tensor<2048x2048xf32>, tensor<1024xf32>) attributes {dpc.partitioned} {
  %r = dpc.all_reduce %g over @plan ["tp"] <sum> {async} : tensor<1024xf32>
  %w = dpc.wait %r : tensor<1024xf32>
  %m = dpc.matmul %a, %a : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %m, %w : tensor<2048x2048xf32>, tensor<1024xf32>
}

// The second all-reduce queues behind the first, so waiting for it
// exposes both (the matmul is on the other side of the waits).
// CHECK-LABEL: func.func @queued
// CHECK-SAME: communication = [[Q:[^ ]+]] : f64, compute = {{[^ ]+}} : f64, contention = 0.000000e+00 : f64, exposed = [[Q]] : f64
func.func @queued(%a: tensor<2048x2048xf32>, %g: tensor<1024xf32>, %h: tensor<1024xf32>)
    -> (tensor<2048x2048xf32>, tensor<1024xf32>, tensor<1024xf32>) attributes {dpc.partitioned} {
  %r = dpc.all_reduce %g over @plan ["dp"] <sum> {async} : tensor<1024xf32>
  %s = dpc.all_reduce %h over @plan ["dp"] <sum> {async} : tensor<1024xf32>
  %v = dpc.wait %s : tensor<1024xf32>
  %w = dpc.wait %r : tensor<1024xf32>
  %m = dpc.matmul %a, %a : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %m, %w, %v : tensor<2048x2048xf32>, tensor<1024xf32>, tensor<1024xf32>
}
