// RUN: not dpc-opt %s -dpc-topology-aware-collectives -o /dev/null 2>&1 | FileCheck %s

// A dpc.plan whose mesh does not parse is refused, naming it.
// CHECK: error: --cluster=h100-sxm: the plan's mesh: invalid mesh '2xq': 'q' is not a positive integer
module attributes {dpc.plan = {cluster = "h100-sxm", mesh = "2xq"}} {
  dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=1]
  func.func @f(%s: tensor<3xf32>) -> tensor<3xf32> {
    %0 = dpc.all_reduce %s over @plan ["dp"] <sum> : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
