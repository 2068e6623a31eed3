//===- Passes.td - Analysis test passes --------------------*- tablegen -*-===//
//
// The analyses (cost model, later the planner's) are tested through
// `-test-…` passes that write their results onto ops as attributes.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_ANALYSIS_PASSES
#define DPC_ANALYSIS_PASSES

include "mlir/Pass/PassBase.td"

def TestCostModel : Pass<"test-dpc-cost-model"> {
  let summary = "Annotates every op with its predicted time on a cluster";
  let description = [{
    Prices every `CostOpInterface` op on one device of `cluster` with the
    roofline model and writes `dpc.flops`, `dpc.bytes` (i64),
    `dpc.time_us` (f64, microseconds, four significant digits) and
    `dpc.bound` (`"compute"` or `"memory"`). Each function gets the sum of
    its ops' times, and the time to all-reduce the gradients of its
    `dpc.param` arguments over the whole `mesh` with the fastest algorithm
    (`dpc.grad_all_reduce`, `"none"` when there is nothing to reduce).

    ```mlir
    func.func @f(%w: tensor<1024x1024xbf16> {dpc.param = "w"}, ...) {
      %0 = dpc.matmul %x, %w : ...
    // becomes, with mesh=2x8 cluster=h100-sxm
    func.func @f(...) attributes {dpc.cluster = "h100-sxm", dpc.compute_time_us = ...,
        dpc.grad_all_reduce = "hierarchical", dpc.grad_all_reduce_us = ...,
        dpc.mesh = "2x8"} {
      %0 = dpc.matmul %x, %w {dpc.bound = "compute", dpc.bytes = ..., dpc.flops = ...,
                              dpc.time_us = ...} : ...
    ```
  }];
  let options = [
    Option<"mesh", "mesh", "std::string", /*default=*/"\"1\"",
           "Device mesh AxB[xC], outer axes across nodes">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"h100-sxm\"",
           "A cluster preset or a cluster FILE.json">,
  ];
}

#endif // DPC_ANALYSIS_PASSES
