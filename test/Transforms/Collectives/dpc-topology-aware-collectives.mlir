// RUN: dpc-opt %s -dpc-topology-aware-collectives -split-input-file | FileCheck %s
// RUN: not dpc-opt %s -dpc-topology-aware-collectives=cluster=nowhere -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: --cluster=nowhere:

// 16 data-parallel devices on two H100 nodes of 8 (the plan's cluster):
// the node boundary cuts the dp axis, so a refined mesh names its parts.
// A small reduction, bound by latency across nodes, goes hierarchical:
// within the node, across nodes on one piece per device, within again. A
// large one stays flat: the flat ring already drives every NIC of the node.
// Every collective records the algorithm the cost model picks for it.
// CHECK: dpc.mesh @plan ["pp"=1, "dp"=16, "tp"=1]
// CHECK-NEXT: dpc.mesh @plan_by_node ["pp"=1, "dp_nodes"=2, "dp_local"=8, "tp"=1]
module attributes {dpc.plan = {cluster = "h100-sxm"}} {
  dpc.mesh @plan ["pp"=1, "dp"=16, "tp"=1]
  // CHECK-LABEL: func.func @grads
  func.func @grads(%g: tensor<4096x2048xf32>, %s: tensor<3xf32>, %t: tensor<1000xf32>)
      -> (tensor<4096x2048xf32>, tensor<3xf32>, tensor<16000xf32>) {
    // CHECK: dpc.all_reduce %{{.*}} over @plan ["dp"] <sum> {dpc.algorithm = "{{ring|tree}}"} : tensor<4096x2048xf32>
    %0 = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<4096x2048xf32>
    // CHECK: %[[F:.*]] = dpc.reshape %{{.*}} : tensor<3xf32> -> tensor<3xf32>
    // CHECK: %[[Z:.*]] = dpc.constant dense<0.000000e+00> : tensor<5xf32>
    // CHECK: %[[P:.*]] = dpc.concat %[[F]], %[[Z]] {axis = 0 : i64} : (tensor<3xf32>, tensor<5xf32>) -> tensor<8xf32>
    // The three parts name the all-reduce they make (for counting its bytes).
    // CHECK: %[[RS:.*]] = dpc.reduce_scatter %[[P]] over @plan_by_node ["dp_local"] <sum> dim 0 {dpc.algorithm = "{{[a-z]*}}", dpc.hierarchical = ["dp"]} : tensor<8xf32> -> tensor<1xf32>
    // CHECK: %[[AR:.*]] = dpc.all_reduce %[[RS]] over @plan_by_node ["dp_nodes"] <sum> {dpc.algorithm = "{{[a-z]*}}", dpc.hierarchical = ["dp"]} : tensor<1xf32>
    // CHECK: %[[AG:.*]] = dpc.all_gather %[[AR]] over @plan_by_node ["dp_local"] dim 0 {dpc.algorithm = "{{[a-z]*}}", dpc.hierarchical = ["dp"]} : tensor<1xf32> -> tensor<8xf32>
    // CHECK: %[[S:.*]] = dpc.slice %[[AG]] {limit = array<i64: 3>, start = array<i64: 0>, stride = array<i64: 1>}
    // CHECK: dpc.reshape %[[S]] : tensor<3xf32> -> tensor<3xf32>
    %1 = dpc.all_reduce %s over @plan ["dp"] <sum> : tensor<3xf32>
    // CHECK: dpc.all_gather %{{.*}} over @plan ["dp"] dim 0 {dpc.algorithm = "{{ring|tree|direct}}"}
    %2 = dpc.all_gather %t over @plan ["dp"] dim 0 : tensor<1000xf32> -> tensor<16000xf32>
    return %0, %1, %2 : tensor<4096x2048xf32>, tensor<3xf32>, tensor<16000xf32>
  }
}

// -----

// Within one node there is nothing to decompose: dp x tp = 2 x 4 devices.
// CHECK-LABEL: func.func @one_node
// CHECK-NOT: @plan_by_node
// CHECK: dpc.all_reduce %{{.*}} over @plan ["dp", "tp"] <sum> {dpc.algorithm
module attributes {dpc.plan = {cluster = "h100-sxm"}} {
  dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=4]
  func.func @one_node(%s: tensor<3xf32>) -> tensor<3xf32> {
    %0 = dpc.all_reduce %s over @plan ["dp", "tp"] <sum> : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}

// -----

// The plan's mesh is the topology: --mesh=2x4 is two nodes of 4 H100s, so
// 8 data-parallel devices cross a node boundary and a small reduction
// goes hierarchical, as the 16 devices above do on nodes of 8.
// CHECK-LABEL: func.func @two_nodes_of_four
// CHECK: dpc.reduce_scatter %{{.*}} over @plan_by_node ["dp_local"]
// CHECK: dpc.all_reduce %{{.*}} over @plan_by_node ["dp_nodes"]
module attributes {dpc.plan = {cluster = "h100-sxm", mesh = "2x4"}} {
  dpc.mesh @plan ["pp"=1, "dp"=8, "tp"=1]
  func.func @two_nodes_of_four(%s: tensor<3xf32>) -> tensor<3xf32> {
    %0 = dpc.all_reduce %s over @plan ["dp"] <sum> : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
