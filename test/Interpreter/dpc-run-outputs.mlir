// dpc-run --interpret: results are named by dpc.output or dpc.state, the
// file names escape '/' and '%', fp64 writes every float as float64, and
// a .onnx file is not run yet.

// RUN: rm -rf %t && dpc-run --interpret %s --output-dir %t/fp32 --print \
// RUN:   | FileCheck %s --check-prefix=FP32
// FP32: logits: float32[2] = [0.333333343, -1]
// FP32: layer/0%scale: float32[1] = [0.5]
// FP32: bn.running_mean: float32[1] = [0.25]
// FP32: mask: bool[2] = [true, false]
// FP32: half: float16[1] = [0.333251953]
// FP32: brain: bfloat16[1] = [0.333984375]
// RUN: ls %t/fp32 | FileCheck %s --check-prefix=FILES
// FILES: bn.running_mean.npy
// FILES: brain.npy
// FILES: half.npy
// FILES: layer%2F0%25scale.npy
// FILES: logits.npy
// FILES: mask.npy

// RUN: dpc-run --interpret %s --precision fp64 --print | FileCheck %s --check-prefix=FP64
// FP64: logits: float64[2] = [0.33333333333333331, -1]
// FP64: half: float64[1] = [0.33333333333333331]

// An ONNX file goes through the importer, which names the file it cannot read.
// RUN: not dpc-run --interpret %t/model.onnx --print 2>&1 | FileCheck %s --check-prefix=ONNX
// ONNX: {{.*}}model.onnx: error: cannot open '{{.*}}model.onnx'

// A directory that is not an artifact is named as such.
// RUN: not dpc-run %t/model.dpc 2>&1 | FileCheck %s --check-prefix=ARTIFACT
// ARTIFACT: dpc-run: error: {{.*}}model.dpc: not a dpc artifact (no readable manifest.json

func.func @main() -> (tensor<2xf32> {dpc.output = "logits"},
                      tensor<1xf32> {dpc.output = "layer/0%scale"},
                      tensor<1xf32> {dpc.state = "bn.running_mean"},
                      tensor<2xi1> {dpc.output = "mask"},
                      tensor<1xf16> {dpc.output = "half"},
                      tensor<1xbf16> {dpc.output = "brain"}) {
  %one = dpc.constant dense<[1.0, -3.0]> : tensor<2xf32>
  %three = dpc.constant dense<3.0> : tensor<f32>
  %logits = dpc.div %one, %three : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %scale = dpc.constant dense<0.5> : tensor<1xf32>
  %mean = dpc.constant dense<0.25> : tensor<1xf32>
  %zero = dpc.constant dense<0.0> : tensor<2xf32>
  %mask = dpc.compare gt, %logits, %zero : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %third = dpc.slice %logits {start = array<i64: 0>, limit = array<i64: 1>, stride = array<i64: 1>} : tensor<2xf32> -> tensor<1xf32>
  %half = dpc.cast %third : tensor<1xf32> -> tensor<1xf16>
  %brain = dpc.cast %third : tensor<1xf32> -> tensor<1xbf16>
  return %logits, %scale, %mean, %mask, %half, %brain
      : tensor<2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<2xi1>, tensor<1xf16>, tensor<1xbf16>
}
