//===- DpcDialect.td - The dpc dialect ---------------------*- tablegen -*-===//
//
// The dialect of dpc's training graphs: tensor ops on static shapes, with
// parameters marked on function arguments.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_DIALECT_DPC_IR_DPCDIALECT
#define DPC_DIALECT_DPC_IR_DPCDIALECT

include "mlir/IR/OpBase.td"

def Dpc_Dialect : Dialect {
  let name = "dpc";
  let cppNamespace = "::mlir::dpc";
  let summary = "Tensor ops of dpc's training graphs";
  let description = [{
    The `dpc` dialect holds the forward graph imported from ONNX and the
    training step built from it. Its ops work on ranked tensors with static
    shapes (the planner needs every size), follow NumPy broadcasting where
    they broadcast, and implement three interfaces: the gradient rule
    (`DifferentiableOpInterface`), the sharding rule
    (`ShardableOpInterface`) and the cost (`CostOpInterface`).

    Trainable parameters and non-trainable state are function arguments
    marked with the argument attributes `dpc.param` and `dpc.state`, and
    model inputs with `dpc.input`; each holds the tensor's name in the source
    model. Results carry `dpc.output` (a model output) or `dpc.state` (the
    new value of the state of that name):

    ```mlir
    func.func @forward(%x: tensor<4x16xf32> {dpc.input = "x"},
                       %w: tensor<32x16xf32> {dpc.param = "fc1.weight"},
                       %m: tensor<32xf32> {dpc.state = "bn.running_mean"})
        -> (tensor<4x32xf32> {dpc.output = "logits"},
            tensor<32xf32> {dpc.state = "bn.running_mean"})
    ```

    Every verifier cites the numbered constraint (C1, C2, ...) of the op's
    specification that it enforces.
  }];
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasRegionResultAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerAttributes();

    /// Argument attribute marking a trainable parameter.
    static constexpr ::llvm::StringLiteral kParamAttrName = "dpc.param";
    /// Argument attribute marking non-trainable state (BatchNorm statistics).
    static constexpr ::llvm::StringLiteral kStateAttrName = "dpc.state";
    /// Argument attribute naming a model input (data or label).
    static constexpr ::llvm::StringLiteral kInputAttrName = "dpc.input";
    /// Result attribute naming a model output.
    static constexpr ::llvm::StringLiteral kOutputAttrName = "dpc.output";
    /// Result attribute marking the output that training minimizes.
    static constexpr ::llvm::StringLiteral kLossAttrName = "dpc.loss";
    /// Result attribute naming the parameter a gradient belongs to.
    static constexpr ::llvm::StringLiteral kGradAttrName = "dpc.grad";
    /// Argument and result attribute of optimizer state: "PARAM:SLOT".
    static constexpr ::llvm::StringLiteral kOptStateAttrName = "dpc.opt_state";
    /// Argument attribute of a training hyperparameter ("lr", "step").
    static constexpr ::llvm::StringLiteral kHyperAttrName = "dpc.hyper";
    /// Argument and result attribute of the plan: how the value lies on
    /// the mesh (a #dpc.sharding); ops carry an array, one per result.
    static constexpr ::llvm::StringLiteral kShardingAttrName = "dpc.sharding";
    /// Op attribute of the plan: the layouts the op's strategy expects of
    /// its operands (an array of #dpc.sharding, one per operand), until
    /// -dpc-insert-reshards makes them explicit.
    static constexpr ::llvm::StringLiteral kOperandShardingsAttrName =
        "dpc.operand_shardings";
    /// Op attribute of the plan: the pipeline stage that runs the op
    /// (absent: every stage runs it).
    static constexpr ::llvm::StringLiteral kStageAttrName = "dpc.stage";
    /// Op attribute: the part of the training step (#dpc.phase).
    static constexpr ::llvm::StringLiteral kPhaseAttrName = "dpc.phase";
    /// Op attribute of a plan with recomputation (a unit attribute on a
    /// forward op): its results are kept for the backward pass, which
    /// recomputes the rest of the forward values it reads from them.
    static constexpr ::llvm::StringLiteral kCheckpointAttrName =
        "dpc.checkpoint";
    /// Op attribute of a plan with selective recomputation (a unit
    /// attribute on a forward op of an attention's core): the backward
    /// pass runs the op again rather than keep its results.
    static constexpr ::llvm::StringLiteral kRecomputeAttrName =
        "dpc.recompute";
    /// Attribute of @train_step: the learning rate fed without a schedule.
    static constexpr ::llvm::StringLiteral kDefaultLrAttrName =
        "dpc.default_lr";
    /// Attribute of @train_step: the micro-batches it accumulates over, the
    /// plan's count when more than 1.
    static constexpr ::llvm::StringLiteral kMicroBatchesAttrName =
        "dpc.micro_batches";
    /// Module attribute of the plan: its degrees and predictions.
    static constexpr ::llvm::StringLiteral kPlanAttrName = "dpc.plan";
    /// Function attribute: the function is the program of one rank, its
    /// types local; its argument and result shardings say how the global
    /// values lie on the mesh.
    static constexpr ::llvm::StringLiteral kPartitionedAttrName =
        "dpc.partitioned";
    /// Function attribute: the function is the program of the devices of
    /// one pipeline stage (an i64, the stage).
    static constexpr ::llvm::StringLiteral kPipelineStageAttrName =
        "dpc.pipeline_stage";
    /// Attribute of the three collectives a hierarchical all-reduce is
    /// lowered to: the axes of the all-reduce they make together.
    static constexpr ::llvm::StringLiteral kHierarchicalAttrName =
        "dpc.hierarchical";
  }];
}

class Dpc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dpc_Dialect, mnemonic, traits>;

#endif // DPC_DIALECT_DPC_IR_DPCDIALECT
