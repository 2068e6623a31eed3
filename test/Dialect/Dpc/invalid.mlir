// RUN: dpc-opt %s -split-input-file -verify-diagnostics
//
// One case per numbered constraint of every op (see DpcOps.td). Each case
// opens with `// <op> (Cn)`, which check-verifier-coverage.py reads.

// dpc.constant (C1)
func.func @constant_type() {
  // expected-error @+1 {{value type 'tensor<2xf32>' differs from result type 'tensor<3xf32>' (C1)}}
  %0 = "dpc.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

// dpc.neg (C1)
func.func @unary_type(%x: tensor<2xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "dpc.neg"(%x) : (tensor<2xf32>) -> tensor<2xf16>
  return
}

// -----

// dpc.add (C1)
func.func @binary_element_types(%x: tensor<2xf32>, %y: tensor<2xf16>) {
  // expected-error @+1 {{operands have different element types (C1)}}
  %0 = dpc.add %x, %y : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return
}

// -----

// dpc.mul (C1)
func.func @binary_result_element_type(%x: tensor<2xf32>) {
  // expected-error @+1 {{result element type 'f16' should be 'f32' (C1)}}
  %0 = dpc.mul %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf16>
  return
}

// -----

// dpc.sub (C2)
func.func @binary_broadcast(%x: tensor<4x3xf32>, %y: tensor<2xf32>) {
  // expected-error @+1 {{operand shapes [4, 3] [2] are not broadcast-compatible (C2)}}
  %0 = dpc.sub %x, %y : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<4x3xf32>
  return
}

// -----

// dpc.div (C3)
func.func @binary_result_shape(%x: tensor<4x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{result shape [3] is not the broadcast shape [4, 3] (C3)}}
  %0 = dpc.div %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// dpc.compare (C1)
func.func @compare_element_types(%x: tensor<2xf32>, %y: tensor<2xi32>) {
  // expected-error @+1 {{operands have different element types (C1)}}
  %0 = dpc.compare eq, %x, %y : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xi1>
  return
}

// -----

// dpc.compare (C2)
func.func @compare_broadcast(%x: tensor<2xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{not broadcast-compatible (C2)}}
  %0 = dpc.compare eq, %x, %y : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xi1>
  return
}

// -----

// dpc.compare (C3)
func.func @compare_result_shape(%x: tensor<2x1xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{is not the broadcast shape [2, 3] (C3)}}
  %0 = dpc.compare lt, %x, %y : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2xi1>
  return
}

// -----

// dpc.select (C1)
func.func @select_element_types(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xf64>) {
  // expected-error @+1 {{operands have different element types (C1)}}
  %0 = dpc.select %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>
  return
}

// -----

// dpc.select (C2)
func.func @select_broadcast(%c: tensor<3xi1>, %x: tensor<2xf32>) {
  // expected-error @+1 {{operand shapes [3] [2] [2] are not broadcast-compatible (C2)}}
  %0 = dpc.select %c, %x, %x : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// dpc.select (C3)
func.func @select_result_shape(%c: tensor<4x1xi1>, %x: tensor<2xf32>) {
  // expected-error @+1 {{is not the broadcast shape [4, 2] (C3)}}
  %0 = dpc.select %c, %x, %x : (tensor<4x1xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// dpc.cast (C1)
func.func @cast_shape(%x: tensor<2xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape}}
  %0 = dpc.cast %x : tensor<2xf32> -> tensor<3xf16>
  return
}

// -----

// dpc.matmul (C1)
func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{operands must have rank 2 or more (C1)}}
  %0 = dpc.matmul %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  return
}

// -----

// dpc.matmul (C2)
func.func @matmul_element_types(%a: tensor<2x4xf32>, %b: tensor<4x2xf16>) {
  // expected-error @+1 {{element types differ (C2)}}
  %0 = dpc.matmul %a, %b : (tensor<2x4xf32>, tensor<4x2xf16>) -> tensor<2x2xf32>
  return
}

// -----

// dpc.matmul (C3)
func.func @matmul_contraction(%a: tensor<2x4xf32>, %b: tensor<5x2xf32>) {
  // expected-error @+1 {{contracted dimensions differ: lhs has 4, rhs has 5 (C3)}}
  %0 = dpc.matmul %a, %b : (tensor<2x4xf32>, tensor<5x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

// dpc.matmul (C4)
func.func @matmul_batch(%a: tensor<3x2x4xf32>, %b: tensor<5x4x2xf32>) {
  // expected-error @+1 {{batch dimensions [3] and [5] are not broadcast-compatible (C4)}}
  %0 = dpc.matmul %a, %b : (tensor<3x2x4xf32>, tensor<5x4x2xf32>) -> tensor<3x2x2xf32>
  return
}

// -----

// dpc.matmul (C5)
func.func @matmul_result(%a: tensor<3x2x4xf32>, %b: tensor<4x6xf32>) {
  // expected-error @+1 {{result shape [2, 6] should be [3, 2, 6] (C5)}}
  %0 = dpc.matmul %a, %b : (tensor<3x2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  return
}

// -----

// dpc.conv2d (C1)
func.func @conv_rank(%x: tensor<2x3x8xf32>, %f: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{input and filter must have rank 4 (C1)}}
  %0 = dpc.conv2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x6x6xf32>
  return
}

// -----

// dpc.conv2d (C2)
func.func @conv_attributes(%x: tensor<2x3x8x8xf32>, %f: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{needs 2 positive strides and dilations, 4 non-negative paddings and positive groups (C2)}}
  %0 = dpc.conv2d %x, %f {strides = array<i64: 0, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x6x6xf32>
  return
}

// -----

// dpc.conv2d (C3)
func.func @conv_channels(%x: tensor<2x4x8x8xf32>, %f: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{input has 4 channels, but filter expects 3 per group in 1 groups of 6 filters (C3)}}
  %0 = dpc.conv2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x6x6xf32>
  return
}

// -----

// dpc.conv2d (C4)
func.func @conv_bias(%x: tensor<2x3x8x8xf32>, %f: tensor<6x3x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{bias shape [5] should be [6] (C4)}}
  %0 = dpc.conv2d %x, %f, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<5xf32>) -> tensor<2x6x6x6xf32>
  return
}

