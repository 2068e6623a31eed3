// RUN: not dpc-opt %s --emit=cuda-source 2>&1 | FileCheck %s

// An op the CUDA backend does not compile yet is an error on the op.
func.func @train_step(%g: tensor<64xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  // CHECK: error: the CUDA backend does not compile 'dpc.top_k' yet
  %v, %i = dpc.top_k %g k 4 : tensor<64xf32> -> tensor<4xf32>, tensor<4xi64>
  return %v, %i : tensor<4xf32>, tensor<4xi64>
}
