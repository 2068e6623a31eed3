// RUN: not dpc-opt %s --emit=cpu-source 2>&1 | FileCheck %s

// An op the backend does not compile is an error on the op, not a crash
// or a half-written file.
func.func @train_step(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32> {
  // CHECK: error: the CPU backend does not compile 'dpc.resize' yet
  %r = dpc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "nearest", coordinate_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  return %r : tensor<1x1x8x8xf32>
}
