func.func @forward(%x: tensor<4xf32> {dpc.input = "x"}) -> tensor<f32> {
  %0 = dpc.relu %x : tensor<4xf32>