// -----

// dpc.conv2d (C5)
func.func @conv_element_types(%x: tensor<2x3x8x8xf32>, %f: tensor<6x3x3x3xf16>) {
  // expected-error @+1 {{element types differ (C5)}}
  %0 = dpc.conv2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf16>) -> tensor<2x6x6x6xf32>
  return
}

// -----

// dpc.conv2d (C6)
func.func @conv_result(%x: tensor<2x3x8x8xf32>, %f: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{result shape [2, 6, 8, 8] should be [2, 6, 4, 4] (C6)}}
  %0 = dpc.conv2d %x, %f {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<2x6x8x8xf32>
  return
}

// -----

// dpc.conv_transpose2d (C1)
func.func @conv_transpose_C1(%x: tensor<2x4x5xf32>, %f: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{input and filter must have rank 4 (C1)}}
  %0 = dpc.conv_transpose2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<2x4x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x7x7xf32>
  return
}

// -----

// dpc.conv_transpose2d (C2)
func.func @conv_transpose_C2(%x: tensor<2x4x5x5xf32>, %f: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{and positive groups (C2)}}
  %0 = dpc.conv_transpose2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0>, groups = 1 : i64}
      : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x7x7xf32>
  return
}

// -----

// dpc.conv_transpose2d (C3)
func.func @conv_transpose_C3(%x: tensor<2x4x5x5xf32>, %f: tensor<3x3x3x3xf32>) {
  // expected-error @+1 {{input has 4 channels, filter has 3 in 1 groups (C3)}}
  %0 = dpc.conv_transpose2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<2x4x5x5xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x7x7xf32>
  return
}

// -----

// dpc.conv_transpose2d (C4)
func.func @conv_transpose_C4(%x: tensor<2x4x5x5xf32>, %f: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias shape [4] should be [3] (C4)}}
  %0 = dpc.conv_transpose2d %x, %f, %b {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x3x7x7xf32>
  return
}

// -----

// dpc.conv_transpose2d (C5)
func.func @conv_transpose_C5(%x: tensor<2x4x5x5xf32>, %f: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{element types differ (C5)}}
  %0 = dpc.conv_transpose2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf16>) -> tensor<2x3x7x7xf32>
  return
}

// -----

// dpc.conv_transpose2d (C6)
func.func @conv_transpose_C6(%x: tensor<2x4x5x5xf32>, %f: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{result shape [2, 3, 5, 5] should be [2, 3, 7, 7] (C6)}}
  %0 = dpc.conv_transpose2d %x, %f {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, groups = 1 : i64}
      : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x5x5xf32>
  return
}

// -----

// dpc.resize (C1)
func.func @resize_C1(%x: tensor<1x4x5x5xf32>) {
  // expected-error @+1 {{needs one positive scale per dimension (C1)}}
  %0 = dpc.resize %x {scales = array<f64: 1.0, 2.0>, mode = "linear", coordinate_mode = "half_pixel", nearest_mode = "floor"} : tensor<1x4x5x5xf32> -> tensor<1x4x10x10xf32>
  return
}

// -----

// dpc.resize (C2)
func.func @resize_C2(%x: tensor<1x4x5x5xf32>) {
  // expected-error @+1 {{should have the rank and element type of 'tensor<1x4x5x5xf32>' (C2)}}
  %0 = dpc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear", coordinate_mode = "half_pixel", nearest_mode = "floor"} : tensor<1x4x5x5xf32> -> tensor<1x4x10x10xf16>
  return
}

// -----

// dpc.resize (C3)
func.func @resize_C3(%x: tensor<1x4x5x5xf32>) {
  // expected-error @+1 {{unknown mode, coordinate_mode or nearest_mode (C3)}}
  %0 = dpc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "cubic", coordinate_mode = "half_pixel", nearest_mode = "floor"} : tensor<1x4x5x5xf32> -> tensor<1x4x10x10xf32>
  return
}

// -----

// dpc.resize_grad (C1)
func.func @resize_grad_C1(%g: tensor<1x4x10x10xf32>) {
  // expected-error @+1 {{needs one positive scale per dimension (C1)}}
  %0 = dpc.resize_grad %g {scales = array<f64: 1.0, 1.0, 0.0, 2.0>, mode = "nearest", coordinate_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x4x10x10xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

// dpc.resize_grad (C2)
func.func @resize_grad_C2(%g: tensor<4x10x10xf32>) {
  // expected-error @+1 {{should have the rank and element type of 'tensor<1x4x5x5xf32>' (C2)}}
  %0 = dpc.resize_grad %g {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest", coordinate_mode = "asymmetric", nearest_mode = "floor"} : tensor<4x10x10xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

// dpc.resize_grad (C3)
func.func @resize_grad_C3(%g: tensor<1x4x10x10xf32>) {
  // expected-error @+1 {{unknown mode, coordinate_mode or nearest_mode (C3)}}
  %0 = dpc.resize_grad %g {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest", coordinate_mode = "asymmetric", nearest_mode = "nearest"} : tensor<1x4x10x10xf32> -> tensor<1x4x5x5xf32>
  return
}

// -----

// dpc.conv2d_filter_grad (C1)
func.func @conv2d_filter_grad_C1(%x: tensor<2x3x8xf32>, %g: tensor<2x6x6x6xf32>) {
  // expected-error @+1 {{input, out_grad and result must have rank 4 (C1)}}
  %0 = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8xf32>, tensor<2x6x6x6xf32>) -> tensor<6x3x3x3xf32>
  return
}

// -----

// dpc.conv2d_filter_grad (C2)
func.func @conv2d_filter_grad_C2(%x: tensor<2x3x8x8xf32>, %g: tensor<2x6x6x6xf32>) {
  // expected-error @+1 {{positive groups (C2)}}
  %0 = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 0 : i64} : (tensor<2x3x8x8xf32>, tensor<2x6x6x6xf32>) -> tensor<6x3x3x3xf32>
  return
}

// -----

// dpc.conv2d_filter_grad (C3)
func.func @conv2d_filter_grad_C3(%x: tensor<2x3x8x8xf32>, %g: tensor<2x6x6x6xf32>) {
  // expected-error @+1 {{result shape [6, 2, 3, 3] does not fit 3 input and 6 output channels in 1 groups (C3)}}
  %0 = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<2x6x6x6xf32>) -> tensor<6x2x3x3xf32>
  return
}

// -----

// dpc.conv2d_filter_grad (C4)
func.func @conv2d_filter_grad_C4(%x: tensor<2x3x8x8xf32>, %g: tensor<2x6x5x5xf32>) {
  // expected-error @+1 {{out_grad shape [2, 6, 5, 5] should be [2, 6, 6, 6] (C4)}}
  %0 = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<2x6x5x5xf32>) -> tensor<6x3x3x3xf32>
  return
}

// -----

// dpc.conv2d_filter_grad (C5)
func.func @conv2d_filter_grad_C5(%x: tensor<2x3x8x8xf32>, %g: tensor<2x6x6x6xf16>) {
  // expected-error @+1 {{element types differ (C5)}}
  %0 = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<2x6x6x6xf16>) -> tensor<6x3x3x3xf32>
  return
}

