// RUN: dpc-opt %s -dpc-differentiate -dpc-build-train-step="optimizer=adamw weight-decay=0.01" | FileCheck %s --check-prefix=ADAMW
// RUN: dpc-opt %s -dpc-differentiate -dpc-build-train-step="optimizer=momentum nesterov=true max-grad-norm=1.0" | FileCheck %s --check-prefix=MOMENTUM
// RUN: dpc-opt %s -dpc-differentiate -dpc-build-train-step="micro-batches=2" | FileCheck %s --check-prefix=ACCUMULATE
// RUN: not dpc-opt %s -dpc-differentiate -dpc-build-train-step="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

func.func @forward(%x: tensor<4x3xf32> {dpc.input = "x"}, %w: tensor<3x2xf32> {dpc.param = "w"},
                   %labels: tensor<4xi64> {dpc.input = "labels"})
    -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = dpc.softmax_cross_entropy %0, %labels mean {ignore_index = -100 : i64} : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
  return %1 : tensor<f32>
}

// train_step(params, opt_state, state, batch..., lr, step).
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: (%[[W:.*]]: tensor<3x2xf32> {dpc.param = "w"}, %[[M:.*]]: tensor<3x2xf32> {dpc.opt_state = "w:exp_avg"}, %[[V:.*]]: tensor<3x2xf32> {dpc.opt_state = "w:exp_avg_sq"}, %{{.*}}: tensor<4x3xf32> {dpc.input = "x"}, %{{.*}}: tensor<4xi64> {dpc.input = "labels"}, %[[LR:.*]]: tensor<f32> {dpc.hyper = "lr"}, %[[STEP:.*]]: tensor<f32> {dpc.hyper = "step"})
// ADAMW-SAME: -> (tensor<3x2xf32> {dpc.param = "w"}, tensor<3x2xf32> {dpc.opt_state = "w:exp_avg"}, tensor<3x2xf32> {dpc.opt_state = "w:exp_avg_sq"}, tensor<f32> {dpc.output = "loss"}, tensor<f32> {dpc.output = "grad_norm"})
// ADAMW:      %[[CALL:.*]]:2 = call @forward_backward
// Decoupled decay scales the parameter first: w * (1 - lr * 0.01).
// ADAMW:      dpc.constant {{.*}}dense<0.00999999977>{{.*}} : tensor<f32>
// ADAMW:      %[[DECAY:.*]] = dpc.mul %{{.*}}, %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// ADAMW:      %[[KEEP:.*]] = dpc.sub %{{.*}}, %[[DECAY]]
// ADAMW:      dpc.mul %[[W]], %[[KEEP]]
// The bias corrections 1 - beta^step are computed in f64.
// ADAMW:      %[[STEP64:.*]] = dpc.cast %{{.*}} : tensor<f32> -> tensor<f64>
// ADAMW:      dpc.pow %{{.*}}, %[[STEP64]]{{.*}} : (tensor<f64>, tensor<f64>) -> tensor<f64>

// MOMENTUM-LABEL: func.func @train_step
// MOMENTUM-SAME: {dpc.opt_state = "w:momentum_buffer"}
// Clipping: min(1, max_norm / (norm + 1e-6)) scales every gradient.
// MOMENTUM:      %[[NORM:.*]] = dpc.sqrt
// MOMENTUM:      dpc.add %[[NORM]], %{{.*}}
// MOMENTUM:      dpc.min
// MOMENTUM:      return

// The step takes both micro-batches of 4 samples along a leading
// dimension; micro-batch k is its row k.
// ACCUMULATE-LABEL: func.func @train_step
// ACCUMULATE-SAME:  tensor<2x4x3xf32> {dpc.input = "x"}, %{{.*}}: tensor<2x4xi64> {dpc.input = "labels"}
// ACCUMULATE:      %[[ROW0:.*]] = dpc.slice %{{.*}} {dpc.phase = #dpc.phase<optimizer>, limit = array<i64: 1, 4, 3>, start = array<i64: 0, 0, 0>, stride = array<i64: 1, 1, 1>} : tensor<2x4x3xf32> -> tensor<1x4x3xf32>
// ACCUMULATE:      dpc.reshape %[[ROW0]] {{.*}}: tensor<1x4x3xf32> -> tensor<4x3xf32>
// ACCUMULATE:      call @forward_backward
// ACCUMULATE:      %[[ROW1:.*]] = dpc.slice %{{.*}} {dpc.phase = #dpc.phase<optimizer>, limit = array<i64: 2, 4, 3>, start = array<i64: 1, 0, 0>, stride = array<i64: 1, 1, 1>} : tensor<2x4x3xf32> -> tensor<1x4x3xf32>
// ACCUMULATE:      dpc.reshape %[[ROW1]] {{.*}}: tensor<1x4x3xf32> -> tensor<4x3xf32>
// ACCUMULATE:      call @forward_backward
// ACCUMULATE:      dpc.constant {{.*}}dense<2.000000e+00>{{.*}} : tensor<f32>

// UNKNOWN: error: unknown optimizer 'lamb'; use sgd, momentum, adam or adamw
