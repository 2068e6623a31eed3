// The interpreter moves a value into the op that reads it last and passes
// it on (a call's argument, a reshape, the function's results); a value
// read again later, or twice by one op, is copied and stays as it was.

// RUN: dpc-run --interpret %s --print | FileCheck %s
// CHECK: result0: float32[2] = [2, 4]
// CHECK: result1: float32[2] = [1, 2]
// CHECK: result2: float32[2] = [4, 8]
// CHECK: result3: float32[2] = [4, 8]
// CHECK: result4: float32[1x2] = [1, 2]
// CHECK: result5: float32[2] = [1, 2]

func.func private @double(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = dpc.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

func.func private @sum(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %0 = dpc.add %x, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

func.func @main() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<2xf32>) {
  %a = dpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // Read again after the call: copied.
  %b = call @double(%a) : (tensor<2xf32>) -> tensor<2xf32>
  // Read twice by one call: copied for both.
  %c = call @sum(%b, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // Read last by the reshape: moved; %a is read again below.
  %d = dpc.reshape %a : tensor<2xf32> -> tensor<1x2xf32>
  %e = dpc.reshape %d : tensor<1x2xf32> -> tensor<2xf32>
  // %c returned twice, %d returned after the reshape that read it.
  return %b, %a, %c, %c, %d, %e : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<2xf32>
}