// -----

// dpc.max_pool2d_grad (C1)
func.func @max_pool2d_grad_C1(%x: tensor<3x8x8xf32>, %g: tensor<3x4x4xf32>) {
  // expected-error @+1 {{input must have rank 4 (C1)}}
  %0 = dpc.max_pool2d_grad %x, %g {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<3x8x8xf32>, tensor<3x4x4xf32>
  return
}

// -----

// dpc.max_pool2d_grad (C2)
func.func @max_pool2d_grad_C2(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{smaller than the kernel (C2)}}
  %0 = dpc.max_pool2d_grad %x, %g {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>
  return
}

// -----

// dpc.max_pool2d_grad (C3)
func.func @max_pool2d_grad_C3(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x3x3xf32>) {
  // expected-error @+1 {{out_grad shape [1, 3, 3, 3] should be [1, 3, 4, 4] (C3)}}
  %0 = dpc.max_pool2d_grad %x, %g {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32>, tensor<1x3x3x3xf32>
  return
}

// -----

// dpc.avg_pool2d_grad (C1)
func.func @avg_pool2d_grad_C1(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{result must have rank 4 and the element type of out_grad (C1)}}
  %0 = dpc.avg_pool2d_grad %g {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf16>
  return
}

// -----

// dpc.avg_pool2d_grad (C2)
func.func @avg_pool2d_grad_C2(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{smaller than the kernel (C2)}}
  %0 = dpc.avg_pool2d_grad %g {kernel_shape = array<i64: 0, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// dpc.avg_pool2d_grad (C3)
func.func @avg_pool2d_grad_C3(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{out_grad shape [1, 3, 4, 4] should be [1, 3, 3, 3] (C3)}}
  %0 = dpc.avg_pool2d_grad %g {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x4x4xf32> -> tensor<1x3x7x7xf32>
  return
}

// -----

// dpc.pad (C1)
func.func @pad_C1(%x: tensor<4xf32>) {
  // expected-error @+1 {{low, high and interior need one non-negative entry per dimension (C1)}}
  %0 = dpc.pad %x {low = array<i64: -1>, high = array<i64: 0>, interior = array<i64: 0>, value = 0.0 : f64} : tensor<4xf32> -> tensor<3xf32>
  return
}

// -----

// dpc.pad (C2)
func.func @pad_C2(%x: tensor<4xf32>) {
  // expected-error @+1 {{should have shape [9] (C2)}}
  %0 = dpc.pad %x {low = array<i64: 1>, high = array<i64: 1>, interior = array<i64: 1>, value = 0.0 : f64} : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

// dpc.scatter_add (C1)
func.func @scatter_add_C1(%u: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{axis 2 is out of range [0, 2) (C1)}}
  %0 = dpc.scatter_add %u[%i] {axis = 2 : i64} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<10x4xf32>
  return
}

// -----

// dpc.scatter_add (C2)
func.func @scatter_add_C2(%u: tensor<4x3xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{should have shape [3, 4] and element type 'f32' (C2)}}
  %0 = dpc.scatter_add %u[%i] {axis = 0 : i64} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<10x4xf32>
  return
}

// -----

// dpc.max_pool2d (C1)
func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{input must have rank 4 (C1)}}
  %0 = dpc.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  return
}

// -----

// dpc.max_pool2d (C2)
func.func @pool_padding(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{paddings smaller than the kernel (C2)}}
  %0 = dpc.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<1x3x8x8xf32> -> tensor<1x3x5x4xf32>
  return
}

// -----

// dpc.max_pool2d (C3)
func.func @pool_result(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{should have shape [1, 3, 4, 4] and element type 'f32' (C3)}}
  %0 = dpc.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<1x3x8x8xf32> -> tensor<1x3x3x3xf32>
  return
}

// -----

// dpc.avg_pool2d (C1)
func.func @avg_pool_rank(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{input must have rank 4 (C1)}}
  %0 = dpc.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<8x8xf32> -> tensor<4x4xf32>
  return
}

// -----

// dpc.avg_pool2d (C2)
func.func @avg_pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{needs 2 positive kernel sizes, strides and dilations and 4 non-negative paddings smaller than the kernel (C2)}}
  %0 = dpc.avg_pool2d %x {kernel_shape = array<i64: 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

// dpc.avg_pool2d (C3)
func.func @avg_pool_ceil_mode(%x: tensor<1x3x7x7xf32>) {
  // ceil_mode rounds 7 / 2 up to 4 windows (7 = 3 full windows + 1).
  // expected-error @+1 {{should have shape [1, 3, 4, 4] and element type 'f32' (C3)}}
  %0 = dpc.avg_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode}
      : tensor<1x3x7x7xf32> -> tensor<1x3x3x3xf32>
  return
}

// -----

// dpc.reduce_sum (C1)
func.func @reduce_dims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dims [1, 0] must be strictly increasing within [0, 2) (C1)}}
  %0 = dpc.reduce_sum %x [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

// dpc.reduce_mean (C1)
func.func @reduce_dims_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dims [2] must be strictly increasing within [0, 2) (C1)}}
  %0 = dpc.reduce_mean %x [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// dpc.reduce_max (C2)
func.func @reduce_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{element types differ (C2)}}
  %0 = dpc.reduce_max %x [1] : tensor<4x8xf32> -> tensor<4xf16>
  return
}

