// RUN: dpc-opt %s -dpc-reduce-in-last-micro-batch | FileCheck %s
// RUN: dpc-opt %s -dpc-reduce-in-last-micro-batch -dpc-reduce-in-last-micro-batch -o /dev/null

dpc.mesh @plan ["pp"=2, "dp"=2]

// One micro-batch's backward: the head's gradient is made before the
// hidden layer's.
func.func @forward_backward(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>,
                            %h: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %y = dpc.matmul %x, %w {dpc.phase = #dpc.phase<forward>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %gh = dpc.exp %y {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  %gw = dpc.neg %gh {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  return %gw, %gh : tensor<8x8xf32>, tensor<8x8xf32>
}

// The second (last) call is inlined; each gradient's sum and its
// reduction follow that gradient inside the backward pass, the head's
// before the hidden layer's gradient is computed. The first call stays.
// CHECK-LABEL: func.func @train_step
// CHECK-NEXT: %[[G0:.*]]:2 = call @forward_backward(%arg0
// CHECK-NEXT: dpc.matmul %arg1, %arg2 {dpc.phase = #dpc.phase<forward>}
// CHECK-NEXT: %[[GH:.*]] = dpc.exp
// CHECK-NEXT: %[[SH:.*]] = dpc.add %[[G0]]#1, %[[GH]] {dpc.phase = #dpc.phase<optimizer>}
// CHECK-NEXT: %[[RH:.*]] = dpc.all_reduce %[[SH]] over @plan ["dp"] <sum>
// CHECK-NEXT: %[[GW:.*]] = dpc.neg %[[GH]]
// CHECK-NEXT: %[[SW:.*]] = dpc.add %[[G0]]#0, %[[GW]]
// CHECK-NEXT: %[[RW:.*]] = dpc.all_reduce %[[SW]] over @plan ["dp"] <sum>
// CHECK-NOT: call
// CHECK: return %[[RW]], %[[RH]]
func.func @train_step(%x0: tensor<8x8xf32>, %x1: tensor<8x8xf32>,
                      %w: tensor<8x8xf32>, %h: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a:2 = call @forward_backward(%x0, %w, %h) : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %b:2 = call @forward_backward(%x1, %w, %h) : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %sw = dpc.add %a#0, %b#0 {dpc.phase = #dpc.phase<optimizer>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %sh = dpc.add %a#1, %b#1 {dpc.phase = #dpc.phase<optimizer>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %rw = dpc.all_reduce %sw over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<optimizer>} : tensor<8x8xf32>
  %rh = dpc.all_reduce %sh over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<optimizer>} : tensor<8x8xf32>
  return %rw, %rh : tensor<8x8xf32>, tensor<8x8xf32>
}

// What stays: a reduction between pipeline stages (ordered against the
// stages' sends), a reduction of reduced values (a gradient norm waits for
// its gradients' reduction), and a pass's own reduction.
// CHECK-LABEL: func.func @stays
// CHECK-NEXT: %[[E:.*]] = dpc.exp %arg0
// CHECK-NEXT: %[[R:.*]] = dpc.all_reduce %[[E]] over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<optimizer>}
// CHECK-NEXT: dpc.neg %arg0
// CHECK-NEXT: %[[S:.*]] = dpc.reduce_sum %[[R]]
// CHECK-NEXT: dpc.neg %arg0
// CHECK-NEXT: dpc.all_reduce %[[S]] over @plan ["dp"]
// CHECK-NEXT: dpc.all_reduce %[[E]] over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<backward>}
// CHECK-NEXT: dpc.all_reduce %[[E]] over @plan ["pp"]
func.func @stays(%g: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = dpc.exp %g {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  %m = dpc.neg %g {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  %r = dpc.all_reduce %e over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<optimizer>} : tensor<8x8xf32>
  %s = dpc.reduce_sum %r [0, 1] {dpc.phase = #dpc.phase<optimizer>} : tensor<8x8xf32> -> tensor<f32>
  %n = dpc.neg %g {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  %norm = dpc.all_reduce %s over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<optimizer>} : tensor<f32>
  %own = dpc.all_reduce %e over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  %tied = dpc.all_reduce %e over @plan ["pp"] <sum> {dpc.phase = #dpc.phase<optimizer>} : tensor<8x8xf32>
  return %r, %tied, %norm, %own, %m, %n : tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// A stage's reduction moves up to its operand, but not ahead of a send to
// the next stage: the communication thread runs them in order, and the
// send is on the pipeline's critical path.
// CHECK-LABEL: func.func @stage
// CHECK-NEXT: %[[E:.*]] = dpc.exp %arg0
// CHECK-NEXT: dpc.send %[[E]] over @plan ["pp"] shift -1
// CHECK-NEXT: dpc.all_reduce %[[E]] over @plan ["dp"]
// CHECK-NEXT: dpc.neg %arg0
func.func @stage(%g: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = dpc.exp %g {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  dpc.send %e over @plan ["pp"] shift -1 {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  %n = dpc.neg %g {dpc.phase = #dpc.phase<backward>} : tensor<8x8xf32>
  %r = dpc.all_reduce %e over @plan ["dp"] <sum> {dpc.phase = #dpc.phase<optimizer>} : tensor<8x8xf32>
  return %r, %n : tensor<8x8xf32>, tensor<8x8xf32>
}

// A function calling itself is no micro-batch loop: nothing is inlined.
// CHECK-LABEL: func.func @recursive
// CHECK-NEXT: call @recursive
// CHECK-NEXT: call @recursive
func.func @recursive(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = call @recursive(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = call @recursive(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}
