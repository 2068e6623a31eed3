//===- Passes.td - dpc passes ------------------------------*- tablegen -*-===//
//
// Every dpc pass. The analyses' `-test-…` passes are in test/lib.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TRANSFORMS_PASSES
#define DPC_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"



//===----------------------------------------------------------------------===//
// Training step (Transforms/Autodiff)
//===----------------------------------------------------------------------===//

def Differentiate : Pass<"dpc-differentiate", "ModuleOp"> {
  let summary = "Adds the reverse-mode gradient of a model's loss";
  let description = [{
    Clones `@forward` (or `function`) into `@forward_backward` (`@<function>_backward`), which returns everything
    `@forward` returns (the loss result marked `dpc.loss`) followed by the
    gradient of the loss with respect to every `dpc.param` argument (each
    marked `dpc.grad = "<param>"`, zeros for a parameter the loss does not
    depend on). Each op on a path from a parameter to the loss builds its
    own vector-Jacobian product through `DifferentiableOpInterface`;
    gradients of values used several times are summed. State updates
    (BatchNorm running statistics) pass through undifferentiated.

    ```mlir
    func.func @forward(%x {dpc.input = "x"}, %w {dpc.param = "w"})
        -> (tensor<f32> {dpc.output = "loss"})
    // gains
    func.func @forward_backward(%x {dpc.input = "x"}, %w {dpc.param = "w"})
        -> (tensor<f32> {dpc.loss, dpc.output = "loss"},
            tensor<16x8xf32> {dpc.grad = "w"})
    ```
  }];
  let options = [
    Option<"lossOutput", "loss", "std::string", /*default=*/"\"\"",
           "The output to minimize; by default the only scalar "
           "floating-point output">,
    Option<"functionName", "function", "std::string",
           /*default=*/"\"forward\"", "The function to differentiate">,
    Option<"lossScale", "loss-scale", "bool", /*default=*/"false",
           "Start the adjoint at a `loss_scale` argument (dpc.hyper) "
           "instead of 1, so fp16 gradients do not underflow">,
  ];
}