// -----

// dpc.reduce_min (C3)
func.func @reduce_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape [4] should be [4, 1] (C3)}}
  %0 = dpc.reduce_min %x [1] keep_dims : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// dpc.softmax (C1)
func.func @softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range [0, 2) (C1)}}
  %0 = dpc.softmax %x {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

// dpc.log_softmax (C1)
func.func @log_softmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -1 is out of range [0, 2) (C1)}}
  %0 = dpc.log_softmax %x {axis = -1 : i64} : tensor<4x8xf32>
  return
}

// -----

// dpc.layer_norm (C1)
func.func @layer_norm_axis(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{axis 3 is out of range [0, 2) (C1)}}
  %0 = dpc.layer_norm %x, %g {axis = 3 : i64, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

// dpc.layer_norm (C2)
func.func @layer_norm_scale(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{scale shape [8] should be [4, 8] (C2)}}
  %0 = dpc.layer_norm %x, %g {axis = 0 : i64, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

// dpc.layer_norm (C3)
func.func @layer_norm_bias(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias type 'tensor<4xf32>' differs from scale type 'tensor<8xf32>' (C3)}}
  %0 = dpc.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>
  return
}

// -----

// dpc.layer_norm (C4)
func.func @layer_norm_element_type(%x: tensor<4x8xf32>, %g: tensor<8xf16>) {
  // expected-error @+1 {{element types differ (C4)}}
  %0 = dpc.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf16>
  return
}

// -----

// dpc.batch_norm (C1)
func.func @batch_norm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{input must have rank 2 or more (C1)}}
  %0:5 = dpc.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32} : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// dpc.batch_norm (C2)
func.func @batch_norm_channels(%x: tensor<2x3x4x4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{scale shape [4] should be [3] (C2)}}
  %0:5 = dpc.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32} : tensor<2x3x4x4xf32>, tensor<4xf32>
  return
}

// -----

// dpc.batch_norm (C3)
func.func @batch_norm_element_type(%x: tensor<2x3xf32>, %c: tensor<3xf16>) {
  // expected-error @+1 {{element types differ (C3)}}
  %0:5 = dpc.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32} : tensor<2x3xf32>, tensor<3xf16>
  return
}

// -----

// dpc.batch_norm (C4)
func.func @batch_norm_momentum(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{momentum must be within [0, 1] and epsilon positive (C4)}}
  %0:5 = dpc.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 1.5 : f32} : tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

// dpc.reshape (C1)
func.func @reshape_count(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{cannot reshape 24 elements into 25 (C1)}}
  %0 = dpc.reshape %x : tensor<4x6xf32> -> tensor<5x5xf32>
  return
}

// -----

// dpc.reshape (C2)
func.func @reshape_element_type(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{element types differ (C2)}}
  %0 = dpc.reshape %x : tensor<4x6xf32> -> tensor<24xi32>
  return
}

// -----

// dpc.broadcast_to (C1)
func.func @broadcast_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{element types differ (C1)}}
  %0 = dpc.broadcast_to %x : tensor<4xf32> -> tensor<2x4xf16>
  return
}

// -----

// dpc.broadcast_to (C2)
func.func @broadcast_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{cannot broadcast [4] to [4, 2] (C2)}}
  %0 = dpc.broadcast_to %x : tensor<4xf32> -> tensor<4x2xf32>
  return
}

// -----

// dpc.transpose (C1)
func.func @transpose_permutation(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{permutation [0, 0] is not a permutation of [0, 2) (C1)}}
  %0 = dpc.transpose %x [0, 0] : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

// dpc.transpose (C2)
func.func @transpose_result(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{should have shape [6, 4] (C2)}}
  %0 = dpc.transpose %x [1, 0] : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

// dpc.concat (C1)
func.func @concat_empty() {
  // expected-error @+1 {{needs at least one input (C1)}}
  %0 = dpc.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

// dpc.concat (C2)
func.func @concat_rank(%x: tensor<4xf32>, %y: tensor<4x1xf32>) {
  // expected-error @+1 {{inputs and result differ in rank or element type (C2)}}
  %0 = dpc.concat %x, %y {axis = 0 : i64} : (tensor<4xf32>, tensor<4x1xf32>) -> tensor<8xf32>
  return
}

// -----

// dpc.concat (C3)
func.func @concat_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{axis 1 is out of range [0, 1) (C3)}}
  %0 = dpc.concat %x, %x {axis = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

// dpc.concat (C4)
func.func @concat_other_dims(%x: tensor<4x2xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+1 {{dimension 1 differs among inputs and result (C4)}}
  %0 = dpc.concat %x, %y {axis = 0 : i64} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<8x2xf32>
  return
}

// -----

// dpc.concat (C5)
func.func @concat_sum(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{result has 9 on axis 0, but the inputs add up to 8 (C5)}}
  %0 = dpc.concat %x, %x {axis = 0 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<9x2xf32>
  return
}

// -----

// dpc.slice (C1)
func.func @slice_lengths(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{start, limit and stride need one entry per dimension (C1)}}
  %0 = dpc.slice %x {start = array<i64: 0>, limit = array<i64: 4, 6>, stride = array<i64: 1, 1>} : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

// dpc.slice (C2)
func.func @slice_bounds(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{dimension 1: needs 0 <= start (0) <= limit (7) <= size (6) and stride (1) >= 1 (C2)}}
  %0 = dpc.slice %x {start = array<i64: 0, 0>, limit = array<i64: 4, 7>, stride = array<i64: 1, 1>} : tensor<4x6xf32> -> tensor<4x7xf32>
  return
}

// -----

// dpc.slice (C3)
func.func @slice_result(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{should have shape [4, 3] (C3)}}
  %0 = dpc.slice %x {start = array<i64: 0, 0>, limit = array<i64: 4, 6>, stride = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x2xf32>
  return
}

// -----

// dpc.split (C1)
func.func @split_axis(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{axis 2 is out of range [0, 2) (C1)}}
  %0:2 = dpc.split %x {axis = 2 : i64} : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

