// The forward pass of a two-layer perceptron with its loss, as the ONNX
// importer writes it: parameters and inputs are marked arguments.
func.func @forward(%x: tensor<32x784xf32> {dpc.input = "x"},
                   %labels: tensor<32xi64> {dpc.input = "labels"},
                   %w1: tensor<784x256xf32> {dpc.param = "fc1.weight"},
                   %b1: tensor<256xf32> {dpc.param = "fc1.bias"},
                   %w2: tensor<256x2147483648xf32> {dpc.param = "fc2.weight"},
                   %b2: tensor<2147483648xf32> {dpc.param = "fc2.bias"}) -> (tensor<f32> {dpc.output = "loss"}) {
  %0 = dpc.matmul %x, %w1 : (tensor<32x784xf32>, tensor<784x256xf32>) -> tensor<32x256xf32>
  %1 = dpc.add %0, %b1 : (tensor<32x256xf32>, tensor<256xf32>) -> tensor<32x256xf32>
  %2 = dpc.relu %1 : tensor<32x256xf32>
  %3 = dpc.matmul %2, %w2 : (tensor<32x256xf32>, tensor<256x2147483648xf32>) -> tensor<32x2147483648xf32>
  %4 = dpc.add %3, %b2 : (tensor<32x2147483648xf32>, tensor<2147483648xf32>) -> tensor<32x2147483648xf32>
  %loss = dpc.softmax_cross_entropy %4, %labels mean {ignore_index = -100 : i64}
      : (tensor<32x2147483648xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
