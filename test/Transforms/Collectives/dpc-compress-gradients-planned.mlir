// Without an option the pass builds the compression the plan priced; an
// option overrides it.
// RUN: dpc-opt %s -dpc-compress-gradients | FileCheck %s
// RUN: dpc-opt %s -dpc-compress-gradients=compression=none | FileCheck %s --check-prefix=NONE
// RUN: sed 's/"fp16"/"fp8"/' %s | not dpc-opt -dpc-compress-gradients -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not dpc-opt %s -dpc-compress-gradients=compression=auto -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO

// AUTO: error: --grad-compression=auto is not a compression: none, bf16, fp16 or topk:RATIO with 0 < RATIO <= 1 (a choice among them is the planner's to make: -dpc-plan)
// BAD: error: dpc.plan's grad_compression ("fp8") is not a compression: none, bf16, fp16 or topk:RATIO with 0 < RATIO <= 1

module attributes {dpc.plan = {grad_compression = "fp16"}} {
  dpc.mesh @plan ["dp"=2]
  // CHECK-LABEL: func.func @reduce
  // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<512xf16>
  // NONE: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> : tensor<512xf32>
  func.func @reduce(%g: tensor<512xf32>) -> tensor<512xf32> {
    %0 = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<512xf32>
    return %0 : tensor<512xf32>
  }
}