// dpc.split (C2)
func.func @split_other_dims(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{result 'tensor<3x3xf32>' does not agree with input 'tensor<4x6xf32>' outside axis 1 (C2)}}
  %0:2 = dpc.split %x {axis = 1 : i64} : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<3x3xf32>
  return
}

// -----

// dpc.split (C3)
func.func @split_sum(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{results add up to 5 on axis 1, input has 6 (C3)}}
  %0:2 = dpc.split %x {axis = 1 : i64} : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x2xf32>
  return
}

// -----

// dpc.gather (C1)
func.func @gather_axis(%x: tensor<4x6xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{axis 2 is out of range [0, 2) (C1)}}
  %0 = dpc.gather %x[%i] {axis = 2 : i64} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x6x3xf32>
  return
}

// -----

// dpc.gather (C2)
func.func @gather_result(%x: tensor<4x6xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{should have shape [4, 3] and element type 'f32' (C2)}}
  %0 = dpc.gather %x[%i] {axis = 1 : i64} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<3x6xf32>
  return
}

// -----

// dpc.dropout (C1)
func.func @dropout_ratio(%x: tensor<4xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{ratio 1.000000e+00 is not within [0, 1) (C1)}}
  %0 = dpc.dropout %x, %seed, %seed {ratio = 1.0 : f32, stream = 0 : i64} : tensor<4xf32>
  return
}

// -----

// dpc.softmax_cross_entropy (C1)
func.func @cross_entropy_labels(%x: tensor<4x10xf32>, %l: tensor<10xi64>) {
  // expected-error @+1 {{labels shape [10] does not match input shape [4, 10] without its class dimension (C1)}}
  %0 = dpc.softmax_cross_entropy %x, %l mean {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<10xi64>) -> tensor<f32>
  return
}

// -----

