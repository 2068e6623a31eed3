// Constants: dense elements (splat or not) and dense resources, whose blob
// holds the elements in their storage layout, for dpc.constant and
// arith.constant alike.

// RUN: dpc-run --interpret %s --print | FileCheck %s
// CHECK: result0: float32[2] = [1, -3]
// CHECK: result1: bool[3] = [true, false, true]
// CHECK: result2: float16[2] = [1, -2]
// CHECK: result3: int64[2] = [-1, 5]
// CHECK: result4: int32[2x2] = [7, 7, 7, 7]

func.func @main() -> (tensor<2xf32>, tensor<3xi1>, tensor<2xf16>, tensor<2xi64>, tensor<2x2xi32>) {
  %a = dpc.constant dense_resource<blob_f32> : tensor<2xf32>
  %b = arith.constant dense_resource<blob_i1> : tensor<3xi1>
  %c = dpc.constant dense_resource<blob_f16> : tensor<2xf16>
  %d = dpc.constant dense_resource<blob_i64> : tensor<2xi64>
  %e = arith.constant dense<7> : tensor<2x2xi32>
  return %a, %b, %c, %d, %e : tensor<2xf32>, tensor<3xi1>, tensor<2xf16>, tensor<2xi64>, tensor<2x2xi32>
}
{-#
  dialect_resources: {
    builtin: {
      blob_f32: "0x040000000000803F000040C0",
      blob_i1: "0x01000000010001",
      blob_f16: "0x02000000003C00C0",
      blob_i64: "0x08000000FFFFFFFFFFFFFFFF0500000000000000"
    }
  }
#-}
