//===- Passes.td - Analysis test passes --------------------*- tablegen -*-===//
//
// The planner (`-dpc-plan`), and the `-test-…` passes through which the
// analyses are tested: they write their results onto ops as attributes.
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

def TestFusedTraffic : Pass<"test-dpc-fused-traffic"> {
  let summary = "Annotates every op with its memory traffic once fused";
  let description = [{
    Runs the fused-traffic analysis over each function body and writes
    `dpc.fused_bytes` (i64) on every `CostOpInterface` op, and
    `dpc.recomputed` on ops whose results an online normalization keeps out
    of memory (the backward pass recomputes them). Returned values are
    always written.
  }];
}

def Plan : Pass<"dpc-plan", "::mlir::ModuleOp"> {
  let summary = "Chooses the parallel plan of the training step on a mesh";
  let description = [{
    Plans `@forward_backward` (built by `dpc-opt --train`) on `mesh` of
    `cluster`: data-, tensor- and pipeline-parallel degrees, each op's
    tensor-parallel split from its sharding rule (an integer program solved
    with CBC, once per repeated layer), pipeline stages, micro-batches,
    schedule, recomputation and ZeRO stage, minimizing the cost model's
    step time within `memory-limit` GiB per device (default: the device's
    memory). `dp`, `tp` and `pp` fix degrees (0: free). A `dpc.sharding`
    already on a forward op or argument of `@forward_backward` fixes that
    value's sharding: only strategies that give it are searched, so a
    planned module replans to the same plan and an edited string overrides
    one choice. A malformed one is an error at its op; one that no
    configuration can give fails naming the value and its strategies.

    Writes `dpc.plan` (a dictionary) and `dpc.mesh @plan` on the module,
    and on every forward op of `@forward_backward` its `#dpc.sharding` (one
    per result), the layouts its strategy takes its operands in
    (`dpc.operand_shardings`) and its `dpc.stage`, and `#dpc.sharding` on
    the function's arguments (docs/sharding.md). `-dpc-complete-shardings`
    then follows the plan through the backward pass and the optimizer
    (`-dpc-plan-pipeline` runs both, and `-dpc-insert-reshards`). A planned
    module's reshards are dropped first. `print-table` prints the plan's
    table to stdout; `report` writes it as JSON. A request that cannot be met (degrees that do not
    multiply to the mesh, a model that does not fit) fails with a message
    that says which memory is short and by how much.
  }];
  let options = [
    Option<"mesh", "mesh", "std::string", /*default=*/"\"1\"",
           "Device mesh AxB[xC], outer axes across nodes">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"h100-sxm\"",
           "A cluster preset or a cluster FILE.json">,
    Option<"memoryLimit", "memory-limit", "double", /*default=*/"0",
           "GiB per device (0: the device's capacity)">,
    Option<"dataParallel", "dp", "int64_t", /*default=*/"0",
           "Data-parallel degree (0: chosen)">,
    Option<"tensorParallel", "tp", "int64_t", /*default=*/"0",
           "Tensor-parallel degree (0: chosen)">,
    Option<"pipelineParallel", "pp", "int64_t", /*default=*/"0",
           "Pipeline stages (0: chosen)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the plan as JSON to this file">,
    Option<"printTable", "print-table", "bool", /*default=*/"false",
           "Print the plan's table to stdout">,
    Option<"annotate", "annotate", "bool", /*default=*/"true",
           "Write the plan onto the IR (off when only the table or report "
           "is wanted, as for dpc-opt --plan-only)">,
    Option<"exposedTensorComm", "exposed-tp-comm", "double",
           /*default=*/"0.5",
           "Part of each tensor-parallel collective left exposed after "
           "overlapping it with the neighbouring contraction">,
  ];
}

def TestLayerSegments : Pass<"test-dpc-layer-segments", "::mlir::ModuleOp"> {
  let summary = "Annotates the forward pass with its segments and repeats";
  let description = [{
    Writes on every forward op of `@forward_backward` its segment
    (`dpc.segment`) and, for ops that repeat an earlier layer, the segment
    of the op they stand for (`dpc.repeats_segment`); on the function, the
    regions as `dpc.regions = [[first, period, repeats], ...]`.
  }];
}

def CompleteShardings : Pass<"dpc-complete-shardings", "ModuleOp"> {
  let summary = "Shards every value the plan implies: backward and optimizer";
  let description = [{
    Reads the plan `-dpc-plan` wrote (`dpc.mesh @plan`, `dpc.plan` and the
    shardings of the forward ops and arguments of `@forward_backward`) and
    writes a `#dpc.sharding` on every other value of `@forward_backward` and
    `@train_step`, with each op's `dpc.stage` and the layouts its strategy
    takes its operands in (`dpc.operand_shardings`). Each op takes the
    strategy of its sharding rule that reshards its operands least;
    gradients leave `@forward_backward` laid out as their parameters (partial
    over `dp` while the reduction is pending), `@train_step` receives them
    reduced (reduce-scattered under ZeRO-2/3), keeps optimizer state split
    over `dp` under ZeRO-1 and up and parameters under ZeRO-3. The cluster is
    the one `dpc.plan` names.
  }];
}

def TestShardingIlp : Pass<"test-dpc-sharding-ilp", "::mlir::ModuleOp"> {
  let summary = "Solves the intra-op problem by ILP and by enumeration";
  let description = [{
    Builds the intra-op sharding problem of `@forward_backward` for a stage
    of `dp` x `tp` devices and micro-batches of `micro-batch` samples per
    replica on `cluster`, with memory priced at `memory-price` times the
    fastest choice's time per byte, and solves it with CBC and, when it has
    at most 10^6 choices, by trying every choice. Writes
    `dpc.ilp_objective`, `dpc.exhaustive_objective` (seconds, six
    significant digits) and `dpc.search_space` on the function, and the
    ILP's `dpc.sharding` on every forward op.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"h100-sxm\"",
           "A cluster preset or a cluster FILE.json">,
    Option<"dataParallel", "dp", "int64_t", /*default=*/"1", "">,
    Option<"tensorParallel", "tp", "int64_t", /*default=*/"2", "">,
    Option<"microBatch", "micro-batch", "int64_t", /*default=*/"1", "">,
    Option<"memoryPrice", "memory-price", "double", /*default=*/"0", "">,
  ];
}

#endif // DPC_ANALYSIS_PASSES