// dpc.softmax_cross_entropy (C2)
func.func @cross_entropy_result(%x: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{result type 'tensor<f32>' should have shape [4] and element type 'f32' (C2)}}
  %0 = dpc.softmax_cross_entropy %x, %l none {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// dpc.nll_loss (C1)
func.func @nll_rank(%x: tensor<10xf32>, %l: tensor<i64>) {
  // expected-error @+1 {{does not match input shape [10] without its class dimension (C1)}}
  %0 = dpc.nll_loss %x, %l mean {ignore_index = -100 : i64} : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

// dpc.nll_loss (C2)
func.func @nll_result(%x: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{result type 'tensor<4xf32>' should have shape [] and element type 'f32' (C2)}}
  %0 = dpc.nll_loss %x, %l sum {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

// Argument attributes.
// expected-error @+1 {{unknown dpc argument attribute 'dpc.weight'}}
func.func @unknown_argument_attribute(%x: tensor<4xf32> {dpc.weight = "w"}) {
  return
}

// -----

// expected-error @+1 {{'dpc.param' must hold the tensor's name as a string}}
func.func @unnamed_parameter(%x: tensor<4xf32> {dpc.param}) {
  return
}

// -----

// expected-error @+1 {{'dpc.sharding' of argument #0 must be a #dpc.sharding, such as #dpc.sharding<@plan, [dp, *]>}}
func.func @sharding_not_a_sharding(%x: tensor<4xf32> {dpc.sharding = "[dp]"}) {
  return
}

// -----

// expected-error @+1 {{'dpc.param' marks argument #0 of type 'tensor<4xi64>', which is not a floating-point tensor}}
func.func @integer_parameter(%x: tensor<4xi64> {dpc.param = "ids"}) {
  return
}

// -----

// expected-error @+1 {{unknown dpc result attribute 'dpc.input'}}
func.func @input_result(%x: tensor<4xf32>) -> (tensor<4xf32> {dpc.input = "x"}) {
  return %x : tensor<4xf32>
}

// -----

// The plan: meshes, shardings and reshards.

// dpc.mesh (C1)
// expected-error @+1 {{'dpc.mesh' op has 1 axis sizes and 0 axis names, and needs at least one (C1)}}
"dpc.mesh"() <{sym_name = "plan", axis_names = [], shape = array<i64: 4>}> : () -> ()

// -----

// dpc.mesh (C2)
// expected-error @+1 {{'dpc.mesh' op axis name 'dp' appears twice (C2)}}
dpc.mesh @plan ["dp"=2, "dp"=4]

// -----

// dpc.mesh (C2)
// expected-error @+1 {{'dpc.mesh' op axis name 'data parallel' is not an identifier (C2)}}
dpc.mesh @plan ["data parallel"=2]

// -----

// dpc.mesh (C3)
// expected-error @+1 {{'dpc.mesh' op axis 'tp' has size 0; sizes are at least 1 (C3)}}
dpc.mesh @plan ["dp"=2, "tp"=0]

// -----

// dpc.mesh (C3)
// expected-error @+1 {{'dpc.mesh' op has more than 2^31 devices (C3)}}
dpc.mesh @plan ["x"=3, "y"=6148914691236517206]

// -----

// dpc.mesh (C4)
// expected-error @+1 {{'dpc.mesh' op devices must be a permutation of 0..3 (C4)}}
dpc.mesh @plan ["dp"=2, "tp"=2] devices = [0, 1, 1, 3]

// -----

// #dpc.sharding (C1)
dpc.mesh @plan ["dp"=2, "tp"=2]
// expected-error @+1 {{mesh axis 'dp' is used more than once (C1)}}
func.func @axis_twice(%x: tensor<4x4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp, *], partial = [dp : sum]>}) {
  return
}

// -----

// #dpc.sharding (C1)
dpc.mesh @plan ["dp"=2, "tp"=2]
// expected-error @+1 {{mesh axis 'tp' is used more than once (C1)}}
func.func @axis_twice_in_one_dim(%x: tensor<4x4xf32> {dpc.sharding = #dpc.sharding<@plan, [(tp, tp), *]>}) {
  return
}

// -----

// #dpc.sharding (C2)
// expected-error @+1 {{argument #0: sharding #dpc.sharding<@plan, [dp]> names no dpc.mesh (C2)}}
func.func @no_mesh(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [dp]>}) {
  return
}

// -----

// #dpc.sharding (C3)
dpc.mesh @plan ["dp"=2, "tp"=2]
func.func @rank(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'dpc.neg' op result #0: sharding #dpc.sharding<@plan, [dp, *, tp]> has 3 dimensions for a value of type 'tensor<4x4xf32>' (C3)}}
  %0 = dpc.neg %x {dpc.sharding = [#dpc.sharding<@plan, [dp, *, tp]>]} : tensor<4x4xf32>
  return
}

// -----

// #dpc.sharding (C4)
dpc.mesh @plan ["dp"=2, "tp"=2]
// expected-error @+1 {{result #0: sharding #dpc.sharding<@plan, [*, *], partial = [mp : sum]>: 'mp' is not an axis of mesh @plan (C4)}}
func.func @unknown_axis(%x: tensor<4x4xf32>) -> (tensor<4x4xf32> {dpc.sharding = #dpc.sharding<@plan, [*, *], partial = [mp : sum]>}) {
  return %x : tensor<4x4xf32>
}

// -----

// #dpc.sharding (C5)
dpc.mesh @plan ["dp"=2, "tp"=4]
func.func @uneven(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{'dpc.neg' op result #0: sharding #dpc.sharding<@plan, [(dp, tp), *]> splits dimension 0 of size 6 into 8 shards, which does not divide it (C5)}}
  %0 = dpc.neg %x {dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]} : tensor<6x4xf32>
  return
}

// -----

dpc.mesh @plan ["dp"=2]
// expected-error @+1 {{expected ':'}}
func.func @partial_without_kind(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*], partial = [dp]>}) {
  return
}

// -----

dpc.mesh @plan ["dp"=2]
// expected-error @+1 {{unknown reduction kind 'prod' (expected sum, mean, max or min)}}
func.func @unknown_kind(%x: tensor<4xf32> {dpc.sharding = #dpc.sharding<@plan, [*], partial = [dp : prod]>}) {
  return
}

// -----

dpc.mesh @plan ["dp"=2]
func.func @one_per_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.neg' op 'dpc.sharding' must be an array of 1 #dpc.sharding, one per result}}
  %0 = dpc.neg %x {dpc.sharding = [#dpc.sharding<@plan, [dp]>, #dpc.sharding<@plan, [dp]>]} : tensor<4xf32>
  return
}

// -----

dpc.mesh @plan ["dp"=2]
func.func @hierarchical_not_axis_names(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.all_reduce' op 'dpc.hierarchical' is the non-empty list of axis names of the all-reduce a collective is part of}}
  %0 = dpc.all_reduce %x over @plan ["dp"] <sum> {dpc.hierarchical = [1]} : tensor<4xf32>
  return
}

// -----

func.func @hierarchical_not_a_collective(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.neg' op 'dpc.hierarchical' is the non-empty list of axis names of the all-reduce a collective is part of}}
  %0 = dpc.neg %x {dpc.hierarchical = ["dp"]} : tensor<4xf32>
  return
}

// -----

func.func @stage(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.neg' op 'dpc.stage' must be a non-negative i64 stage index}}
  %0 = dpc.neg %x {dpc.stage = "x"} : tensor<4xf32>
  return
}

// -----

func.func @phase(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.neg' op 'dpc.phase' must be a #dpc.phase (forward, backward or optimizer)}}
  %0 = dpc.neg %x {dpc.phase = "backward"} : tensor<4xf32>
  return
}

// -----

// dpc.reshard (C1)
dpc.mesh @plan ["dp"=2]
func.func @reshard_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "dpc.reshard"(%x) <{sharding = #dpc.sharding<@plan, [dp]>}> : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// dpc.reshard (C2)
dpc.mesh @plan ["dp"=4]
func.func @reshard_uneven(%x: tensor<6xf32>) {
  // expected-error @+1 {{'dpc.reshard' op (C2): sharding #dpc.sharding<@plan, [dp]> splits dimension 0 of size 6 into 4 shards, which does not divide it (C5)}}
  %0 = dpc.reshard %x <@plan, [dp]> : tensor<6xf32>
  return
}

// -----

// dpc.transfer (C1)
func.func @transfer_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "dpc.transfer"(%x) <{from = 0 : i64, to = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// dpc.transfer (C2)
func.func @transfer_same_stage(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.transfer' op moves from stage 1 to stage 1; stages are distinct and non-negative (C2)}}
  %0 = dpc.transfer %x from 1 to 1 : tensor<4xf32>
  return
}

// -----

// dpc.all_reduce (C1)
func.func @collective_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.all_reduce' op names @nowhere, which is no dpc.mesh (C1)}}
  %0 = dpc.all_reduce %x over @nowhere ["dp"] <sum> : tensor<4xf32>
  return
}

// -----

// dpc.all_reduce (C2)
dpc.mesh @plan ["dp"=2, "tp"=2]
func.func @collective_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.all_reduce' op axis 'pp' is not an axis of mesh @plan (C2)}}
  %0 = dpc.all_reduce %x over @plan ["pp"] <sum> : tensor<4xf32>
  return
}

// -----

// dpc.all_reduce (C2)
dpc.mesh @plan ["dp"=2, "tp"=2]
func.func @collective_axis_twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.all_reduce' op axis 'dp' appears twice (C2)}}
  %0 = dpc.all_reduce %x over @plan ["dp", "dp"] <sum> : tensor<4xf32>
  return
}

// -----

// dpc.all_reduce (C2)
dpc.mesh @plan ["dp"=2, "tp"=2]
func.func @collective_no_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.all_reduce' op has an empty group: it names no axis (C2)}}
  %0 = dpc.all_reduce %x over @plan [] <sum> : tensor<4xf32>
  return
}

// -----

// dpc.all_reduce (C3)
dpc.mesh @plan ["dp"=2]
func.func @async_read_directly(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dpc.all_reduce' op is async, but dpc.neg reads its result without a dpc.wait (C3)}}
  %0 = dpc.all_reduce %x over @plan ["dp"] <sum> {async} : tensor<4xf32>
  %1 = dpc.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// dpc.wait (C2)
dpc.mesh @plan ["dp"=2]
func.func @wait_for_nothing(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dpc.all_reduce %x over @plan ["dp"] <sum> : tensor<4xf32>
  // expected-error @+1 {{'dpc.wait' op waits for a value no async collective produces (C2)}}
  %1 = dpc.wait %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// dpc.all_reduce (C4)
dpc.mesh @plan ["dp"=2]
func.func @all_reduce_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "dpc.all_reduce"(%x) <{mesh = @plan, axes = ["dp"], kind = #dpc.reduction<sum>}> : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// dpc.all_reduce (C5)
dpc.mesh @plan ["dp"=2]
func.func @all_reduce_mean_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{'dpc.all_reduce' op averages 'tensor<4xi64>', which is not floating-point (C5)}}
  %0 = dpc.all_reduce %x over @plan ["dp"] <mean> : tensor<4xi64>
  return
}

// -----

// dpc.reduce_scatter (C4)
dpc.mesh @plan ["dp"=4]
func.func @reduce_scatter_uneven(%x: tensor<6xf32>) {
  // expected-error @+1 {{'dpc.reduce_scatter' op dimension 0 of size 6 does not split over a group of 4 (C4)}}
  %0 = dpc.reduce_scatter %x over @plan ["dp"] <sum> dim 0 : tensor<6xf32> -> tensor<1xf32>
  return
}

// -----

// dpc.reduce_scatter (C4)
dpc.mesh @plan ["dp"=2]
func.func @reduce_scatter_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.reduce_scatter' op 'dim' 1 is not a dimension of 'tensor<4xf32>' (C4)}}
  %0 = dpc.reduce_scatter %x over @plan ["dp"] <sum> dim 1 : tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

// dpc.reduce_scatter (C5)
dpc.mesh @plan ["dp"=2]
func.func @reduce_scatter_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.reduce_scatter' op result type 'tensor<4xf32>' is not 'tensor<2xf32>' (C5)}}
  %0 = dpc.reduce_scatter %x over @plan ["dp"] <sum> dim 0 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

// dpc.reduce_scatter (C6)
dpc.mesh @plan ["dp"=2]
func.func @reduce_scatter_mean_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{'dpc.reduce_scatter' op averages 'tensor<4xi64>', which is not floating-point (C6)}}
  %0 = dpc.reduce_scatter %x over @plan ["dp"] <mean> dim 0 : tensor<4xi64> -> tensor<2xi64>
  return
}

// -----

// dpc.all_gather (C4)
dpc.mesh @plan ["dp"=2]
func.func @all_gather_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.all_gather' op 'dim' -1 is not a dimension of 'tensor<4xf32>' (C4)}}
  %0 = dpc.all_gather %x over @plan ["dp"] dim -1 : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

// dpc.all_gather (C5)
dpc.mesh @plan ["dp"=2]
func.func @all_gather_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.all_gather' op result type 'tensor<8xf16>' is not 'tensor<8xf32>' (C5)}}
  %0 = dpc.all_gather %x over @plan ["dp"] dim 0 : tensor<4xf32> -> tensor<8xf16>
  return
}

