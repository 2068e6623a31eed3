// Errors at run time are reported on the op, with its location, and fail
// the run; none of them crashes.

// RUN: not dpc-run --interpret %s --function gather --print 2>&1 | FileCheck %s --check-prefix=GATHER
// GATHER: runtime-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: index 4 (element 1 of the indices) is out of range for axis 0 of size 4
// RUN: not dpc-run --interpret %s --function unsupported --print 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: the interpreter does not support 'tensor.empty'
// RUN: not dpc-run --interpret %s --function label --print 2>&1 | FileCheck %s --check-prefix=LABEL
// LABEL: error: label 10 (element 1 of the labels) is neither a class in [0, 10) nor the ignore_index -100
// RUN: not dpc-run --interpret %s --function divide --print 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: error: integer division by zero
// RUN: not dpc-run --interpret %s --function narrow --print 2>&1 | FileCheck %s --check-prefix=NARROW
// NARROW: error: cannot cast 3.000000e+09 to 'i32': out of range
// RUN: not dpc-run --interpret %s --function single --print 2>&1 | FileCheck %s --check-prefix=SINGLE
// SINGLE: error: training-mode batch_norm needs more than one value per channel, got 1
// RUN: not dpc-run --interpret %s --function recursive --print 2>&1 | FileCheck %s --check-prefix=RECURSIVE
// RECURSIVE: error: calls nest deeper than 64 (recursion?)
// RUN: not dpc-run --interpret %s --function f8 --print 2>&1 | FileCheck %s --check-prefix=F8
// F8: error: the interpreter does not support values of type 'tensor<2xf8E4M3FN>'

func.func @gather() -> tensor<2x3xf32> {
  %table = dpc.constant dense<1.0> : tensor<4x3xf32>
  %ids = dpc.constant dense<[0, 4]> : tensor<2xi64>
  %r = dpc.gather %table[%ids] {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

func.func @unsupported() -> tensor<2xf32> {
  %r = tensor.empty() : tensor<2xf32>
  return %r : tensor<2xf32>
}

func.func @label() -> tensor<f32> {
  %logits = dpc.constant dense<0.0> : tensor<2x10xf32>
  %labels = dpc.constant dense<[3, 10]> : tensor<2xi64>
  %r = dpc.softmax_cross_entropy %logits, %labels mean {ignore_index = -100 : i64} : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @divide() -> tensor<2xi64> {
  %x = dpc.constant dense<[4, 5]> : tensor<2xi64>
  %y = dpc.constant dense<[2, 0]> : tensor<2xi64>
  %r = dpc.div %x, %y : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}

func.func @narrow() -> tensor<2xi32> {
  %x = dpc.constant dense<[1.0, 3.0e9]> : tensor<2xf32>
  %r = dpc.cast %x : tensor<2xf32> -> tensor<2xi32>
  return %r : tensor<2xi32>
}

func.func @single() -> tensor<1x2xf32> {
  %x = dpc.constant dense<1.0> : tensor<1x2xf32>
  %c = dpc.constant dense<1.0> : tensor<2xf32>
  %y:5 = dpc.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.9 : f32, training} : tensor<1x2xf32>, tensor<2xf32>
  return %y#0 : tensor<1x2xf32>
}

func.func @recursive() -> tensor<2xf32> {
  %r = func.call @recursive() : () -> tensor<2xf32>
  return %r : tensor<2xf32>
}

func.func @f8() -> tensor<2xf32> {
  %x = arith.constant dense<1.0> : tensor<2xf8E4M3FN>
  %r = dpc.cast %x : tensor<2xf8E4M3FN> -> tensor<2xf32>
  return %r : tensor<2xf32>
}
