// RUN: dpc-opt %s -test-dpc-sharding-rules | FileCheck %s

// CHECK-LABEL: func.func @rules
func.func @rules(%a: tensor<2x4x16xf32>, %b: tensor<16x8xf32>, %v: tensor<8xf32>,
                 %x: tensor<2x4x8xf32>, %g: tensor<8xf32>) {
  // Batch and rows of lhs, columns of rhs are parallel; k is summed away.
  // CHECK: dpc.matmul {{.*}}dpc.sharding_rule = "([a,b,d],[d,c])->([a,b,c]) {a=2, b=4, c=8, d=16 reduction}"
  %0 = dpc.matmul %a, %b : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  // A broadcast operand indexes only the trailing factor.
  // CHECK: dpc.add {{.*}}dpc.sharding_rule = "([a,b,c],[c])->([a,b,c]) {a=2, b=4, c=8}"
  %1 = dpc.add %0, %v : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // A size-1 dimension broadcast against a larger one maps to no factor.
  // CHECK: dpc.reduce_sum {{.*}}dpc.sharding_rule = "([a,b,c])->([a,_,c]) {a=2, b=4 reduction, c=8}"
  %2 = dpc.reduce_sum %1 [1] keep_dims : tensor<2x4x8xf32> -> tensor<2x1x8xf32>
  // CHECK: dpc.sub {{.*}}dpc.sharding_rule = "([a,b,c],[a,_,c])->([a,b,c]) {a=2, b=4, c=8}"
  %3 = dpc.sub %1, %2 : (tensor<2x4x8xf32>, tensor<2x1x8xf32>) -> tensor<2x4x8xf32>
  // The softmax axis must stay whole.
  // CHECK: dpc.softmax {{.*}}dpc.sharding_rule = "([a,b,c])->([a,b,c]) {a=2, b=4, c=8 whole}"
  %4 = dpc.softmax %3 {axis = 2 : i64} : tensor<2x4x8xf32>
  // CHECK: dpc.layer_norm {{.*}}dpc.sharding_rule = "([a,b,c],[c],[c])->([a,b,c]) {a=2, b=4, c=8 whole}"
  %5 = dpc.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: dpc.transpose {{.*}}dpc.sharding_rule = "([a,b,c])->([c,a,b]) {a=2, b=4, c=8}"
  %6 = dpc.transpose %x [2, 0, 1] : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
  // Reshapes share the outermost factor of each group of dimensions whose
  // sizes multiply to the same; the inner ones stay whole.
  // CHECK: dpc.reshape {{.*}}dpc.sharding_rule = "([a,b,c])->([a,b,c,d]) {a=2, b=4, c=2, d=4 whole}"
  %7 = dpc.reshape %x : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  // CHECK: dpc.reshape {{.*}}dpc.sharding_rule = "([a,b,c])->([a,c]) {a=2, b=4 whole, c=8}"
  %8 = dpc.reshape %x : tensor<2x4x8xf32> -> tensor<8x8xf32>
  // CHECK: dpc.split {{.*}}dpc.sharding_rule = "([a,b,c])->([a,b,_],[a,b,_]) {a=2, b=4, c=8 whole}"
  %9:2 = dpc.split %x {axis = 2 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>, tensor<2x4x4xf32>
  return
}

// CHECK-LABEL: func.func @more_rules
func.func @more_rules(%t: tensor<50x8xf32>, %ids: tensor<2x4xi64>,
                      %l: tensor<8x10xf32>, %y: tensor<8xi64>,
                      %img: tensor<2x3x8x8xf32>, %f: tensor<6x3x3x3xf32>,
                      %p: tensor<4xf32>, %gi: tensor<8x3xi64>) {
  // Splitting the table's rows leaves partial sums (vocabulary-parallel
  // embedding).
  // CHECK: dpc.gather {{.*}}dpc.sharding_rule = "([a,d],[b,c])->([b,c,d]) {a=50 reduction, b=2, c=4, d=8}"
  %0 = dpc.gather %t[%ids] {axis = 0 : i64} : (tensor<50x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  // Its adjoint sums over the tokens: split over them (data parallelism),
  // each rank adds its own into a partial table; the rows stay whole.
  // CHECK: dpc.scatter_add {{.*}}dpc.sharding_rule = "([b,c,d],[b,c])->([a,d]) {a=50 whole, b=2 reduction, c=4 reduction, d=8}"
  %sa = dpc.scatter_add %0[%ids] {axis = 0 : i64} : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> tensor<50x8xf32>
  // A mean loss split over its samples is a pending mean, a summed one a
  // pending sum: the reduction kind says how to finish it.
  // CHECK: dpc.softmax_cross_entropy {{.*}}dpc.sharding_rule = "([a,b],[a])->([]) {a=8 reduction(mean), b=10 whole}"
  %1 = dpc.softmax_cross_entropy %l, %y mean {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  // CHECK: dpc.softmax_cross_entropy {{.*}}dpc.sharding_rule = "([a,b],[a])->([]) {a=8 reduction, b=10 whole}"
  %s = dpc.softmax_cross_entropy %l, %y sum {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  // CHECK: dpc.reduce_mean {{.*}}dpc.sharding_rule = "([a,b])->([a]) {a=8, b=10 reduction(mean)}"
  %m = dpc.reduce_mean %l [1] : tensor<8x10xf32> -> tensor<8xf32>
  // CHECK: dpc.reduce_max {{.*}}dpc.sharding_rule = "([a,b])->([b]) {a=8 reduction(max), b=10}"
  %x = dpc.reduce_max %l [0] : tensor<8x10xf32> -> tensor<10xf32>
  // Gathering elements along b: the input's b stays whole, the indices'
  // dimensions split freely; a equal on both sides is one loop.
  // CHECK: dpc.gather_elements {{.*}}dpc.sharding_rule = "([a,b],[a,c])->([a,c]) {a=8, b=10 whole, c=3}"
  %ge = dpc.gather_elements %l[%gi] {axis = 1 : i64} : (tensor<8x10xf32>, tensor<8x3xi64>) -> tensor<8x3xf32>
  // The index is a position along the whole axis.
  // CHECK: dpc.argmax {{.*}}dpc.sharding_rule = "([a,b])->([a]) {a=8, b=10 whole}"
  %am = dpc.argmax %l axis 1 : tensor<8x10xf32> -> tensor<8xi64>
  // CHECK: dpc.reduce_min {{.*}}dpc.sharding_rule = "([a,b])->([]) {a=8 reduction(min), b=10 reduction(min)}"
  %n = dpc.reduce_min %l [0, 1] : tensor<8x10xf32> -> tensor<f32>
  // CHECK: dpc.conv2d {{.*}}dpc.sharding_rule = "([a,c,d,e],[b,c,f,g])->([a,b,_,_]) {a=2, b=6, c=3 reduction, d=8 whole, e=8 whole, f=3 whole, g=3 whole}"
  %2 = dpc.conv2d %img, %f {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x8x8xf32>
  // A padded dimension stays whole; one padded nowhere is parallel.
  // CHECK: dpc.pad {{.*}}dpc.sharding_rule = "([a,b,c,d])->([a,b,_,_]) {a=2, b=3, c=8 whole, d=8 whole}"
  %3 = dpc.pad %img {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 0>, interior = array<i64: 0, 0, 0, 0>, value = 0.0 : f64} : tensor<2x3x8x8xf32> -> tensor<2x3x10x9xf32>
  // Ops without a rule are left alone.
  // CHECK: dpc.top_k
  // CHECK-NOT: dpc.sharding_rule
  // CHECK-SAME: -> tensor<2xf32>, tensor<2xi64>
  %4:2 = dpc.top_k %p k 2 : tensor<4xf32> -> tensor<2xf32>, tensor<2xi64>
  return
}

// The backward ops of a CNN split as its forward does: samples and output
// channels parallel, summed input channels a reduction; the filter's
// gradient sums over the samples (data parallelism's pending sum); windows
// stay whole. Every dimension of a batch norm is parallel: split
// statistics are synchronized by its partition.
// CHECK-LABEL: func.func @cnn_backward
func.func @cnn_backward(%img: tensor<2x3x8x8xf32>, %f: tensor<6x3x3x3xf32>,
                        %g: tensor<2x6x8x8xf32>, %pooled: tensor<2x3x4x4xf32>,
                        %c: tensor<3xf32>) {
  // CHECK: dpc.conv_transpose2d {{.*}}dpc.sharding_rule = "([a,c,d,e],[c,b,f,g])->([a,b,_,_]) {a=2, b=3, c=6 reduction, d=8 whole, e=8 whole, f=3 whole, g=3 whole}"
  %0 = dpc.conv_transpose2d %g, %f {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<2x6x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x3x8x8xf32>
  // Grouped, the channels stay whole.
  // CHECK: dpc.conv_transpose2d {{.*}}dpc.sharding_rule = "([a,c,d,e],[c,h,f,g])->([a,b,_,_]) {a=2, b=9 whole, c=6 whole, d=8 whole, e=8 whole, f=3 whole, g=3 whole, h=3 whole}"
  %1 = dpc.conv_transpose2d %g, %f {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 3 : i64} : (tensor<2x6x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x9x8x8xf32>
  // CHECK: dpc.conv2d_filter_grad {{.*}}dpc.sharding_rule = "([a,c,d,e],[a,b,f,g])->([b,c,_,_]) {a=2 reduction, b=6, c=3, d=8 whole, e=8 whole, f=8 whole, g=8 whole}"
  %2 = dpc.conv2d_filter_grad %img, %g {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<2x6x8x8xf32>) -> tensor<6x3x3x3xf32>
  // CHECK: dpc.max_pool2d_grad {{.*}}dpc.sharding_rule = "([a,b,c,d],[a,b,e,f])->([a,b,c,d]) {a=2, b=3, c=8 whole, d=8 whole, e=4 whole, f=4 whole}"
  %3 = dpc.max_pool2d_grad %img, %pooled {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
  // CHECK: dpc.avg_pool2d_grad {{.*}}dpc.sharding_rule = "([a,b,e,f])->([a,b,c,d]) {a=2, b=3, c=8 whole, d=8 whole, e=4 whole, f=4 whole}"
  %4 = dpc.avg_pool2d_grad %pooled {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<2x3x4x4xf32> -> tensor<2x3x8x8xf32>
  // CHECK: dpc.batch_norm {{.*}}dpc.sharding_rule = "([a,b,c,d],[b],[b],[b],[b])->([a,b,c,d],[b],[b],[b],[b]) {a=2, b=3, c=8, d=8}"
  %5:5 = dpc.batch_norm %img, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32, training} : tensor<2x3x8x8xf32>, tensor<3xf32>
  return
}

// Resampling keeps the batch and the channels parallel; the resampled
// dimensions stay whole, in the resize and in its gradient.
// CHECK-LABEL: func.func @resampling
func.func @resampling(%img: tensor<2x3x8x8xf32>, %g: tensor<2x3x16x16xf32>) {
  // CHECK: dpc.resize {{.*}}dpc.sharding_rule = "([a,b,c,e])->([a,b,d,f]) {a=2, b=3, c=8 whole, d=16 whole, e=8 whole, f=16 whole}"
  %0 = dpc.resize %img {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_mode = "half_pixel", nearest_mode = "floor"} : tensor<2x3x8x8xf32> -> tensor<2x3x16x16xf32>
  // CHECK: dpc.resize_grad {{.*}}dpc.sharding_rule = "([a,b,c,e])->([a,b,d,f]) {a=2, b=3, c=16 whole, d=8 whole, e=16 whole, f=8 whole}"
  %1 = dpc.resize_grad %g {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_mode = "half_pixel", nearest_mode = "floor"} : tensor<2x3x16x16xf32> -> tensor<2x3x8x8xf32>
  return
}

// A recurrent layer splits only its batch (f); time, input and hidden sizes
// stay whole. In its gradient op the batch is a reduction: the weights'
// gradients sum over it, the input's and states' gradients split with it.
// CHECK-LABEL: func.func @recurrent
func.func @recurrent(%x: tensor<5x8x3xf32>, %w: tensor<16x3xf32>, %r: tensor<16x4xf32>, %b: tensor<32xf32>, %h: tensor<8x4xf32>, %n: tensor<8xi64>, %w3: tensor<12x3xf32>, %r3: tensor<12x4xf32>, %b3: tensor<24xf32>) -> tensor<5x8x4xf32> {
  // CHECK: dpc.lstm {{.*}}dpc.sharding_rule = "([a,f,b],[d,b],[d,c],[e],[f,c],[f,c],[f])->([a,f,c],[f,c],[f,c]) {a=5 whole, b=3 whole, c=4 whole, d=16 whole, e=32 whole, f=8}"
  %y, %hT, %cT = dpc.lstm %x, %w, %r, %b, %h, %h lengths %n : (tensor<5x8x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8xi64>) -> (tensor<5x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  // CHECK: dpc.lstm_grad {{.*}}dpc.sharding_rule = "([a,f,b],[d,b],[d,c],[e],[f,c],[f,c],[a,f,c],[f,c],[f,c])->([a,f,b],[d,b],[d,c],[e],[f,c],[f,c]) {a=5 whole, b=3 whole, c=4 whole, d=16 whole, e=32 whole, f=8 reduction}"
  %g:6 = dpc.lstm_grad %x, %w, %r, %b, %h, %h, %y, %hT, %cT : (tensor<5x8x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<5x8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<5x8x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x4xf32>)
  // CHECK: dpc.gru {{.*}}dpc.sharding_rule = "([a,f,b],[d,b],[d,c],[e],[f,c])->([a,f,c],[f,c]) {a=5 whole, b=3 whole, c=4 whole, d=12 whole, e=24 whole, f=8}"
  %z, %zT = dpc.gru %x, %w3, %r3, %b3, %h : (tensor<5x8x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<8x4xf32>) -> (tensor<5x8x4xf32>, tensor<8x4xf32>)
  return %y : tensor<5x8x4xf32>
}
