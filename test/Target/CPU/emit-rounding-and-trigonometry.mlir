// RUN: dpc-opt %s --emit=cpu-source | FileCheck %s

// Trigonometric, hyperbolic and rounding ops and the remainder are formulas
// of <cmath>, fused into one loop; Round is nearbyint (halves to even in the default
// rounding mode), as ONNX's Round and numpy.round are.
// CHECK: __attribute__((noinline)) void dpc_program_0_loop0(
// CHECK: std::sin(
// CHECK: std::cos(
// CHECK: std::tan(
// CHECK: std::asin(
// CHECK: std::acos(
// CHECK: std::atan(
// CHECK: std::sinh(
// CHECK: std::cosh(
// CHECK: std::asinh(
// CHECK: std::acosh(
// CHECK: std::atanh(
// CHECK: std::floor(
// CHECK: std::ceil(
// CHECK: std::nearbyint(
// The floor remainder moves C's fmod to the divisor's sign.
// CHECK: (std::fmod(t13, x1) != 0 && ((std::fmod(t13, x1) < 0) != ((x1) < 0)) ? std::fmod(t13, x1) + (x1) : std::fmod(t13, x1))
// An integer remainder checks its divisor, and -1 (INT64_MIN % -1 traps).
// CHECK: void dpc_program_0_loop1(
// CHECK: ((x1) == 0 ? (dpc_divisor_zero = true, int64_t(0)) : (x1) == -1 ? int64_t(0) : (x0) % (x1))
func.func @train_step(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %i: tensor<6xi64>,
                      %j: tensor<6xi64>) -> (tensor<4x8xf32>, tensor<6xi64>) {
  %0 = dpc.sin %x : tensor<4x8xf32>
  %1 = dpc.cos %0 : tensor<4x8xf32>
  %2 = dpc.tan %1 : tensor<4x8xf32>
  %3 = dpc.asin %2 : tensor<4x8xf32>
  %4 = dpc.acos %3 : tensor<4x8xf32>
  %5 = dpc.atan %4 : tensor<4x8xf32>
  %6 = dpc.sinh %5 : tensor<4x8xf32>
  %7 = dpc.cosh %6 : tensor<4x8xf32>
  %8 = dpc.asinh %7 : tensor<4x8xf32>
  %9 = dpc.acosh %8 : tensor<4x8xf32>
  %10 = dpc.atanh %9 : tensor<4x8xf32>
  %11 = dpc.floor %10 : tensor<4x8xf32>
  %12 = dpc.ceil %11 : tensor<4x8xf32>
  %13 = dpc.round %12 : tensor<4x8xf32>
  %14 = dpc.mod %13, %y {floor_mod} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %15 = dpc.mod %i, %j : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
  return %14, %15 : tensor<4x8xf32>, tensor<6xi64>
}