def RecomputePointwise : Pass<"dpc-recompute-pointwise", "ModuleOp"> {
  let summary = "Recomputes pointwise forward values in the backward pass "
                "instead of storing them";
  let description = [{
    A forward value the backward pass reads is stored from the forward to
    the backward pass. When it is computed pointwise (its op's sharding
    rule is pointwise and the op is pure) from values that are held for the
    backward pass anyway (arguments, constants, stored values, or values
    recomputed the same way), this pass clones its op, marked backward,
    just before its first backward reader and lets the backward pass read
    the clone: storing it would cost memory for the whole forward and
    backward, recomputing it costs one memory-bound loop. This is the
    fusion PyTorch's eager GeLU backward and XLA's rematerialization make;
    here it is in the IR, so every backend implements it and the cost
    model's stored activations are the IR's own liveness. A GeLU written
    as `x * 0.5 * (1 + erf(x / sqrt 2))` then stores only `x`. Where an
    operand is not held but is smaller than the stored results, the
    operand is kept instead (a bf16 value rather than its f32 cast for a
    layer norm). Values computed once per step from parameters and
    constants alone (a weight's cast, a mask) stay where they are.

    Applies to every function whose ops carry `dpc.phase`; the clone
    computes bit for bit what the original did.
  }];
}

def MixedPrecision : Pass<"dpc-mixed-precision", "ModuleOp"> {
  let summary = "Computes a model in bf16 or fp16, keeping f32 where it matters";
  let description = [{
    Rewrites `@forward` so that every dpc op computes in `precision`,
    except the ops marked `KeepsFullPrecision` (reductions, softmax,
    normalizations, exp/log/pow, losses), which compute in f32. f32
    arguments stay f32 (the parameters are the f32 master weights) and are
    cast where they are used, once each; results are cast back to their
    declared types. Differentiating the rewritten function gives f32
    gradients of the f32 parameters, since the gradient of a cast casts
    back.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "bf16 or fp16">,
    Option<"functionName", "function", "std::string",
           /*default=*/"\"forward\"", "The function to rewrite">,
  ];
}

def AppendLoss : Pass<"dpc-append-loss", "ModuleOp"> {
  let summary = "Appends a loss to a model that does not compute one";
  let description = [{
    Adds a label input and a loss on one output of `@forward`: mean
    cross-entropy of the output (logits, classes on dimension 1) against
    integer labels, or mean squared error against a target of the output's
    type. The loss becomes a new output named `loss`.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"cross-entropy\"",
           "cross-entropy or mse">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "The output the loss reads; by default the only output">,
    Option<"label", "label", "std::string", /*default=*/"\"label\"",
           "Name of the new label input">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "Label ignored by cross-entropy">,
  ];
}

def BuildTrainStep : Pass<"dpc-build-train-step", "ModuleOp"> {
  let summary = "Builds @train_step from @forward_backward and an optimizer";
  let description = [{
    Creates
    `train_step(params, opt_state, state, batch..., lr, step) ->
    (params', opt_state', state', loss, grad_norm)`: it runs
    `@forward_backward` (built for one micro-batch) on each of
    `micro-batches` micro-batches of every batch input (threading the
    state through them): with more than one, the step takes each batch
    input with a new leading dimension, `[micro-batches, batch, ...]`, and
    micro-batch k is its row k, so that a plan splitting the batch over
    data parallelism splits every micro-batch alike. It averages the
    losses and gradients, clips their global norm to `max-grad-norm` (when
    positive), and applies the optimizer. The learning rate and the step number (from 1) are inputs,
    so schedules come from the runtime. Optimizer state is explicit:
    `dpc.opt_state = "<param>:<slot>"` on arguments and results. A model
    with dropout takes the step's random `seed` (i64) after `step`; each
    micro-batch call gets its index, so dropout masks are those of one
    step over the whole batch. A `@forward_backward` differentiated with
    `loss-scale` gets dynamic loss scaling: the scale and its good-step
    count are optimizer state (`amp:loss_scale`, `amp:growth_tracker`), a
    step whose gradients overflow changes no parameter and halves the
    scale, and a `skipped` output says so.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, momentum, adam or adamw">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (momentum)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum (momentum)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 penalty (sgd, momentum, adam) or decoupled decay (adamw)">,
    Option<"maxGradNorm", "max-grad-norm", "double", /*default=*/"0.0",
           "Clip the global gradient norm to this value (0: no clipping)">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Gradient accumulation over this many micro-batches">,
    Option<"lossScaleGrowthInterval", "loss-scale-growth-interval",
           "int64_t", /*default=*/"2000",
           "Good steps after which dynamic loss scaling doubles the scale">,
    Option<"defaultLr", "default-lr", "double", /*default=*/"0.01",
           "The learning rate a runner feeds without a schedule "
           "(written as dpc.default_lr on @train_step)">,
  ];
}

//===----------------------------------------------------------------------===//
// The plan in the IR (Transforms/Planning)
//===----------------------------------------------------------------------===//

def Plan : Pass<"dpc-plan", "ModuleOp"> {
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
    Option<"bucketCapMb", "bucket-cap-mb", "double", /*default=*/"25",
           "The most a bucket of collectives holds, in MiB (ZeRO-3 holds "
           "two of parameters gathered whole)">,
    Option<"dataParallel", "dp", "int64_t", /*default=*/"0",
           "Data-parallel degree (0: chosen)">,
    Option<"tensorParallel", "tp", "int64_t", /*default=*/"0",
           "Tensor-parallel degree (0: chosen)">,
    Option<"pipelineParallel", "pp", "int64_t", /*default=*/"0",
           "Pipeline stages (0: chosen)">,
    Option<"zeroStage", "zero", "int64_t", /*default=*/"-1",
           "Fix the ZeRO stage: 0 (none), 1 (optimizer state), 2 (and "
           "gradients) or 3 (and parameters); -1: the planner chooses">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Fix the pipeline schedule of a plan with stages: gpipe, 1f1b "
           "or interleaved-1f1b (empty: the planner chooses)">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"0",
           "With interleaved-1f1b: model chunks per stage, 2 or 4 (0: the "
           "planner chooses)">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"\"",
           "Fix recomputation: on (keep each layer's input, recompute the "
           "rest), attention (recompute each attention's scores and "
           "probabilities) or off (empty: the planner chooses)">,
    Option<"innerAxis", "inner-axis", "std::string", /*default=*/"\"\"",
           "Fix which axis is innermost, its ranks neighbouring device ids: "
           "tp or dp (empty: the planner chooses)">,
    Option<"gradCompression", "grad-compression", "std::string",
           /*default=*/"\"none\"",
           "How data-parallel gradient reductions are sent: none, bf16, "
           "fp16 or topk:RATIO (-dpc-compress-gradients), or the fastest "
           "of a comma-separated list of them (auto: none,bf16; a "
           "compression only where it makes the step 1% faster); priced, "
           "and recorded in the plan">,
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

def PlanReport : Pass<"dpc-plan-report", "ModuleOp"> {
  let summary = "Prices the plan a module holds and prints its table";
  let description = [{
    Reads the plan from the IR alone (`dpc.plan`, `dpc.mesh @plan`, the
    `#dpc.sharding` of the forward ops and of `@forward_backward`'s
    arguments) and prices exactly that configuration with the cost model:
    the same table (`print-table`, stdout) and JSON report (`report`) that
    `-dpc-plan` writes for the plan it finds. It runs on any planned module,
    including one whose shardings were edited by hand; the module is left
    unchanged.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the plan as JSON to this file">,
    Option<"printTable", "print-table", "bool", /*default=*/"true",
           "Print the plan's table to stdout">,
  ];
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

def RecomputeLayers : Pass<"dpc-recompute-layers", "ModuleOp"> {
  let summary = "Builds a plan's recomputation: the backward pass keeps "
                "each layer's input (or each attention's inputs) and "
                "recomputes the rest";
  let description = [{
    A plan with recomputation (`dpc.plan`'s `recompute`) marks the forward
    ops whose results the backward pass keeps (`dpc.checkpoint`: each
    layer's input, Megatron-LM's full recomputation). Every other forward
    value a backward op reads (one that depends on the batch) is computed
    again: its op and the forward ops between it and the checkpoints are
    cloned, marked backward, with the original's layout and stage, just
    before the first backward op that needs them, so a layer is recomputed
    right before its backward pass and its activations live only until
    then. Values computed once per step from parameters and constants
    alone (a weight's cast) and ops with side effects stay stored. The
    clones compute bit for bit what the originals did (dropout draws its
    mask from its seed and offset).

    A plan with selective recomputation (`recompute_attention`, Megatron-LM's
    selective recomputation) marks instead the forward ops of each
    attention's core (`dpc.recompute`: the scores' contraction, their scale
    and mask, the softmax and what the next contraction reads of it): those
    are cloned into the backward pass the same way, reading the stored
    queries and keys, so that no scores or probabilities are kept.

    Runs after `-dpc-insert-reshards` (the reshards inside a layer are
    recomputed with it); does nothing for a plan without recomputation.
  }];
}

def InsertReshards : Pass<"dpc-insert-reshards", "ModuleOp"> {
  let summary = "Makes every change of layout in a planned step a dpc.reshard";
  let description = [{
    The planner writes, on each op, the layouts of its results
    (`dpc.sharding`) and the layouts its chosen strategy takes its operands
    in (`dpc.operand_shardings`). Where an operand lies otherwise, this
    pass puts a `dpc.reshard` to the expected layout before the op (one per
    value and layout), and drops `dpc.operand_shardings`. Calls take their
    arguments as the callee's signature says and returns give results as
    the function's signature says; a call result declared otherwise than
    the callee returns it (a gradient that leaves `@forward_backward` as a
    partial sum and is used reduced) gets a reshard after the call.

    ```mlir
    %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]} ...
    %1 = dpc.relu %0 {dpc.operand_shardings = [#dpc.sharding<@plan, [dp, *]>],
                      dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} ...
    // becomes
    %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]} ...
    %r = dpc.reshard %0 <@plan, [dp, *]> : tensor<8x16xf32>
    %1 = dpc.relu %r {dpc.sharding = [#dpc.sharding<@plan, [dp, *]>]} ...
    ```

    Two layouts that differ only in axes of size 1, or in the order of
    their partial axes, are the same and need no reshard.
  }];
}

def Partition : Pass<"dpc-partition", "ModuleOp"> {
  let summary = "Turns the planned step into the program each rank runs";
  let description = [{
    Runs after `-dpc-insert-reshards`, on functions whose arguments carry
    shardings. Every value takes the type of one device's block of it (each
    dimension divided by the sizes of the axes that split it); each op
    rewrites itself for its local operands through the `partition` method of
    its sharding interface (a slice's limits, a count-weighted mean loss);
    each `dpc.reshard` becomes the collectives that move the blocks:
    pending partial results reduced by `dpc.all_reduce`, or by
    `dpc.reduce_scatter` where the target splits the reduced axes, an axis
    moving between dimensions by `dpc.all_to_all`, splits undone by
    `dpc.all_gather` and made by `dpc.all_slice`. Functions are marked
    `dpc.partitioned`; their argument and result shardings stay, now saying
    how the global values lie on the mesh.

    ```mlir
    %0 = dpc.matmul %x, %w {dpc.sharding = [#dpc.sharding<@plan, [dp, *], partial = [tp : sum]>]}
        : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = dpc.reshard %0 <@plan, [dp, *]> : tensor<8x4xf32>
    // becomes, on mesh ["dp"=2, "tp"=2]
    %0 = dpc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    %1 = dpc.all_reduce %0 over @plan ["tp"] <sum> : tensor<4x4xf32>
    ```

    A step planned on several pipeline stages first becomes one program
    per stage (`@train_step.stage<s>`, marked `dpc.pipeline_stage`): the
    micro-batch calls inlined, each stage's ops kept, values crossing
    stages sent and received over the `pp` axis, each program ordered by
    `schedule` (`gpipe`, `1f1b`, or `interleaved-1f1b` for a plan of
    several model chunks per stage, whose ops' `dpc.stage` is the pipeline
    position chunk * pp + stage; default: the plan's), returning the
    results its stage computes. Each program is then partitioned as above.
  }];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Pipeline schedule: gpipe, 1f1b or interleaved-1f1b (default: "
           "the plan's)">,
  ];
}

def BucketGradients : Pass<"dpc-bucket-gradients", "ModuleOp"> {
  let summary = "Fuses the gradient all-reduces (and ZeRO's gradient "
                "reduce-scatters and parameter all-gathers) of a "
                "partitioned step into buckets";
  let description = [{
    Each all-reduce costs a latency; one over many tensors costs it once
    (PyTorch DDP's 25 MB buckets). Walking each block in program order, that
    is in the order the backward pass produces the gradients, all-reduces
    over the same group with the same kind and element type join a bucket
    of at most `bucket-cap-mb` MiB. A bucket becomes one `dpc.all_reduce`
    of its members flattened and concatenated, placed where its last member
    was, its pieces sliced back out. A member joins only if no op reads the
    earlier members' results before that point, so reductions whose result
    the next op needs (tensor-parallel ones) stay alone; a tensor larger
    than the cap is a bucket of its own. All-gathers along dimension 0 (the
    updated parameter blocks of ZeRO) are bucketed alike: one all-gather of
    the concatenated blocks, each parameter concatenated back from its piece
    of every rank's part; the cap bounds the gathered bucket.
    Reduce-scatters along dimension 0 (ZeRO's gradients) bucket as rows:
    each member of n elements over k ranks is reshaped to k rows of n/k, the
    rows are concatenated side by side, and one reduce-scatter of the k-row
    bucket gives each rank its block of every member in turn; the cap
    bounds what the bucket sends, the members whole. Gathers of the
    function's arguments (ZeRO-3's parameter blocks, gathered in each pass
    that reads them) are first moved to just before their first reader; a
    bucket of them is placed where its first member was and never spans two
    passes, so buckets follow the order in which each pass reads the
    parameters.

    ```mlir
    %a = dpc.all_reduce %ga over @plan ["dp"] <sum> : tensor<16x32xf32>
    %b = dpc.all_reduce %gb over @plan ["dp"] <sum> : tensor<32xf32>
    // becomes
    %fa = dpc.reshape %ga : tensor<16x32xf32> -> tensor<512xf32>
    %fb = dpc.reshape %gb : tensor<32xf32> -> tensor<32xf32>
    %c = dpc.concat %fa, %fb {axis = 0 : i64} : ... -> tensor<544xf32>
    %r = dpc.all_reduce %c over @plan ["dp"] <sum> : tensor<544xf32>
    %a = ... dpc.slice %r [0, 512) and dpc.reshape back
    ```
  }];
  let options = [
    Option<"bucketCapMb", "bucket-cap-mb", "double", /*default=*/"25",
           "The most a bucket holds, in MiB">,
  ];
}

def CompressGradients : Pass<"dpc-compress-gradients", "ModuleOp"> {
  let summary = "Sends data-parallel gradient reductions in bf16 or fp16";
  let description = [{
    Each sum or mean all-reduce or reduce-scatter of a floating-point tensor
    over a group that includes the data-parallel mesh axis (`dp`, as the
    plan names it) is cast to `compression` before the collective and back
    to its own type after it, halving the bytes sent for fp32 gradients.
    Scalars (the loss, sample counts) and reductions over other axes
    (tensor-parallel activations) keep their precision. Off unless
    `compression` or the plan's `grad_compression` (written by `-dpc-plan`,
    which priced it) names one.

    `topk:RATIO` sends, of each such all-reduce of n elements in a
    partitioned function (`dpc.partitioned`), only the
    k = ceil(RATIO n) entries of largest magnitude after adding what the rank
    left unsent at the previous step (error feedback): values and indices
    are all-gathered and summed into the dense result, and the rest is the
    rank's new residual. The residuals are state of the step: every
    function holding such a reduction, and every function calling one,
    takes them as extra arguments and returns them updated (calls chain
    them); the step function marks them `dpc.opt_state =
    "gradient<i>:topk_residual"`, each laid out as one row per device of the
    mesh. A remark reports the bytes sent against the dense gradients.

    ```mlir
    %r = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<512xf32>
    // becomes, with compression=bf16
    %c = dpc.cast %g : tensor<512xf32> -> tensor<512xbf16>
    %s = dpc.all_reduce %c over @plan ["dp"] <sum> : tensor<512xbf16>
    %r = dpc.cast %s : tensor<512xbf16> -> tensor<512xf32>
    ```
  }];
  let options = [
    Option<"compression", "compression", "std::string", /*default=*/"\"\"",
           "none, bf16, fp16 or topk:RATIO (empty: the plan's "
           "grad_compression, none without one)">,
  ];
}

def ReduceInLastMicroBatch : Pass<"dpc-reduce-in-last-micro-batch", "ModuleOp"> {
  let summary = "Reduces accumulated gradients inside the last micro-batch's backward pass";
  let description = [{
    A step of several micro-batches sums each gradient over them as a
    pending (partial) value and reduces it once. This pass inlines the last
    call of each function a function calls more than once (the step's last
    micro-batch), then moves each all-reduce and reduce-scatter of the
    step (not of a forward or backward pass) over a group within one
    pipeline stage, with the step's pure ops that make its operand (the
    accumulation, casts, reshapes), to just after the last value they read
    is made. A gradient's reduction then follows its last micro-batch's
    gradient inside the backward pass, where -dpc-bucket-gradients buckets
    it and -dpc-overlap-collectives overlaps it with the rest of the pass.
    A reduction that reads another collective's result (a gradient norm
    over shards) stays where it is; ops moved after the same op keep their
    order, so the ranks of a group issue their collectives in one order.

    ```mlir
    %g0:2 = call @forward_backward(...)
    %g1:2 = call @forward_backward(...)
    %s = dpc.add %g0#1, %g1#1 {dpc.phase = #dpc.phase<optimizer>}
    %r = dpc.all_reduce %s over @plan ["dp"] <sum>
    // becomes
    %g0:2 = call @forward_backward(...)
    ... // the body of @forward_backward, until it makes %g1
    %s = dpc.add %g0#1, %g1 {dpc.phase = #dpc.phase<optimizer>}
    %r = dpc.all_reduce %s over @plan ["dp"] <sum>
    ... // the rest of its backward pass
    ```
  }];
}

def OverlapCollectives : Pass<"dpc-overlap-collectives", "ModuleOp"> {
  let summary = "Makes collectives asynchronous start/wait pairs placed for overlap";
  let description = [{
    Moves the pure ops that read collective results as late as their own
    readers allow; then each collective that moves data (all-reduce,
    reduce-scatter, all-gather, all-to-all) starts right after the op that
    makes its operand, marked `async`, and a `dpc.wait` goes right before
    the first op that reads its result. What runs between the two overlaps
    the communication: the rest of the backward pass under a gradient
    reduction, independent compute under a tensor-parallel exchange.
    Collectives keep their relative order where they start after the same
    op, so every rank issues them in the same order.

    ```mlir
    %g = dpc.matmul ...
    %x = ... // independent compute
    %r = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<64xf32>
    %u = dpc.neg %r : tensor<64xf32>
    // becomes
    %g = dpc.matmul ...
    %r = dpc.all_reduce %g over @plan ["dp"] <sum> {async} : tensor<64xf32>
    %x = ...
    %w = dpc.wait %r : tensor<64xf32>
    %u = dpc.neg %w : tensor<64xf32>
    ```
  }];
}

def TopologyAwareCollectives : Pass<"dpc-topology-aware-collectives", "ModuleOp"> {
  let summary = "Chooses each collective's algorithm for the cluster's links";
  let description = [{
    Prices each collective of a partitioned program with the cost model on
    `cluster` (default: the one `dpc.plan` names) and records the fastest
    flat algorithm for its message size and links as `dpc.algorithm`
    (`ring`, `tree` or `direct`). An all-reduce over a group spanning
    nodes becomes hierarchical where the cost model prices that faster: a
    reduce-scatter within each node, an all-reduce across nodes on the
    1/k each device owns, an all-gather within the node. Devices lie on
    nodes by their position in the mesh (the inner axes within a node);
    when the node boundary cuts an axis (16 data-parallel devices on two
    nodes of 8), the pass adds a refined mesh `@<mesh>_by_node` with that
    axis split into `<axis>_nodes` and `<axis>_local`, the same devices in
    the same order, and the hierarchical collectives name its axes.

    ```mlir
    dpc.mesh @plan ["pp"=1, "dp"=16, "tp"=1]
    %r = dpc.all_reduce %g over @plan ["dp"] <sum> : tensor<8388608xf32>
    // becomes
    dpc.mesh @plan_by_node ["pp"=1, "dp_nodes"=2, "dp_local"=8, "tp"=1]
    %s = dpc.reduce_scatter %g over @plan_by_node ["dp_local"] <sum> dim 0 ...
    %a = dpc.all_reduce %s over @plan_by_node ["dp_nodes"] <sum> ...
    %r = dpc.all_gather %a over @plan_by_node ["dp_local"] dim 0 ...
    ```
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "Cluster preset or FILE.json (default: the plan's)">,
  ];
}

def OutlineStages : Pass<"dpc-outline-stages", "ModuleOp"> {
  let summary = "Outlines each pipeline stage's forward and backward into a function";
  let description = [{
    Splits a planned `@forward_backward` (`function`) by `dpc.stage` and
    `dpc.phase`: the ops of each stage's forward and each stage's backward
    move into their own private function
    (`@forward_backward.stage<s>.<phase>`, carrying `dpc.stage` and
    `dpc.phase`, its arguments and results carrying their shardings), and
    the body becomes the calls in dependency order. A value one stage makes
    and another reads crosses in a `dpc.transfer` (one per value and
    destination stage): activations forward, gradients back. Ops without a
    stage (constants, which every stage computes) are copied into each
    function that reads them. A pipeline schedule then interleaves the
    calls over micro-batches.

    ```mlir
    %0 = dpc.matmul %x, %w0 {dpc.phase = #dpc.phase<forward>, dpc.stage = 0 : i64} ...
    %1 = dpc.relu %0 {dpc.phase = #dpc.phase<forward>, dpc.stage = 1 : i64} ...
    // becomes
    %0 = call @forward_backward.stage0.forward(%x, %w0) ...
    %1 = dpc.transfer %0 from 0 to 1 : tensor<8x64xf32>
    %2 = call @forward_backward.stage1.forward(%1) ...
    ```

    Stages whose functions would depend on each other in a cycle are an
    error naming a stage of the cycle.
  }];
  let options = [
    Option<"functionName", "function", "std::string",
           /*default=*/"\"forward_backward\"", "The function to outline">,
  ];
}

def ExportShard : Pass<"dpc-export-shard", "ModuleOp"> {
  let summary = "Writes the plan's layouts in upstream MLIR's shard dialect";
  let description = [{
    For tools built on upstream MLIR: each `dpc.mesh` becomes a `shard.grid`
    (axes by position), each value's `#dpc.sharding` a `shard.sharding` and
    a `shard.shard` after the value is made (at the function's entry for an
    argument), and each `dpc.reshard` a `shard.shard ... annotate_for_users`
    of its input. The dpc ops and their stages and phases stay; the dpc
    sharding attributes go. Upstream shardings have no partial results, so
    a partial value's pending reduction rides on its `shard.shard` as the
    string attribute `dpc.partial`. A mesh with its own device order cannot
    be exported. `dpc-opt --emit=shard-mlir` runs this pass last.

    ```mlir
    dpc.mesh @plan ["pp"=1, "dp"=2, "tp"=4]
    %0 = dpc.relu %x {dpc.sharding = [#dpc.sharding<@plan, [dp, tp]>]} ...
    // becomes
    shard.grid @plan(shape = 1x2x4)
    %0 = dpc.relu %x ...
    %sharding = shard.sharding @plan split_axes = [[1], [2]] : !shard.sharding
    %1 = shard.shard %0 to %sharding : tensor<8x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def VerifyShardings : Pass<"dpc-verify-shardings", "ModuleOp"> {
  let summary = "Checks that a planned step's layouts follow from its rules";
  let description = [{
    In every function with a sharding on every argument (the planned
    step's functions), checks that:
    - every op's result layouts are those its sharding rule gives for its
      operands' layouts (each loop split one way by all operands, loops
      that must stay whole unsplit, no pending partial operand, a split
      reduction leaving its result partial with the rule's reduction kind);
    - an op without a rule takes and gives whole values (unless it has no
      operands, like a constant);
    - calls pass arguments and returns give results as the signatures say,
      and a call's results are declared as its callee returns them;
    - every value has a sharding.
    Changes of layout must be explicit (`-dpc-insert-reshards`). Errors
    name the op, the operand or result, and both layouts. The IR is left
    unchanged.
  }];
}

#endif // DPC_TRANSFORMS_PASSES