// -----

// dpc.all_slice (C4)
dpc.mesh @plan ["dp"=2]
func.func @all_slice_split(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dpc.all_slice' op dimension 1 of size 3 does not split over a group of 2 (C4)}}
  %0 = dpc.all_slice %x over @plan ["dp"] dim 1 : tensor<4x3xf32> -> tensor<4x1xf32>
  return
}

// -----

// dpc.all_slice (C5)
dpc.mesh @plan ["dp"=2]
func.func @all_slice_result(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'dpc.all_slice' op result type 'tensor<4x4xf32>' is not 'tensor<2x4xf32>' (C5)}}
  %0 = dpc.all_slice %x over @plan ["dp"] dim 0 : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// dpc.all_to_all (C4)
dpc.mesh @plan ["dp"=2]
func.func @all_to_all_split(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'dpc.all_to_all' op dimension 1 of size 3 does not split over a group of 2 (C4)}}
  %0 = dpc.all_to_all %x over @plan ["dp"] split 1 concat 0 : tensor<4x3xf32> -> tensor<8x1xf32>
  return
}

// -----

// dpc.all_to_all (C5)
dpc.mesh @plan ["dp"=2]
func.func @all_to_all_result(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'dpc.all_to_all' op result type 'tensor<4x4xf32>' is not 'tensor<8x2xf32>' (C5)}}
  %0 = dpc.all_to_all %x over @plan ["dp"] split 1 concat 0 : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// dpc.argmax (C1)
func.func @argmax_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dpc.argmax' op axis 2 is out of range [0, 2) (C1)}}
  %0 = dpc.argmax %x axis 2 : tensor<4x8xf32> -> tensor<4xi64>
  return
}

// -----

// dpc.argmax (C2)
func.func @argmax_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dpc.argmax' op result type 'tensor<4xi32>' should be an i64 tensor of shape [4] (C2)}}
  %0 = dpc.argmax %x axis 1 : tensor<4x8xf32> -> tensor<4xi32>
  return
}

// -----

// dpc.gather_elements (C1)
func.func @gather_elements_rank(%x: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'dpc.gather_elements' op indices have rank 1, the input 2 (C1)}}
  %0 = dpc.gather_elements %x[%i] {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

// dpc.gather_elements (C1)
func.func @gather_elements_axis(%x: tensor<3x4xf32>, %i: tensor<3x4xi64>) {
  // expected-error @+1 {{'dpc.gather_elements' op axis 2 is out of range [0, 2) (C1)}}
  %0 = dpc.gather_elements %x[%i] {axis = 2 : i64} : (tensor<3x4xf32>, tensor<3x4xi64>) -> tensor<3x4xf32>
  return
}

// -----

// dpc.gather_elements (C2)
func.func @gather_elements_larger(%x: tensor<3x4xf32>, %i: tensor<3x5xi64>) {
  // expected-error @+1 {{'dpc.gather_elements' op indices [3, 5] are larger than the input [3, 4] beside axis 0 (C2)}}
  %0 = dpc.gather_elements %x[%i] {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3x5xi64>) -> tensor<3x5xf32>
  return
}

// -----

// dpc.gather_elements (C3)
func.func @gather_elements_result(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>) {
  // expected-error @+1 {{'dpc.gather_elements' op result type 'tensor<3x4xf32>' should have shape [2, 4] and element type 'f32' (C3)}}
  %0 = dpc.gather_elements %x[%i] {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>) -> tensor<3x4xf32>
  return
}

// -----

// dpc.scatter_add_elements (C1)
func.func @scatter_add_elements_rank(%u: tensor<3xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'dpc.scatter_add_elements' op updates, indices and result differ in rank (C1)}}
  %0 = dpc.scatter_add_elements %u[%i] {axis = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}

