// RUN: dpc-opt %s -dpc-compress-gradients=compression=bf16 | FileCheck %s
// RUN: dpc-opt %s -dpc-compress-gradients=compression=fp16 | FileCheck %s --check-prefix=FP16
// RUN: dpc-opt %s -dpc-compress-gradients | FileCheck %s --check-prefix=NONE
// RUN: not dpc-opt %s -dpc-compress-gradients=compression=topk -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: --grad-compression=topk is not a compression: none, bf16 or fp16

dpc.mesh @plan ["dp"=2, "tp"=2]
// CHECK-LABEL: func.func @reductions
// NONE-NOT: dpc.cast
func.func @reductions(%g: tensor<512xf32>, %h: tensor<8x4xf32>, %a: tensor<4x4xf32>, %n: tensor<f32>)
    -> (tensor<512xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) {
  // Gradients reduced over dp travel in bf16 and come back as f32.
  // CHECK: %[[C:.*]] = dpc.cast %{{.*}} : tensor<512xf32> -> tensor<512xbf16>
  // CHECK-NEXT: %[[R:.*]] = dpc.all_reduce %[[C]] over @plan ["dp"] <sum> : tensor<512xbf16>
  // CHECK-NEXT: dpc.cast %[[R]] : tensor<512xbf16> -> tensor<512xf32>
  // FP16: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<512xf16>
  %0 = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<512xf32>
  // CHECK: dpc.reduce_scatter %{{.*}} over @plan ["dp", "tp"] <mean> dim 0 : tensor<8x4xbf16> -> tensor<2x4xbf16>
  %1 = dpc.reduce_scatter %h over @plan ["dp", "tp"] <mean> dim 0 : tensor<8x4xf32> -> tensor<2x4xf32>
  %2 = dpc.reshape %1 : tensor<2x4xf32> -> tensor<2x4xf32>
  %3 = dpc.concat %2, %2 {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  // Tensor-parallel activations and scalar counts keep their precision.
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<4x4xf32>
  %4 = dpc.all_reduce %a over @plan ["tp"] <sum> : tensor<4x4xf32>
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<f32>
  %5 = dpc.all_reduce %n over @plan ["dp"] <sum> : tensor<f32>
  return %0, %3, %4, %5 : tensor<512xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>
}
