//===- Passes.td - dpc passes ------------------------------*- tablegen -*-===//
//
// Every dpc pass and analysis test pass. Analyses are tested through
// `-test-…` passes that write their results onto ops as attributes.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PASSES
#define DPC_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TestOpCost : Pass<"test-dpc-op-cost"> {
  let summary = "Annotates every op with its cost-interface numbers";
  let description = [{
    Writes `dpc.flops` and `dpc.bytes` (as i64 attributes) onto every op
    that implements `CostOpInterface`, so that FileCheck can check the
    numbers the cost model will read.

    ```mlir
    %c = dpc.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    // becomes
    %c = dpc.matmul %a, %b {dpc.bytes = 896 : i64, dpc.flops = 1024 : i64} : ...
    ```
  }];
}

def TestShardingRules : Pass<"test-dpc-sharding-rules"> {
  let summary = "Annotates every op with its sharding rule";
  let description = [{
    Writes the factor form of each `ShardableOpInterface` op's sharding
    rule as the string attribute `dpc.sharding_rule`:

    ```mlir
    %c = dpc.matmul %a, %b {dpc.sharding_rule = "([a,c],[c,b])->([a,b]) {a=4, b=8, c=16 reduction}"} : ...
    ```
  }];
}

#endif // DPC_TRANSFORMS_PASSES