// -----

// dpc.scatter_add_elements (C2)
func.func @scatter_add_elements_updates(%u: tensor<2x5xf32>, %i: tensor<2x5xi64>) {
  // expected-error @+1 {{'dpc.scatter_add_elements' op updates type 'tensor<2x5xf32>' should have the shape of the indices [2, 5], no larger than the result beside axis 0, and element type 'f32' (C2)}}
  %0 = dpc.scatter_add_elements %u[%i] {axis = 0 : i64} : (tensor<2x5xf32>, tensor<2x5xi64>) -> tensor<3x4xf32>
  return
}

// -----

// dpc.top_k (C1)
func.func @top_k_too_many(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.top_k' op takes k = 5 of 'tensor<4xf32>': it needs a vector and 1 <= k <= its size (C1)}}
  %v, %i = dpc.top_k %x k 5 : tensor<4xf32> -> tensor<5xf32>, tensor<5xi64>
  return
}

// -----

// dpc.top_k (C2)
func.func @top_k_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.top_k' op results 'tensor<2xf32>' and 'tensor<2xi32>' should be 'tensor<2xf32>' and tensor<2xi64> (C2)}}
  %v, %i = dpc.top_k %x k 2 : tensor<4xf32> -> tensor<2xf32>, tensor<2xi32>
  return
}

// -----

// dpc.send (C3)
dpc.mesh @plan ["pp"=2, "dp"=2]
func.func @send_to_self(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dpc.send' op shift 2 is a multiple of the group's size 2: a rank would send to itself (C3)}}
  dpc.send %x over @plan ["pp"] shift 2 : tensor<4xf32>
  return
}

// -----

// dpc.recv (C3)
dpc.mesh @plan ["pp"=2, "dp"=2]
func.func @recv_from_self() -> tensor<4xf32> {
  // expected-error @+1 {{'dpc.recv' op shift 0 is a multiple of the group's size 2: a rank would send to itself (C3)}}
  %0 = dpc.recv over @plan ["pp"] shift 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// dpc.lstm (C1)
func.func @lstm_recurrence(%x: tensor<5x2x3xf32>, %w: tensor<16x3xf32>, %r: tensor<12x4xf32>, %b: tensor<32xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dpc.lstm' op needs a [T, B, I] input with T >= 1 and a [4H, H] recurrence, got 'tensor<5x2x3xf32>' and 'tensor<12x4xf32>' (C1)}}
  %y, %hT, %cT = dpc.lstm %x, %w, %r, %b, %h, %h : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<12x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

// dpc.lstm (C1)
func.func @lstm_bias(%x: tensor<5x2x3xf32>, %w: tensor<16x3xf32>, %r: tensor<16x4xf32>, %b: tensor<16xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dpc.lstm' op bias should be 'tensor<32xf32>', got 'tensor<16xf32>' (C1)}}
  %y, %hT, %cT = dpc.lstm %x, %w, %r, %b, %h, %h : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

// dpc.lstm (C2)
func.func @lstm_lengths(%x: tensor<5x2x3xf32>, %w: tensor<16x3xf32>, %r: tensor<16x4xf32>, %b: tensor<32xf32>, %h: tensor<2x4xf32>, %n: tensor<3xi64>) {
  // expected-error @+1 {{'dpc.lstm' op lengths should have shape [2], got 'tensor<3xi64>' (C2)}}
  %y, %hT, %cT = dpc.lstm %x, %w, %r, %b, %h, %h lengths %n : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<3xi64>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

// dpc.lstm_grad (C1)
func.func @lstm_grad_result(%x: tensor<5x2x3xf32>, %w: tensor<16x3xf32>, %r: tensor<16x4xf32>, %b: tensor<32xf32>, %h: tensor<2x4xf32>, %y: tensor<5x2x4xf32>) {
  // expected-error @+1 {{'dpc.lstm_grad' op result gradient 1 should be 'tensor<2x4xf32>', got 'tensor<5x2x4xf32>' (C1)}}
  %g:6 = dpc.lstm_grad %x, %w, %r, %b, %h, %h, %y, %y, %h : (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x3xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<32xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

// dpc.gru (C1)
func.func @gru_output(%x: tensor<5x2x3xf32>, %w: tensor<12x3xf32>, %r: tensor<12x4xf32>, %b: tensor<24xf32>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'dpc.gru' op result 0 should be 'tensor<5x2x4xf32>', got 'tensor<5x2x3xf32>' (C1)}}
  %y, %hT = dpc.gru %x, %w, %r, %b, %h : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>) -> (tensor<5x2x3xf32>, tensor<2x4xf32>)
  return
}

// -----

// dpc.gru (C2)
func.func @gru_lengths(%x: tensor<5x2x3xf32>, %w: tensor<12x3xf32>, %r: tensor<12x4xf32>, %b: tensor<24xf32>, %h: tensor<2x4xf32>, %n: tensor<2x1xi64>) {
  // expected-error @+1 {{'dpc.gru' op lengths should have shape [2], got 'tensor<2x1xi64>' (C2)}}
  %y, %hT = dpc.gru %x, %w, %r, %b, %h lengths %n : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>, tensor<2x1xi64>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

// dpc.gru_grad (C1)
func.func @gru_grad_result(%x: tensor<5x2x3xf32>, %w: tensor<12x3xf32>, %r: tensor<12x4xf32>, %b: tensor<24xf32>, %h: tensor<2x4xf32>, %y: tensor<5x2x4xf32>) {
  // expected-error @+1 {{'dpc.gru_grad' op result 1 should be 'tensor<12x3xf32>', got 'tensor<12x4xf32>' (C1)}}
  %g:5 = dpc.gru_grad %x, %w, %r, %b, %h, %y, %h : (tensor<5x2x3xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x3xf32>, tensor<12x4xf32>, tensor<12x4xf32>, tensor<24xf32>, tensor<2x4xf32>)
  return
}
