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
  // Ops without a rule yet are left alone.
  // CHECK: dpc.reshape
  // CHECK-NOT: dpc.sharding_rule
  // CHECK-SAME: -> tensor<64xf32>
  %7 = dpc.reshape %x : tensor<2x4x8xf32> -> tensor<64xf32>
  return
}
