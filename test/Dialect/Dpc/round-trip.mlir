// RUN: dpc-opt %s | FileCheck %s
// RUN: dpc-opt %s | dpc-opt | FileCheck %s
// RUN: dpc-opt %s --mlir-print-op-generic | dpc-opt | FileCheck %s

// CHECK-LABEL: func.func @arguments
// CHECK-SAME: {dpc.input = "x"}
// CHECK-SAME: {dpc.param = "fc.weight"}
// CHECK-SAME: {dpc.state = "bn.running_mean"}
// CHECK-SAME: -> (tensor<4xf32> {dpc.output = "y"}, tensor<4xf32> {dpc.state = "bn.running_mean"})
func.func @arguments(%x: tensor<4xf32> {dpc.input = "x"},
                     %w: tensor<4xf32> {dpc.param = "fc.weight"},
                     %m: tensor<4xf32> {dpc.state = "bn.running_mean"})
    -> (tensor<4xf32> {dpc.output = "y"}, tensor<4xf32> {dpc.state = "bn.running_mean"}) {
  return %x, %m : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @constant
// CHECK: dpc.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: dpc.constant dense<3> : tensor<i64>
func.func @constant() -> (tensor<2xf32>, tensor<i64>) {
  %0 = dpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = dpc.constant dense<3> : tensor<i64>
  return %0, %1 : tensor<2xf32>, tensor<i64>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<2xi64>, %p: tensor<2xi1>) {
  // CHECK: dpc.neg %{{.*}} : tensor<2x3xf32>
  %0 = dpc.neg %x : tensor<2x3xf32>
  // CHECK: dpc.neg %{{.*}} : tensor<2xi64>
  %1 = dpc.neg %i : tensor<2xi64>
  // CHECK: dpc.abs
  %2 = dpc.abs %x : tensor<2x3xf32>
  // CHECK: dpc.exp
  %3 = dpc.exp %x : tensor<2x3xf32>
  // CHECK: dpc.log
  %4 = dpc.log %x : tensor<2x3xf32>
  // CHECK: dpc.sqrt
  %5 = dpc.sqrt %x : tensor<2x3xf32>
  // CHECK: dpc.rsqrt
  %6 = dpc.rsqrt %x : tensor<2x3xf32>
  // CHECK: dpc.reciprocal
  %7 = dpc.reciprocal %x : tensor<2x3xf32>
  // CHECK: dpc.tanh
  %8 = dpc.tanh %x : tensor<2x3xf32>
  // CHECK: dpc.sigmoid
  %9 = dpc.sigmoid %x : tensor<2x3xf32>
  // CHECK: dpc.relu
  %10 = dpc.relu %x : tensor<2x3xf32>
  // CHECK: dpc.erf
  %11 = dpc.erf %x : tensor<2x3xf32>
  // CHECK: dpc.not %{{.*}} : tensor<2xi1>
  %12 = dpc.not %p : tensor<2xi1>
  // CHECK: dpc.sin %{{.*}} : tensor<2x3xf32>
  %u0 = dpc.sin %x : tensor<2x3xf32>
  // CHECK: dpc.cos %{{.*}} : tensor<2x3xf32>
  %u1 = dpc.cos %x : tensor<2x3xf32>
  // CHECK: dpc.tan %{{.*}} : tensor<2x3xf32>
  %u2 = dpc.tan %x : tensor<2x3xf32>
  // CHECK: dpc.asin %{{.*}} : tensor<2x3xf32>
  %u3 = dpc.asin %x : tensor<2x3xf32>
  // CHECK: dpc.acos %{{.*}} : tensor<2x3xf32>
  %u4 = dpc.acos %x : tensor<2x3xf32>
  // CHECK: dpc.atan %{{.*}} : tensor<2x3xf32>
  %u5 = dpc.atan %x : tensor<2x3xf32>
  // CHECK: dpc.sinh %{{.*}} : tensor<2x3xf32>
  %u6 = dpc.sinh %x : tensor<2x3xf32>
  // CHECK: dpc.cosh %{{.*}} : tensor<2x3xf32>
  %u7 = dpc.cosh %x : tensor<2x3xf32>
  // CHECK: dpc.asinh %{{.*}} : tensor<2x3xf32>
  %u8 = dpc.asinh %x : tensor<2x3xf32>
  // CHECK: dpc.acosh %{{.*}} : tensor<2x3xf32>
  %u9 = dpc.acosh %x : tensor<2x3xf32>
  // CHECK: dpc.atanh %{{.*}} : tensor<2x3xf32>
  %u10 = dpc.atanh %x : tensor<2x3xf32>
  // CHECK: dpc.floor %{{.*}} : tensor<2x3xf32>
  %u11 = dpc.floor %x : tensor<2x3xf32>
  // CHECK: dpc.ceil %{{.*}} : tensor<2x3xf32>
  %u12 = dpc.ceil %x : tensor<2x3xf32>
  // CHECK: dpc.round %{{.*}} : tensor<2x3xf32>
  %u13 = dpc.round %x : tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<4x3xf32>, %y: tensor<3xf32>, %i: tensor<2xi32>,
                  %p: tensor<2xi1>) {
  // CHECK: dpc.add %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %0 = dpc.add %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.sub
  %1 = dpc.sub %y, %x : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.mul
  %2 = dpc.mul %i, %i : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  // CHECK: dpc.div
  %3 = dpc.div %x, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.pow
  %4 = dpc.pow %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.mod %{{.*}}, %{{.*}} {floor_mod} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %m0 = dpc.mod %x, %y {floor_mod} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.mod %{{.*}}, %{{.*}} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %m1 = dpc.mod %i, %i : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  // CHECK: dpc.max
  %5 = dpc.max %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.min
  %6 = dpc.min %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.and
  %7 = dpc.and %p, %p : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: dpc.or
  %8 = dpc.or %p, %p : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: dpc.compare ge, %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %9 = dpc.compare ge, %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  // CHECK: dpc.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %10 = dpc.select %9, %x, %y : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: dpc.cast %{{.*}} : tensor<4x3xf32> -> tensor<4x3xbf16>
  %11 = dpc.cast %x : tensor<4x3xf32> -> tensor<4x3xbf16>
  return
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<2x4x16xf32>, %b: tensor<16x8xf32>,
                        %img: tensor<2x3x8x8xf32>, %f: tensor<6x3x3x3xf32>,
                        %bias: tensor<6xf32>) {
  // CHECK: dpc.matmul %{{.*}}, %{{.*}} : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  %0 = dpc.matmul %a, %b : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: dpc.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %1 = dpc.conv2d %img, %f, %bias {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: dpc.conv2d %{{.*}}, %{{.*}} {
  %2 = dpc.conv2d %img, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x6x6xf32>
  return
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<2x3x8x8xf32>) {
  // CHECK: dpc.max_pool2d %{{.*}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  %0 = dpc.max_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  // CHECK: dpc.avg_pool2d %{{.*}} {ceil_mode, count_include_pad
  %1 = dpc.avg_pool2d %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode, count_include_pad}
      : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<4x8x2xf32>) {
  // CHECK: dpc.reduce_sum %{{.*}} [1] : tensor<4x8x2xf32> -> tensor<4x2xf32>
  %0 = dpc.reduce_sum %x [1] : tensor<4x8x2xf32> -> tensor<4x2xf32>
  // CHECK: dpc.reduce_mean %{{.*}} [0, 2] keep_dims : tensor<4x8x2xf32> -> tensor<1x8x1xf32>
  %1 = dpc.reduce_mean %x [0, 2] keep_dims : tensor<4x8x2xf32> -> tensor<1x8x1xf32>
  // CHECK: dpc.reduce_max %{{.*}} [] :
  %2 = dpc.reduce_max %x [] : tensor<4x8x2xf32> -> tensor<4x8x2xf32>
  // CHECK: dpc.reduce_min %{{.*}} [0, 1, 2] :
  %3 = dpc.reduce_min %x [0, 1, 2] : tensor<4x8x2xf32> -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @normalizations
func.func @normalizations(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>,
                          %img: tensor<2x3x4x4xf32>, %c: tensor<3xf32>) {
  // CHECK: dpc.softmax %{{.*}} {axis = 2 : i64} : tensor<2x4x8xf32>
  %0 = dpc.softmax %x {axis = 2 : i64} : tensor<2x4x8xf32>
  // CHECK: dpc.log_softmax %{{.*}} {axis = 0 : i64} : tensor<2x4x8xf32>
  %1 = dpc.log_softmax %x {axis = 0 : i64} : tensor<2x4x8xf32>
  // CHECK: dpc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %2 = dpc.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: dpc.layer_norm %{{.*}}, %{{.*}} {axis = 2 : i64, {{.*}}} : tensor<2x4x8xf32>, tensor<8xf32>{{$}}
  %3 = dpc.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4x8xf32>, tensor<8xf32>
  // CHECK: %result, %new_running_mean, %new_running_var, %batch_mean, %batch_var = dpc.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = {{.*}}, momentum = {{.*}}, training} : tensor<2x3x4x4xf32>, tensor<3xf32>
  %4:5 = dpc.batch_norm %img, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32, training}
      : tensor<2x3x4x4xf32>, tensor<3xf32>
  return
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<4x6xf32>, %ids: tensor<2x3xi64>) {
  // CHECK: dpc.reshape %{{.*}} : tensor<4x6xf32> -> tensor<2x12xf32>
  %0 = dpc.reshape %x : tensor<4x6xf32> -> tensor<2x12xf32>
  // CHECK: dpc.broadcast_to %{{.*}} : tensor<4x6xf32> -> tensor<3x4x6xf32>
  %1 = dpc.broadcast_to %x : tensor<4x6xf32> -> tensor<3x4x6xf32>
  // CHECK: dpc.transpose %{{.*}} [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %2 = dpc.transpose %x [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  // CHECK: dpc.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %3 = dpc.concat %x, %x {axis = 0 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  // CHECK: dpc.slice %{{.*}} {limit = array<i64: 4, 5>, start = array<i64: 1, 0>, stride = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<3x3xf32>
  %4 = dpc.slice %x {start = array<i64: 1, 0>, limit = array<i64: 4, 5>, stride = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<3x3xf32>
  // CHECK: dpc.split %{{.*}} {axis = 1 : i64} : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x4xf32>
  %5:2 = dpc.split %x {axis = 1 : i64} : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x4xf32>
  // CHECK: dpc.gather %{{.*}}[%{{.*}}] {axis = 0 : i64} : (tensor<4x6xf32>, tensor<2x3xi64>) -> tensor<2x3x6xf32>
  %6 = dpc.gather %x[%ids] {axis = 0 : i64} : (tensor<4x6xf32>, tensor<2x3xi64>) -> tensor<2x3x6xf32>
  return
}

// CHECK-LABEL: func.func @losses
func.func @losses(%logits: tensor<4x10xf32>, %labels: tensor<4xi64>,
                  %seq: tensor<2x10x8xf32>, %tokens: tensor<2x8xi32>,
                  %seed: tensor<i64>, %offset: tensor<i64>) {
  // CHECK: dpc.dropout %{{.*}}, %{{.*}}, %{{.*}} {ratio = 1.000000e-01 : f32, stream = 3 : i64} : tensor<4x10xf32>
  %0 = dpc.dropout %logits, %seed, %offset {ratio = 0.1 : f32, stream = 3 : i64} : tensor<4x10xf32>
  // CHECK: dpc.softmax_cross_entropy %{{.*}}, %{{.*}} mean {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %1 = dpc.softmax_cross_entropy %logits, %labels mean {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  // CHECK: dpc.softmax_cross_entropy %{{.*}}, %{{.*}} none {{.*}} -> tensor<2x8xf32>
  %2 = dpc.softmax_cross_entropy %seq, %tokens none {ignore_index = -1 : i64} : (tensor<2x10x8xf32>, tensor<2x8xi32>) -> tensor<2x8xf32>
  // CHECK: dpc.nll_loss %{{.*}}, %{{.*}} sum
  %3 = dpc.nll_loss %logits, %labels sum {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @upsampling
func.func @upsampling(%x: tensor<1x4x5x5xf32>, %f: tensor<4x3x3x3xf32>, %b: tensor<6xf32>) {
  // CHECK: dpc.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 2 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x10x10xf32>
  %0 = dpc.conv_transpose2d %x, %f, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, groups = 2 : i64}
      : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x10x10xf32>
  // CHECK: dpc.resize %{{.*}} {coordinate_mode = "asymmetric", mode = "nearest", nearest_mode = "floor", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<1x4x5x5xf32> -> tensor<1x4x10x10xf32>
  %1 = dpc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest", coordinate_mode = "asymmetric", nearest_mode = "floor"}
      : tensor<1x4x5x5xf32> -> tensor<1x4x10x10xf32>
  return
}

// CHECK-LABEL: func.func @gradients
func.func @gradients(%x: tensor<2x3x8x8xf32>, %g: tensor<2x6x4x4xf32>, %p: tensor<2x3x4x4xf32>,
                     %e: tensor<2x5x4xf32>, %ids: tensor<2x5xi64>) {
  // CHECK: dpc.resize_grad %{{.*}} {coordinate_mode = "half_pixel", mode = "linear", nearest_mode = "floor", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<2x6x4x4xf32> -> tensor<2x6x2x2xf32>
  %r = dpc.resize_grad %g {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_mode = "half_pixel", nearest_mode = "floor"} : tensor<2x6x4x4xf32> -> tensor<2x6x2x2xf32>
  // CHECK: dpc.conv2d_filter_grad %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xf32>, tensor<2x6x4x4xf32>) -> tensor<6x3x3x3xf32>
  %0 = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<2x6x4x4xf32>) -> tensor<6x3x3x3xf32>
  // CHECK: dpc.max_pool2d_grad %{{.*}}, %{{.*}} {{{.*}}} : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
  %1 = dpc.max_pool2d_grad %x, %p {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
  // CHECK: dpc.avg_pool2d_grad %{{.*}} {{{.*}}count_include_pad{{.*}}} : tensor<2x3x4x4xf32> -> tensor<2x3x8x8xf32>
  %2 = dpc.avg_pool2d_grad %p {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, count_include_pad}
      : tensor<2x3x4x4xf32> -> tensor<2x3x8x8xf32>
  // CHECK: dpc.pad %{{.*}} {high = array<i64: 0, 1, 0, 0>, interior = array<i64: 0, 0, 1, 1>, low = array<i64: 0, 2, 0, 0>, value = 0.000000e+00 : f64} : tensor<2x3x4x4xf32> -> tensor<2x6x7x7xf32>
  %3 = dpc.pad %p {low = array<i64: 0, 2, 0, 0>, high = array<i64: 0, 1, 0, 0>, interior = array<i64: 0, 0, 1, 1>, value = 0.0 : f64}
      : tensor<2x3x4x4xf32> -> tensor<2x6x7x7xf32>
  // CHECK: dpc.scatter_add %{{.*}}[%{{.*}}] {axis = 0 : i64} : (tensor<2x5x4xf32>, tensor<2x5xi64>) -> tensor<10x4xf32>
  %4 = dpc.scatter_add %e[%ids] {axis = 0 : i64} : (tensor<2x5x4xf32>, tensor<2x5xi64>) -> tensor<10x4xf32>
  return
}

// The plan: a mesh, shardings in every form and place, a reshard, phases
// and stages.
// CHECK: dpc.mesh @plan ["pp"=2, "dp"=2, "tp"=2]
// CHECK: dpc.mesh @pairs ["x"=2, "y"=2] devices = [1, 0, 3, 2]
dpc.mesh @plan ["pp"=2, "dp"=2, "tp"=2]
dpc.mesh @pairs ["x"=2, "y"=2] devices = [1, 0, 3, 2]

// CHECK-LABEL: func.func @planned
// CHECK-SAME: {dpc.sharding = #dpc.sharding<@plan, [dp, tp]>}
// CHECK-SAME: -> (tensor<f32> {dpc.sharding = #dpc.sharding<@plan, [], partial = [tp : sum, dp : mean]>})
func.func @planned(%x: tensor<4x8xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, tp]>})
    -> (tensor<f32> {dpc.sharding = #dpc.sharding<@plan, [], partial = [tp : sum, dp : mean]>}) {
  // CHECK: dpc.reshard %{{.*}} <@plan, [(dp, tp), *]> : tensor<4x8xf32>
  %0 = dpc.reshard %x <@plan, [(dp, tp), *]> : tensor<4x8xf32>
  // CHECK: dpc.neg %{{.*}} {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>], dpc.stage = 1 : i64}
  %1 = dpc.neg %0 {dpc.phase = #dpc.phase<forward>, dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>], dpc.stage = 1 : i64} : tensor<4x8xf32>
  // CHECK: dpc.split {{.*}}dpc.sharding = [#dpc.sharding<@pairs, [x, *]>, #dpc.sharding<@pairs, [*, y], partial = [x : max]>]
  %2:2 = dpc.split %1 {axis = 1 : i64, dpc.phase = #dpc.phase<backward>, dpc.sharding = [#dpc.sharding<@pairs, [x, *]>, #dpc.sharding<@pairs, [*, y], partial = [x : max]>]} : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  // CHECK: dpc.transfer %{{.*}} from 0 to 1 : tensor<4x4xf32>
  %t = dpc.transfer %2#1 from 0 to 1 : tensor<4x4xf32>
  // CHECK: dpc.reduce_sum {{.*}}dpc.operand_shardings = [#dpc.sharding<@plan, [dp, *]>], dpc.phase = #dpc.phase<optimizer>
  %3 = dpc.reduce_sum %2#0 [0, 1] {dpc.operand_shardings = [#dpc.sharding<@plan, [dp, *]>], dpc.phase = #dpc.phase<optimizer>} : tensor<4x4xf32> -> tensor<f32>
  return %3 : tensor<f32>
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<8x16xf32>) {
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["tp"] <sum> : tensor<8x16xf32>
  %0 = dpc.all_reduce %x over @plan ["tp"] <sum> : tensor<8x16xf32>
  // CHECK: dpc.reduce_scatter %{{.*}} over @plan ["tp", "dp"] <mean> dim 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  %1 = dpc.reduce_scatter %x over @plan ["tp", "dp"] <mean> dim 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  // CHECK: dpc.all_gather %{{.*}} over @plan ["dp"] dim 1 : tensor<8x16xf32> -> tensor<8x32xf32>
  %2 = dpc.all_gather %x over @plan ["dp"] dim 1 : tensor<8x16xf32> -> tensor<8x32xf32>
  // CHECK: dpc.all_to_all %{{.*}} over @plan ["pp", "tp"] split 1 concat 0 : tensor<8x16xf32> -> tensor<32x4xf32>
  %3 = dpc.all_to_all %x over @plan ["pp", "tp"] split 1 concat 0 : tensor<8x16xf32> -> tensor<32x4xf32>
  // CHECK: dpc.all_slice %{{.*}} over @plan ["tp"] dim 1 : tensor<8x16xf32> -> tensor<8x8xf32>
  %4 = dpc.all_slice %x over @plan ["tp"] dim 1 : tensor<8x16xf32> -> tensor<8x8xf32>
  // CHECK: %[[S:.*]] = dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> {async} : tensor<8x16xf32>
  // CHECK: dpc.wait %[[S]] : tensor<8x16xf32>
  %5 = dpc.all_reduce %x over @plan ["dp"] <sum> {async} : tensor<8x16xf32>
  %6 = dpc.wait %5 : tensor<8x16xf32>
  return
}

// CHECK-LABEL: func.func @point_to_point
func.func @point_to_point(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: dpc.send %{{.*}} over @plan ["pp"] shift 1 : tensor<8x16xf32>
  dpc.send %x over @plan ["pp"] shift 1 : tensor<8x16xf32>
  // CHECK: dpc.recv over @plan ["pp"] shift -1 : tensor<8x16xf32>
  %0 = dpc.recv over @plan ["pp"] shift -1 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @top_k
func.func @top_k(%g: tensor<64xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  // CHECK: dpc.top_k %{{.*}} k 4 : tensor<64xf32> -> tensor<4xf32>, tensor<4xi64>
  %v, %i = dpc.top_k %g k 4 : tensor<64xf32> -> tensor<4xf32>, tensor<4xi64>
  return %v, %i : tensor<4xf32>, tensor<4xi64>
}

// CHECK-LABEL: func.func @arg_reductions
func.func @arg_reductions(%x: tensor<4x8xf32>) -> (tensor<4xi64>, tensor<1x8xi64>) {
  // CHECK: dpc.argmax %{{.*}} axis 1 : tensor<4x8xf32> -> tensor<4xi64>
  %0 = dpc.argmax %x axis 1 : tensor<4x8xf32> -> tensor<4xi64>
  // CHECK: dpc.argmin %{{.*}} axis 0 keep_dims last : tensor<4x8xf32> -> tensor<1x8xi64>
  %1 = dpc.argmin %x axis 0 keep_dims last : tensor<4x8xf32> -> tensor<1x8xi64>
  return %0, %1 : tensor<4xi64>, tensor<1x8xi64>
}

// CHECK-LABEL: func.func @element_gather
func.func @element_gather(%x: tensor<3x4xf32>, %i: tensor<2x3xi64>) -> tensor<3x4xf32> {
  // CHECK: dpc.gather_elements %{{.*}}[%{{.*}}] {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %0 = dpc.gather_elements %x[%i] {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  // CHECK: dpc.scatter_add_elements %{{.*}}[%{{.*}}] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<3x4xf32>
  %1 = dpc.scatter_add_elements %0[%i] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @recurrent_layers
func.func @recurrent_layers(%x: tensor<5x2x3xf32>, %w4: tensor<16x3xf32>, %r4: tensor<16x4xf32>, %b4: tensor<32xf32>, %w3: tensor<12x3xf32>, %r3: tensor<12x4xf32>, %b3: tensor<24xf32>, %h: tensor<2x4xf32>, %n: tensor<2xi32>) -> (tensor<5x2x4xf32>, tensor<5x2x4xf32>) {
  // CHECK: dpc.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lengths %{{.*}} {reverse} : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xi32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %y, %hT, %cT = dpc.lstm %x, %w4, %r4, %b4, %h, %h lengths %n {reverse} : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xi32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  // CHECK: dpc.lstm_grad {{.*}} : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %g:6 = dpc.lstm_grad %x, %w4, %r4, %b4, %h, %h, %y, %hT, %cT : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  // CHECK: dpc.gru {{.*}} {linear_before_reset} : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>)
  %z, %zT = dpc.gru %x, %w3, %r3, %b3, %h {linear_before_reset} : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>)
  // CHECK: dpc.gru_grad {{.*}} lengths %{{.*}} {linear_before_reset, reverse}
  %k:5 = dpc.gru_grad %x, %w3, %r3, %b3, %h, %z, %zT lengths %n {linear_before_reset, reverse} : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2xi32>) -> (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>)
  return %y, %z : tensor<5x2x4xf32>, tensor<5x2x4xf32>
}
