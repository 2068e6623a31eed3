// RUN: dpc-opt %s -dpc-mixed-precision=precision=bf16 | FileCheck %s
// RUN: dpc-opt %s -dpc-mixed-precision=precision=fp16 -dpc-differentiate=loss-scale=true | FileCheck %s --check-prefix=SCALED
// RUN: dpc-opt %s -dpc-mixed-precision=precision=fp16 -dpc-differentiate=loss-scale=true -dpc-build-train-step | FileCheck %s --check-prefix=STEP
// RUN: not dpc-opt %s -dpc-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=BAD

// Matmuls and elementwise ops compute in bf16; the parameter (the f32
// master weight) is cast once however often it is read; softmax and the
// loss compute in f32; results keep their declared types.
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x3xf32> {dpc.input = "x"}, %[[W:[a-z0-9]+]]: tensor<3x3xf32> {dpc.param = "w"}
// CHECK-DAG:   %[[XB:[0-9]+]] = dpc.cast %[[X]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK-DAG:   %[[WB:[0-9]+]] = dpc.cast %[[W]] : tensor<3x3xf32> -> tensor<3x3xbf16>
// CHECK:       %[[H:[0-9]+]] = dpc.matmul %[[XB]], %[[WB]] : (tensor<4x3xbf16>, tensor<3x3xbf16>) -> tensor<4x3xbf16>
// CHECK:       %[[R:[0-9]+]] = dpc.relu %[[H]] : tensor<4x3xbf16>
// CHECK:       %[[Y:[0-9]+]] = dpc.matmul %[[R]], %[[WB]] : (tensor<4x3xbf16>, tensor<3x3xbf16>) -> tensor<4x3xbf16>
// CHECK:       %[[YF:[0-9]+]] = dpc.cast %[[Y]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK:       %[[P:[0-9]+]] = dpc.softmax %[[YF]] {axis = 1 : i64} : tensor<4x3xf32>
// CHECK:       %[[L:[0-9]+]] = dpc.softmax_cross_entropy %[[YF]], %{{.*}} mean {{.*}} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK:       return %[[L]], %[[P]]
func.func @forward(%x: tensor<4x3xf32> {dpc.input = "x"}, %w: tensor<3x3xf32> {dpc.param = "w"},
                   %labels: tensor<4xi64> {dpc.input = "labels"})
    -> (tensor<f32> {dpc.output = "loss"}, tensor<4x3xf32> {dpc.output = "probs"}) {
  %0 = dpc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %1 = dpc.relu %0 : tensor<4x3xf32>
  %2 = dpc.matmul %1, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %3 = dpc.softmax %2 {axis = 1 : i64} : tensor<4x3xf32>
  %4 = dpc.softmax_cross_entropy %2, %labels mean {ignore_index = -100 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %4, %3 : tensor<f32>, tensor<4x3xf32>
}

// With loss scaling the adjoint starts at the loss_scale argument, and the
// gradient of the f32 parameter comes back through its cast as f32.
// SCALED-LABEL: func.func @forward_backward
// SCALED-SAME:    %[[SCALE:[a-z0-9]+]]: tensor<f32> {dpc.hyper = "loss_scale"})
// SCALED-SAME:    tensor<3x3xf32> {dpc.grad = "w"}
// SCALED:         dpc.div %[[SCALE]], %{{.*}}
// SCALED:         dpc.cast %{{.*}} : tensor<3x3xf16> -> tensor<3x3xf32>

// The step keeps the scale as optimizer state and reports skipped steps;
// an overflow (the squared norm minus itself is not 0) keeps the weight.
// STEP-LABEL: func.func @train_step
// STEP-SAME:    %[[W:[a-z0-9]+]]: tensor<3x3xf32> {dpc.param = "w"}, %[[SCALE:[a-z0-9]+]]: tensor<f32> {dpc.opt_state = "amp:loss_scale"}, %{{.*}}: tensor<f32> {dpc.opt_state = "amp:growth_tracker"}
// STEP-SAME:    -> (tensor<3x3xf32> {dpc.param = "w"}, tensor<f32> {dpc.opt_state = "amp:loss_scale"}, tensor<f32> {dpc.opt_state = "amp:growth_tracker"}, tensor<f32> {dpc.output = "loss"}, tensor<f32> {dpc.output = "grad_norm"}, tensor<f32> {dpc.output = "skipped"})
// STEP:         call @forward_backward(%{{.*}}, %[[W]], %{{.*}}, %[[SCALE]])
// STEP:         %[[FINITE:[0-9]+]] = dpc.compare eq
// STEP:         dpc.select %[[FINITE]], %{{.*}}, %[[W]]

// BAD: unknown precision 'fp8'; use bf16 or fp16
