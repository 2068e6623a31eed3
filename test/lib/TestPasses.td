//===- TestPasses.td - Passes that expose analyses to tests -*- tablegen -*-===//
//
// Analyses are tested through `-test-…` passes that write their results
// onto ops as attributes, which FileCheck reads. They are no part of the
// production libraries.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TEST_PASSES
#define DPC_TEST_PASSES

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

def TestScheduleTime : Pass<"test-dpc-schedule-time", "::mlir::ModuleOp"> {
  let summary = "Annotates each program of a partitioned module with the "
                "time of its schedule";
  let description = [{
    Simulates each program (ScheduleTime.h) as one rank runs it, its ops in
    order on a compute stream and its collectives in order on a
    communication thread, started where the program starts them and waited
    for at their `dpc.wait`, with the cost model's times on the plan's
    cluster (or `cluster`), and writes the seconds onto it: the compute,
    all communication, the part the compute stream waited for, the same
    two for the tensor axis, and the whole.

    ```mlir
    func.func @train_step(...) attributes {dpc.schedule_time = {communication = 2.1e-05 : f64, compute = 1.2e-04 : f64, exposed = 8.0e-06 : f64, total = 1.3e-04 : f64, tp_communication = ..., tp_exposed = ...}, ...}
    ```
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Cluster preset or file (default: the plan's)">,
  ];
}

def TestCommunicationVolume
    : Pass<"test-dpc-communication-volume", "::mlir::ModuleOp"> {
  let summary = "Annotates each program of a partitioned module with the "
                "bytes a rank sends per step";
  let description = [{
    Writes onto each program (a partitioned function no other calls: the
    step, or each pipeline stage's step) the bytes one of its ranks sends
    in a run of it, by the plan's axis that carries them, as the cost model
    counts a collective (getSentBytes), rounded to whole bytes:

    ```mlir
    func.func @train_step(...) attributes {dpc.sent_bytes = {dp = 3328 : i64, pp = 0 : i64, tp = 128 : i64}, ...}
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
    of memory (the backward pass recomputes them), which only a backend
    with a fused attention kernel does (`fused-attention`). Returned values
    are always written.
  }];
  let options = [
    Option<"fusedAttention", "fused-attention", "bool", /*default=*/"false",
           "Assume a fused attention kernel (Cluster::fusedAttention)">,
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

def TestStoredActivations : Pass<"test-dpc-stored-activations", "::mlir::ModuleOp"> {
  let summary = "Annotates the forward values the cost model stores for the backward pass";
  let description = [{
    Writes on every forward op of `@forward_backward` whose results the
    planner counts as stored activations `dpc.stored_bytes` (i64, per
    result, 0 for a result not stored), and on the function
    `dpc.stored_activation_bytes`: their sum, the activations one device
    holds for a whole batch without recomputation.
  }];
  let options = [
    Option<"fusedAttention", "fused-attention", "bool", /*default=*/"false",
           "Assume a fused attention kernel (Cluster::fusedAttention)">,
  ];
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

#endif // DPC_TEST_PASSES

def TestBufferPlan : Pass<"test-dpc-buffer-plan", "::mlir::func::FuncOp"> {
  let summary = "Annotates every op with where the CPU backend keeps its results";
  let description = [{
    Runs the CPU backend's fusion choice and buffer plan over each
    single-block function and writes on every op with tensor results
    `dpc.buffer`: per result, its byte offset in the arena (i64), `"fused"`
    for an op computed inside its users, `"view"` for a result stored in
    another value's storage (reshape, wait, a slice of whole rows), or
    `"outside"` (a constant); and `dpc.arena_bytes` and
    `dpc.unshared_bytes` on the function.
  }];
}
