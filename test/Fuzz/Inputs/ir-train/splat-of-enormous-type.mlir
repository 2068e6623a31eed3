func.func @forward(%x: tensor<4xf32> {dpc.input = "x"},
                   %w: tensor<4xf32> {dpc.param = "w"}) -> (tensor<f32> {dpc.output = "loss"}) {
  %c = dpc.constant dense<1.0> : tensor<1099511627776x1099511627776xf32>
  %s = dpc.reduce_sum %c [0, 1] : tensor<1099511627776x1099511627776xf32> -> tensor<f32>
  %y = dpc.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = dpc.reduce_sum %y [0] : tensor<4xf32> -> tensor<f32>
  %l = dpc.add %s, %t : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
