//===- DpcOps.td - Ops of the dpc dialect ------------------*- tablegen -*-===//
//
// Each op's description is its specification: semantics, then the numbered
// constraints (C1, C2, ...) that its verifier enforces and cites.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_DIALECT_DPC_IR_DPCOPS
#define DPC_DIALECT_DPC_IR_DPCOPS

include "dpc/Dialect/Dpc/IR/DpcAttrs.td"
include "dpc/Dialect/Dpc/IR/DpcDialect.td"
include "dpc/Dialect/Dpc/IR/DpcEnums.td"
include "dpc/Interfaces/CostOpInterface.td"
include "dpc/Interfaces/DifferentiableOpInterface.td"
include "dpc/Interfaces/ShardableOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Dpc_Tensor : StaticShapeTensorOf<[AnyFloat, AnySignlessInteger]>;
def Dpc_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def Dpc_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
// A 0-d i64 tensor: random seeds and element offsets.
def Dpc_I64Scalar : Type<And<[AnyRankedTensor.predicate,
                              CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0">,
                              CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getElementType().isSignlessInteger(64)">]>,
                         "0-d tensor of i64", "::mlir::RankedTensorType">,
                    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;
def Dpc_BoolTensor : StaticShapeTensorOf<[I1]>;

// Ops whose sharding rule is the elementwise rule over their (broadcast)
// result shape.
defvar Dpc_Differentiable = DeclareOpInterfaceMethods<DifferentiableOpInterface>;

// Ops that mixed precision keeps in f32: they sum many terms, exponentiate
// or normalize, where bf16/f16 results lose the step (see
// -dpc-mixed-precision). Everything else computes in the low precision.
def Dpc_KeepsFullPrecision : NativeOpTrait<"KeepsFullPrecision"> {
  let cppNamespace = "::mlir::dpc::OpTrait";
}

// Ops that map pending sums to a pending sum: applied on each rank to its
// term of every floating-point operand (all partial over the same axes,
// summed) and to the same integer operands (indices), they give that
// rank's term of the result, where every result is floating point (a cast
// keeps them to a float type: a bf16 gradient's terms cast to fp32 are
// summed in fp32; not to an integer, which truncates each term).
// Partitioning lets such a sum stay pending through them (micro-batches'
// gradients are accumulated before they are reduced, once; an embedding's
// gradient is scattered before it is).
def Dpc_KeepsPendingSums : NativeOpTrait<"KeepsPendingSums"> {
  let cppNamespace = "::mlir::dpc::OpTrait";
}

defvar Dpc_ElementwiseRule = [{
  ::mlir::dpc::ShardingRule $cppClass::getShardingRule() {
    return ::mlir::dpc::getElementwiseShardingRule(getOperation());
  }
}];

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Dpc_ConstantOp : Dpc_Op<"constant", [ConstantLike, Pure,
    CostOpInterface]> {
  let summary = "A tensor whose elements are known at compile time";
  let description = [{
    Produces the tensor `value`. Small constants of a model (scales, masks,
    epsilons) become constants; trainable weights become parameters
    (function arguments marked `dpc.param`) even where the source model
    stored them as constants.

    Constraints:
    - (C1) the type of `value` equals the type of `result`.

    ```mlir
    %c = dpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Dpc_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class Dpc_UnaryOp<string mnemonic, string formula,
                  TypeConstraint type = Dpc_FloatTensor,
                  list<Trait> extraTraits = [Dpc_Differentiable]>
    : Dpc_Op<mnemonic, extraTraits # [Pure, Elementwise,
                        SameOperandsAndResultType, CostOpInterface,
                        DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let extraClassDefinition = Dpc_ElementwiseRule;
  let summary = "Elementwise `" # formula # "`";
  let description = [{
    Computes `}] # formula # [{` for every element of `input`.

    Constraints:
    - (C1) `result` has the type of `input`.
  }];
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Dpc_NegOp : Dpc_UnaryOp<"neg", "-x", Dpc_Tensor>;
def Dpc_AbsOp : Dpc_UnaryOp<"abs", "|x|", Dpc_Tensor>;
def Dpc_ExpOp : Dpc_UnaryOp<"exp", "e^x", Dpc_FloatTensor,
                            [Dpc_Differentiable, Dpc_KeepsFullPrecision]>;
def Dpc_LogOp : Dpc_UnaryOp<"log", "ln(x)", Dpc_FloatTensor,
                            [Dpc_Differentiable, Dpc_KeepsFullPrecision]>;
def Dpc_SqrtOp : Dpc_UnaryOp<"sqrt", "sqrt(x)">;
def Dpc_RsqrtOp : Dpc_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def Dpc_ReciprocalOp : Dpc_UnaryOp<"reciprocal", "1 / x">;
def Dpc_TanhOp : Dpc_UnaryOp<"tanh", "tanh(x)">;
def Dpc_SigmoidOp : Dpc_UnaryOp<"sigmoid", "1 / (1 + e^-x)">;
def Dpc_ReluOp : Dpc_UnaryOp<"relu", "max(x, 0)">;
def Dpc_ErfOp : Dpc_UnaryOp<"erf", "erf(x)">;
def Dpc_NotOp : Dpc_UnaryOp<"not", "!x", Dpc_BoolTensor, []>;

// Trigonometric and hyperbolic functions and their inverses, computed in
// full precision: a bf16 angle (a position times a frequency) is already
// off by more than a period's fraction.
class Dpc_FullPrecisionUnaryOp<string mnemonic, string formula>
    : Dpc_UnaryOp<mnemonic, formula, Dpc_FloatTensor,
                  [Dpc_Differentiable, Dpc_KeepsFullPrecision]>;
def Dpc_SinOp : Dpc_FullPrecisionUnaryOp<"sin", "sin(x)">;
def Dpc_CosOp : Dpc_FullPrecisionUnaryOp<"cos", "cos(x)">;
def Dpc_TanOp : Dpc_FullPrecisionUnaryOp<"tan", "tan(x)">;
def Dpc_AsinOp : Dpc_FullPrecisionUnaryOp<"asin", "asin(x)">;
def Dpc_AcosOp : Dpc_FullPrecisionUnaryOp<"acos", "acos(x)">;
def Dpc_AtanOp : Dpc_FullPrecisionUnaryOp<"atan", "atan(x)">;
def Dpc_SinhOp : Dpc_FullPrecisionUnaryOp<"sinh", "sinh(x)">;
def Dpc_CoshOp : Dpc_FullPrecisionUnaryOp<"cosh", "cosh(x)">;
def Dpc_AsinhOp : Dpc_FullPrecisionUnaryOp<"asinh", "asinh(x)">;
def Dpc_AcoshOp : Dpc_FullPrecisionUnaryOp<"acosh", "acosh(x)">;
def Dpc_AtanhOp : Dpc_FullPrecisionUnaryOp<"atanh", "atanh(x)">;
// Rounding to an integral value (Round: halves to even). Their gradient
// is zero, as PyTorch's is.
def Dpc_FloorOp : Dpc_FullPrecisionUnaryOp<"floor", "floor(x)">;
def Dpc_CeilOp : Dpc_FullPrecisionUnaryOp<"ceil", "ceil(x)">;
def Dpc_RoundOp : Dpc_FullPrecisionUnaryOp<"round", "round half to even(x)">;

//===----------------------------------------------------------------------===//
// Elementwise binary ops with broadcasting
//===----------------------------------------------------------------------===//

class Dpc_BroadcastingOp<string mnemonic, list<Trait> traits = []>
    : Dpc_Op<mnemonic, traits # [Pure, CostOpInterface,
                                 DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let extraClassDefinition = Dpc_ElementwiseRule;
  let hasVerifier = 1;
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

class Dpc_BinaryOp<string mnemonic, string formula,
                   TypeConstraint type = Dpc_Tensor,
                   list<Trait> extraTraits = [Dpc_Differentiable]>
    : Dpc_BroadcastingOp<mnemonic, extraTraits> {
  let summary = "Elementwise `" # formula # "` with broadcasting";
  let description = [{
    Computes `}] # formula # [{` (x from `lhs`, y from `rhs`) over the NumPy
    broadcast of the two operand shapes.

    Constraints:
    - (C1) `lhs`, `rhs` and `result` have the same element type.
    - (C2) the operand shapes are broadcast-compatible: aligned from the
      right, each pair of dimensions is equal or one of them is 1.
    - (C3) the shape of `result` is the broadcast shape.

    ```mlir
    %z = dpc.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let extraClassDefinition = Dpc_ElementwiseRule # [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::dpc::verifyBroadcastingOp(
          getOperation(), {getLhs(), getRhs()},
          getLhs().getType().getElementType());
    }
  }];
}

def Dpc_AddOp : Dpc_BinaryOp<"add", "x + y", Dpc_Tensor,
                              [Dpc_Differentiable, Dpc_KeepsPendingSums]>;
def Dpc_SubOp : Dpc_BinaryOp<"sub", "x - y", Dpc_Tensor,
                              [Dpc_Differentiable, Dpc_KeepsPendingSums]>;
def Dpc_MulOp : Dpc_BinaryOp<"mul", "x * y">;
def Dpc_DivOp : Dpc_BinaryOp<"div", "x / y">;
def Dpc_PowOp : Dpc_BinaryOp<"pow", "x ^ y", Dpc_FloatTensor,
                             [Dpc_Differentiable, Dpc_KeepsFullPrecision]>;
def Dpc_MaxOp : Dpc_BinaryOp<"max", "max(x, y)">;
def Dpc_MinOp : Dpc_BinaryOp<"min", "min(x, y)">;
def Dpc_AndOp : Dpc_BinaryOp<"and", "x && y", Dpc_BoolTensor, []>;
def Dpc_OrOp : Dpc_BinaryOp<"or", "x || y", Dpc_BoolTensor, []>;

def Dpc_ModOp : Dpc_BroadcastingOp<"mod", [Dpc_Differentiable]> {
  let summary = "Elementwise remainder with broadcasting";
  let description = [{
    Computes `x - y * q` (x from `lhs`, y from `rhs`) over the broadcast
    shape, where `q` is `x / y` rounded toward zero: the remainder has the
    sign of `x`, as C's `fmod` and `torch.fmod`. With `floor_mod`, `q` is
    `x / y` rounded down: the remainder has the sign of `y`, as Python's
    `%` and `torch.remainder`. An integer divisor of zero is an error at
    run time; a float one gives NaN.

    Constraints:
    - (C1) `lhs`, `rhs` and `result` have the same element type.
    - (C2) the operand shapes are broadcast-compatible.
    - (C3) the shape of `result` is the broadcast shape.

    ```mlir
    %r = dpc.mod %x, %y {floor_mod} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Dpc_Tensor:$lhs, Dpc_Tensor:$rhs, UnitAttr:$floor_mod);
  let results = (outs Dpc_Tensor:$result);
  let extraClassDefinition = Dpc_ElementwiseRule # [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::dpc::verifyBroadcastingOp(
          getOperation(), {getLhs(), getRhs()},
          getLhs().getType().getElementType());
    }
  }];
}

def Dpc_CompareOp : Dpc_BroadcastingOp<"compare"> {
  let summary = "Elementwise comparison with broadcasting";
  let description = [{
    Compares `lhs` with `rhs` under `predicate` over the broadcast shape and
    yields a boolean tensor.

    Constraints:
    - (C1) `lhs` and `rhs` have the same element type; `result` is `i1`.
    - (C2) the operand shapes are broadcast-compatible.
    - (C3) the shape of `result` is the broadcast shape.

    ```mlir
    %m = dpc.compare lt, %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Dpc_ComparePredicateAttr:$predicate, Dpc_Tensor:$lhs,
                       Dpc_Tensor:$rhs);
  let results = (outs Dpc_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dpc_SelectOp : Dpc_BroadcastingOp<"select", [Dpc_Differentiable]> {
  let summary = "Elementwise choice between two tensors (ONNX Where)";
  let description = [{
    Takes the element of `on_true` where `condition` holds and that of
    `on_false` elsewhere, over the broadcast of the three shapes.

    Constraints:
    - (C1) `on_true`, `on_false` and `result` have the same element type.
    - (C2) the three operand shapes are broadcast-compatible.
    - (C3) the shape of `result` is the broadcast shape.
  }];
  let arguments = (ins Dpc_BoolTensor:$condition, Dpc_Tensor:$on_true,
                       Dpc_Tensor:$on_false);
  let results = (outs Dpc_Tensor:$result);
}

def Dpc_CastOp : Dpc_Op<"cast", [Dpc_Differentiable, Pure, Elementwise, SameOperandsAndResultShape,
    Dpc_KeepsPendingSums,
    CostOpInterface, DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let extraClassDefinition = Dpc_ElementwiseRule;
  let summary = "Elementwise conversion to another element type";
  let description = [{
    Converts every element to the element type of `result`: floats round to
    nearest even, floats to integers truncate toward zero, and anything to
    `i1` tests for non-zero.

    Constraints:
    - (C1) `input` and `result` have the same shape.
  }];
  let arguments = (ins StaticShapeTensorOf<[AnyFloat, AnySignlessInteger]>:$input);
  let results = (outs StaticShapeTensorOf<[AnyFloat, AnySignlessInteger]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Dpc_MatmulOp : Dpc_Op<"matmul", [Dpc_Differentiable, Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Batched matrix product with broadcast batch dimensions";
  let description = [{
    `result[b..., i, j] = sum_k lhs[b..., i, k] * rhs[b..., k, j]`, where the
    batch dimensions `b...` (all but the last two) follow NumPy broadcasting,
    as ONNX `MatMul` does for operands of rank 2 or more.

    Constraints:
    - (C1) both operands have rank 2 or more.
    - (C2) `lhs`, `rhs` and `result` have the same element type.
    - (C3) the contracted dimensions agree: `lhs.shape[-1] == rhs.shape[-2]`.
    - (C4) the batch dimensions are broadcast-compatible.
    - (C5) `result` has shape `broadcast(batch) + [lhs.shape[-2], rhs.shape[-1]]`.

    ```mlir
    %c = dpc.matmul %a, %b : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins Dpc_FloatTensor:$lhs, Dpc_FloatTensor:$rhs);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_Conv2DOp : Dpc_Op<"conv2d", [Dpc_Differentiable, Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "2-D convolution, NCHW input and OIHW filter";
  let description = [{
    Cross-correlates `input` (N, C, H, W) with `filter` (F, C / groups, KH,
    KW) and adds `bias` (F) when present. `padding` is `[top, left, bottom,
    right]`; output size per spatial dimension is
    `floor((in + pad_begin + pad_end - dilation * (k - 1) - 1) / stride) + 1`.

    Constraints:
    - (C1) `input` and `filter` have rank 4.
    - (C2) `strides` and `dilations` have 2 positive entries, `padding` 4
      non-negative entries, and `groups` is positive.
    - (C3) `input.shape[1] == filter.shape[1] * groups` and `groups` divides
      `filter.shape[0]`.
    - (C4) `bias`, when present, has shape `[filter.shape[0]]`.
    - (C5) all operands and `result` have the same element type.
    - (C6) `result` has shape `[N, F, OH, OW]` by the formula above, with
      OH and OW positive.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$filter,
                       Optional<Dpc_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $filter (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_ConvTranspose2DOp : Dpc_Op<"conv_transpose2d", [Dpc_Differentiable, Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "2-D transposed convolution, NCHW input and CFHW filter";
  let description = [{
    The gradient of `conv2d` with respect to its input, used as a learned
    upsampling (ONNX `ConvTranspose`): every input element scatters
    `input[n, c, h, w] * filter[c, f, kh, kw]` to output position
    `(h * stride - pad_top + kh * dilation, w * stride - pad_left + kw *
    dilation)` of channel `g * F/groups + f`, where `g` is the group of `c`.
    `filter` has shape (C, F / groups, KH, KW). Output size per spatial
    dimension is `(in - 1) * stride - pad_begin - pad_end + dilation * (k -
    1) + output_padding + 1`.

    Constraints:
    - (C1) `input` and `filter` have rank 4.
    - (C2) `strides` and `dilations` have 2 positive entries, `padding` 4
      and `output_padding` 2 non-negative entries, and `groups` is positive.
    - (C3) `filter.shape[0] == input.shape[1]` and `groups` divides it.
    - (C4) `bias`, when present, has shape `[filter.shape[1] * groups]`.
    - (C5) all operands and `result` have the same element type.
    - (C6) `result` has shape `[N, filter.shape[1] * groups, OH, OW]` by the
      formula above, with OH and OW positive.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$filter,
                       Optional<Dpc_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding, I64Attr:$groups);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $filter (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_ResizeOp : Dpc_Op<"resize", [Dpc_Differentiable, Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Nearest or linear resampling (ONNX Resize, Upsample)";
  let description = [{
    Resamples `input` to the shape of `result`. Along each dimension `d`,
    output coordinate `x` maps to input coordinate `x'` by
    `coordinate_mode`, with `s = scales[d]`:
    `half_pixel`: `(x + 0.5) / s - 0.5`; `pytorch_half_pixel`: the same,
    but 0 when the output size is 1; `asymmetric`: `x / s`;
    `align_corners`: `x * (in - 1) / (out - 1)` (0 when out is 1).
    `nearest` mode takes the element at `x'` rounded by `nearest_mode`
    (`round_prefer_floor`, `round_prefer_ceil`, `floor`, `ceil`), clamped
    into the input; `linear` mode interpolates linearly between the two
    neighbours of `x'` in every dimension whose size changes, clamping
    coordinates into the input.

    A dimension that keeps its size with scale 1 (the batch, the channels)
    may be split; the resampled ones stay whole.

    Constraints:
    - (C1) `scales` has one positive entry per dimension.
    - (C2) `result` has the rank and element type of `input`.
    - (C3) `mode` is `nearest` or `linear`; `coordinate_mode` and
      `nearest_mode` are among the names above.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, DenseF64ArrayAttr:$scales,
                       StrAttr:$mode, StrAttr:$coordinate_mode,
                       StrAttr:$nearest_mode);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dpc_ResizeGradOp : Dpc_Op<"resize_grad", [Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Gradient of resize with respect to its input";
  let description = [{
    Sends each element of `out_grad` back to the input elements that its
    output element of `resize` read, times the weight it read them with
    (1 for nearest), and sums what lands on each. `result` has the shape of
    the resize's input; the attributes are those of the resize. It splits
    as the resize does.

    Constraints:
    - (C1) `scales` has one positive entry per dimension.
    - (C2) `out_grad` has the rank and element type of `result`.
    - (C3) the modes are those `resize` accepts.
  }];
  let arguments = (ins Dpc_FloatTensor:$out_grad, DenseF64ArrayAttr:$scales,
                       StrAttr:$mode, StrAttr:$coordinate_mode,
                       StrAttr:$nearest_mode);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$out_grad attr-dict `:` type($out_grad) `->` type($result)";
  let hasVerifier = 1;
}

def Dpc_Conv2DFilterGradOp : Dpc_Op<"conv2d_filter_grad", [Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Gradient of conv2d with respect to its filter";
  let description = [{
    For `out = conv2d(input, filter)` with the given window attributes,
    computes `d loss / d filter` from `out_grad = d loss / d out`:
    `result[f, c, kh, kw] = sum_{n, oh, ow} out_grad[n, f, oh, ow] *
    input[n, g * C/groups + c, oh * stride - pad_begin + kh * dilation, ...]`
    (zero outside the input), where `g` is the group of filter `f`. The
    filter size is that of `result`. Backends map it to their library's
    backward-filter convolution.

    Constraints:
    - (C1) `input`, `out_grad` and `result` have rank 4.
    - (C2) `strides` and `dilations` have 2 positive entries, `padding` 4
      non-negative entries, and `groups` is positive.
    - (C3) `result` has shape `[out_grad.shape[1], input.shape[1] / groups,
      KH, KW]`, and `groups` divides both channel counts.
    - (C4) `out_grad` has the shape `conv2d` gives for `input` and a
      `KH` x `KW` filter.
    - (C5) all operands and `result` have the same element type.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$out_grad,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $out_grad attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

class Dpc_Pool2DOp<string mnemonic, string combine>
    : Dpc_Op<mnemonic, [Dpc_Differentiable, Pure,
        DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
        DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "2-D " # combine # " pooling over NCHW windows";
  let description = [{
    Takes the }] # combine # [{ of each `kernel_shape` window of `input` (N,
    C, H, W). Padding is `[top, left, bottom, right]`; padded elements never
    win a max, and count toward an average only with `count_include_pad`.
    The output size follows the convolution formula, rounded up instead of
    down under `ceil_mode`, with no window starting in the end padding.

    Constraints:
    - (C1) `input` has rank 4.
    - (C2) `kernel_shape`, `strides` and `dilations` have 2 positive
      entries; `padding` has 4 non-negative entries, each smaller than the
      kernel size of its dimension.
    - (C3) `result` has shape `[N, C, OH, OW]` by that formula, with OH
      and OW positive, and the element type of `input`.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode,
                       UnitAttr:$count_include_pad);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dpc_MaxPool2DOp : Dpc_Pool2DOp<"max_pool2d", "maximum">;
def Dpc_AvgPool2DOp : Dpc_Pool2DOp<"avg_pool2d", "average">;

def Dpc_MaxPool2DGradOp : Dpc_Op<"max_pool2d_grad", [Pure,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Gradient of max_pool2d with respect to its input";
  let description = [{
    Routes each element of `out_grad` to the position of its window's
    maximum in `input` (the first one in row-major order on ties, as
    PyTorch does) and sums what lands on each position. The window
    attributes are those of the `max_pool2d` it differentiates.

    Constraints:
    - (C1) `input` has rank 4 and `result` its type.
    - (C2) the window attributes are valid for `max_pool2d` (its C2).
    - (C3) `out_grad` has the shape `max_pool2d` gives for `input`.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$out_grad,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $out_grad attr-dict `:` "
                       "type($input) `,` type($out_grad)";
  let hasVerifier = 1;
}

def Dpc_AvgPool2DGradOp : Dpc_Op<"avg_pool2d_grad", [Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Gradient of avg_pool2d with respect to its input";
  let description = [{
    Spreads each element of `out_grad` evenly over its window's input
    positions, dividing by the same count `avg_pool2d` divides by. The
    result has the input's shape; the window attributes are those of the
    `avg_pool2d` it differentiates.

    Constraints:
    - (C1) `result` has rank 4 and the element type of `out_grad`.
    - (C2) the window attributes are valid for `avg_pool2d` (its C2).
    - (C3) `out_grad` has the shape `avg_pool2d` gives for `result`.
  }];
  let arguments = (ins Dpc_FloatTensor:$out_grad,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, UnitAttr:$ceil_mode,
                       UnitAttr:$count_include_pad);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$out_grad attr-dict `:` type($out_grad) `->` "
                       "type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

class Dpc_ReduceOp<string mnemonic, string combine, string partialKind,
                   list<Trait> traits = []>
    : Dpc_Op<mnemonic, !listconcat([Dpc_Differentiable, Dpc_KeepsFullPrecision,
                                    Pure, CostOpInterface,
                                    DeclareOpInterfaceMethods<ShardableOpInterface>],
                                   traits)> {
  let summary = "The " # combine # " over some dimensions";
  let description = [{
    Reduces `input` by taking the }] # combine # [{ over the dimensions in
    `dims`. Reduced dimensions are kept with size 1 under `keep_dims` and
    dropped otherwise.

    Constraints:
    - (C1) `dims` is strictly increasing and within `[0, rank)`.
    - (C2) `result` has the element type of `input`.
    - (C3) `result` has the shape of `input` with the `dims` set to 1
      (`keep_dims`) or removed.

    ```mlir
    %s = dpc.}] # mnemonic # [{ %x [1] : tensor<4x8xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Dpc_Tensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keep_dims);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input $dims (`keep_dims` $keep_dims^)? attr-dict `:` "
                       "type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::dpc::ShardingRule $cppClass::getShardingRule() {
      return ::mlir::dpc::getReductionShardingRule(
          getOperation(), getDims(), ::mlir::dpc::ReductionKind::}] # partialKind # [{);
    }
  }];
}

def Dpc_ReduceSumOp : Dpc_ReduceOp<"reduce_sum", "sum", "sum",
                                   [Dpc_KeepsPendingSums]>;
def Dpc_ReduceMeanOp : Dpc_ReduceOp<"reduce_mean", "mean", "mean">;
def Dpc_ReduceMaxOp : Dpc_ReduceOp<"reduce_max", "maximum", "max">;
def Dpc_ReduceMinOp : Dpc_ReduceOp<"reduce_min", "minimum", "min">;

class Dpc_ArgReduceOp<string mnemonic, string which, string comparison>
    : Dpc_Op<mnemonic, [Pure, CostOpInterface,
                        DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "The index of the " # which # " element along one axis";
  let description = [{
    For each slice of `input` along `axis`, the index of its }] # which #
    [{ element: the first such index, or the last under
    `select_last_index`. An element replaces the one held when it compares
    `}] # comparison # [{` (a NaN never does). `axis` is kept with size 1
    under `keep_dims` and dropped otherwise. The indices are integers: no
    gradient flows through them.

    Constraints:
    - (C1) `axis` is within `[0, rank)`.
    - (C2) `result` is an i64 tensor with the shape of `input`, `axis` set
      to 1 (`keep_dims`) or removed.

    ```mlir
    %i = dpc.}] # mnemonic # [{ %x axis 1 : tensor<4x8xf32> -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Dpc_Tensor:$input, I64Attr:$axis, UnitAttr:$keep_dims,
                       UnitAttr:$select_last_index);
  let results = (outs Dpc_IndexTensor:$result);
  let assemblyFormat = "$input `axis` $axis (`keep_dims` $keep_dims^)? "
                       "(`last` $select_last_index^)? attr-dict `:` "
                       "type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dpc_ArgMaxOp : Dpc_ArgReduceOp<"argmax", "largest", ">">;
def Dpc_ArgMinOp : Dpc_ArgReduceOp<"argmin", "smallest", "<">;

def Dpc_TopKOp : Dpc_Op<"top_k", [Pure, CostOpInterface]> {
  let summary = "The k elements of largest magnitude of a vector";
  let description = [{
    Returns the `k` elements of the vector `input` with the largest
    absolute values: `values` holds them (with their signs) and `indices`
    their positions, by decreasing magnitude, equal magnitudes by
    increasing position (NaN counts as the largest). Top-k gradient
    compression sends these instead of the whole gradient.

    ```mlir
    %v, %i = dpc.top_k %g k 16 : tensor<1024xf32> -> tensor<16xf32>, tensor<16xi64>
    ```

    Constraints:
    - (C1) `input` is a vector and `1 <= k <=` its size.
    - (C2) `values` is a vector of `k` elements of the type of `input`'s,
      `indices` a vector of `k` i64.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, I64Attr:$k);
  let results = (outs Dpc_FloatTensor:$values, Dpc_IndexTensor:$indices);
  let assemblyFormat = "$input `k` $k attr-dict `:` type($input) `->` "
                       "type($values) `,` type($indices)";
  let hasVerifier = 1;
}

class Dpc_SoftmaxLikeOp<string mnemonic, string formula>
    : Dpc_Op<mnemonic, [Dpc_Differentiable, Dpc_KeepsFullPrecision, Pure,
        SameOperandsAndResultType,
        DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
        DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "`" # formula # "` along one axis";
  let description = [{
    Computes `}] # formula # [{` along `axis`, subtracting the maximum first
    so that large inputs do not overflow.

    Constraints:
    - (C1) `axis` is within `[0, rank)`.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Dpc_SoftmaxOp
    : Dpc_SoftmaxLikeOp<"softmax", "exp(x_i) / sum_j exp(x_j)">;
def Dpc_LogSoftmaxOp
    : Dpc_SoftmaxLikeOp<"log_softmax", "x_i - ln(sum_j exp(x_j))">;

def Dpc_LayerNormOp : Dpc_Op<"layer_norm", [Dpc_Differentiable,
    Dpc_KeepsFullPrecision, Pure,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over the dimensions `[axis, rank)` to zero mean and
    unit (biased) variance, `(x - mean) / sqrt(var + epsilon)`, then
    multiplies by `scale` and adds `bias` when present, as ONNX
    `LayerNormalization` does.

    Constraints:
    - (C1) `axis` is within `[0, rank)`.
    - (C2) `scale` has shape `input.shape[axis:]`.
    - (C3) `bias`, when present, has the type of `scale`.
    - (C4) `scale` has the element type of `input`.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$scale,
                       Optional<Dpc_FloatTensor>:$bias, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? attr-dict `:` "
                       "type($input) `,` type($scale) (`,` type($bias)^)?";
  let hasVerifier = 1;
}

def Dpc_BatchNormOp : Dpc_Op<"batch_norm", [Dpc_Differentiable,
    Dpc_KeepsFullPrecision, Pure,
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["scale", "bias", "running_mean", "running_var",
                   "new_running_mean", "new_running_var", "batch_mean",
                   "batch_var"]>,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface,
                              ["partition", "getSplitCollectives"]>]> {
  let summary = "Batch normalization over the channel dimension";
  let description = [{
    Normalizes each channel (dimension 1) of `input` and applies `scale` and
    `bias`. With `training`, it normalizes with the batch's mean and biased
    variance over all other dimensions and updates the running statistics as
    PyTorch and ONNX training-mode exports do:
    `new = momentum * running + (1 - momentum) * batch`, with the unbiased
    batch variance for `new_running_var`. Without `training`, it normalizes
    with `running_mean` and `running_var` and returns them unchanged. The
    running statistics are non-trainable state, never differentiated.
    `batch_mean` and `batch_var` are the mean and biased variance it
    normalized with (the batch's in training, else the running ones): the
    backward pass reads them instead of computing them again.

    Every dimension may be split. Partitioned with training-mode statistics
    over split dimensions, each rank sums its part of every channel, the
    sums are all-reduced over the splitting mesh axes (the mean first, then
    the squared deviations from it), and the rank normalizes its own part
    with the whole batch's statistics: synchronized batch norm, computing
    what one device computes.

    Constraints:
    - (C1) `input` has rank 2 or more.
    - (C2) `scale` has shape `[input.shape[1]]`.
    - (C3) `scale` has the element type of `input`.
    - (C4) `momentum` is within `[0, 1]` and `epsilon` is positive.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$scale,
                       Dpc_FloatTensor:$bias, Dpc_FloatTensor:$running_mean,
                       Dpc_FloatTensor:$running_var, F32Attr:$epsilon,
                       F32Attr:$momentum, UnitAttr:$training);
  let results = (outs Dpc_FloatTensor:$result,
                      Dpc_FloatTensor:$new_running_mean,
                      Dpc_FloatTensor:$new_running_var,
                      Dpc_FloatTensor:$batch_mean,
                      Dpc_FloatTensor:$batch_var);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $running_mean `,` "
                       "$running_var attr-dict `:` type($input) `,` "
                       "type($scale)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Dpc_ReshapeOp : Dpc_Op<"reshape", [Dpc_Differentiable, Pure, CostOpInterface,
    Dpc_KeepsPendingSums,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Same elements in row-major order, another shape";
  let description = [{
    Constraints:
    - (C1) `input` and `result` have the same number of elements.
    - (C2) `input` and `result` have the same element type.
  }];
  let arguments = (ins Dpc_Tensor:$input);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dpc_BroadcastToOp : Dpc_Op<"broadcast_to", [Dpc_Differentiable, Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let extraClassDefinition = Dpc_ElementwiseRule;
  let summary = "NumPy broadcast to a larger shape (ONNX Expand)";
  let description = [{
    Constraints:
    - (C1) `input` and `result` have the same element type.
    - (C2) `input`'s rank is at most `result`'s, and, aligned from the
      right, each dimension of `input` is 1 or equals `result`'s.
  }];
  let arguments = (ins Dpc_Tensor:$input);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dpc_TransposeOp : Dpc_Op<"transpose", [Dpc_Differentiable, Pure, CostOpInterface,
    Dpc_KeepsPendingSums,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Permutes the dimensions";
  let description = [{
    `result.shape[i] == input.shape[permutation[i]]`.

    Constraints:
    - (C1) `permutation` is a permutation of `[0, rank)`.
    - (C2) `result` has the permuted shape and the element type of `input`.

    ```mlir
    %t = dpc.transpose %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Dpc_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` type($input) `->` "
                       "type($result)";
  let hasVerifier = 1;
}

def Dpc_ConcatOp : Dpc_Op<"concat", [Dpc_Differentiable, Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Joins tensors along one axis";
  let description = [{
    Constraints:
    - (C1) there is at least one input.
    - (C2) all inputs and `result` have the same rank and element type.
    - (C3) `axis` is within `[0, rank)`.
    - (C4) all dimensions other than `axis` agree among inputs and `result`.
    - (C5) `result.shape[axis]` is the sum of the inputs' sizes on `axis`.
  }];
  let arguments = (ins Variadic<Dpc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat =
      "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasVerifier = 1;
}

def Dpc_SliceOp : Dpc_Op<"slice", [Dpc_Differentiable, Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface, ["partition"]>]> {
  let summary = "A strided box of a tensor";
  let description = [{
    Takes, along each dimension `d`, the indices `start[d], start[d] +
    stride[d], ...` below `limit[d]`.

    Constraints:
    - (C1) `start`, `limit` and `stride` each have one entry per dimension.
    - (C2) `0 <= start[d] <= limit[d] <= input.shape[d]` and `stride[d] >= 1`.
    - (C3) `result` has shape `ceil((limit - start) / stride)` and the
      element type of `input`.
  }];
  let arguments = (ins Dpc_Tensor:$input, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$stride);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dpc_SplitOp : Dpc_Op<"split", [Dpc_Differentiable, Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Cuts a tensor into consecutive pieces along one axis";
  let description = [{
    The sizes of the pieces are those of the results along `axis`.

    Constraints:
    - (C1) there is at least one result and `axis` is within `[0, rank)`.
    - (C2) every result has the rank and element type of `input` and agrees
      with it on every dimension but `axis`.
    - (C3) the results' sizes on `axis` add up to `input.shape[axis]`.
  }];
  let arguments = (ins Dpc_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Dpc_Tensor>:$results);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def Dpc_GatherOp : Dpc_Op<"gather", [Dpc_Differentiable, Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface, ["partition"]>]> {
  let summary = "Picks slices of a tensor by index (ONNX Gather, embedding)";
  let description = [{
    `result[p..., q..., s...] = input[p..., indices[q...], s...]` where `p`
    runs over the dimensions before `axis` and `s` over those after it. A
    negative index counts from the end of the axis.

    Constraints:
    - (C1) `axis` is within `[0, rank)`.
    - (C2) `result` has shape `input.shape[:axis] + indices.shape +
      input.shape[axis+1:]` and the element type of `input`.

    ```mlir
    %e = dpc.gather %table[%ids] {axis = 0 : i64}
        : (tensor<50x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins Dpc_Tensor:$input, Dpc_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `[` $indices `]` attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_PadOp : Dpc_Op<"pad", [Dpc_Differentiable, Pure, CostOpInterface,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Surrounds and interleaves a tensor with a constant";
  let description = [{
    Places element `i` of `input` (per dimension `d`) at position
    `low[d] + i * (interior[d] + 1)` of `result`, and `value` everywhere
    else: `low` and `high` pad before and after, `interior` between
    neighbours. ONNX `Pad` in constant mode, and the gradient of `slice`
    (`low = start`, `interior = stride - 1`).

    Constraints:
    - (C1) `low`, `high` and `interior` have one non-negative entry per
      dimension.
    - (C2) `result` has shape `low + high + size + (size - 1) * interior`
      (with no interior padding for size 0) and the element type of
      `input`.
  }];
  let arguments = (ins Dpc_Tensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, DenseI64ArrayAttr:$interior,
                       F64Attr:$value);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dpc_ScatterAddOp : Dpc_Op<"scatter_add", [Dpc_Differentiable, Pure, CostOpInterface,
    Dpc_KeepsPendingSums, DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Adds slices into a zero tensor by index (gradient of gather)";
  let description = [{
    Starts from zeros of the result's shape and, for every position of
    `updates`, adds `updates[p..., q..., s...]` to
    `result[p..., indices[q...], s...]`, where `p` runs over the
    dimensions before `axis` and `s` over those after it; negative indices
    count from the end. With the `indices` and `axis` of a `gather`, this is
    that gather's gradient (an embedding's weight gradient).

    The dimensions before and after `axis` may be split; so may the
    indices' (the tokens, under data parallelism): each rank then adds its
    own updates and the result is a partial sum over those splits. The
    result's `axis` stays whole.

    Constraints:
    - (C1) `axis` is within `[0, rank)` of `result`.
    - (C2) `updates` has shape `result.shape[:axis] + indices.shape +
      result.shape[axis+1:]` and the element type of `result`.
  }];
  let arguments = (ins Dpc_Tensor:$updates, Dpc_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$updates `[` $indices `]` attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_GatherElementsOp : Dpc_Op<"gather_elements", [Dpc_Differentiable,
    Pure, CostOpInterface, DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Picks elements by index along one axis (ONNX GatherElements)";
  let description = [{
    `result[i...] = input[i..., with i[axis] replaced by indices[i...]]`:
    every position of `indices` reads one element of `input`. A negative
    index counts from the end of the axis.

    Constraints:
    - (C1) `input` and `indices` have the same rank, and `axis` is within
      `[0, rank)`.
    - (C2) `indices` is no larger than `input` on every dimension but
      `axis`.
    - (C3) `result` has the shape of `indices` and the element type of
      `input`.

    ```mlir
    %r = dpc.gather_elements %x[%idx] {axis = 1 : i64}
        : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Dpc_Tensor:$input, Dpc_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `[` $indices `]` attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_ScatterAddElementsOp : Dpc_Op<"scatter_add_elements",
    [Dpc_Differentiable, Pure, CostOpInterface]> {
  let summary = "Adds elements into a zero tensor by index (gradient of "
                "gather_elements)";
  let description = [{
    Starts from zeros of the result's shape and adds each `updates[i...]`
    to `result[i..., with i[axis] replaced by indices[i...]]`; negative
    indices count from the end. With the `indices` and `axis` of a
    `gather_elements`, this is that op's gradient.

    Constraints:
    - (C1) `updates`, `indices` and `result` have the same rank, and
      `axis` is within `[0, rank)`.
    - (C2) `updates` has the shape of `indices` and the element type of
      `result`, and is no larger than `result` on every dimension but
      `axis`.
  }];
  let arguments = (ins Dpc_Tensor:$updates, Dpc_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$updates `[` $indices `]` attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Recurrent layers
//===----------------------------------------------------------------------===//

// The time loop of a recurrent layer is one op, so that the planner prices
// and shards it whole (its batch splits; time and the hidden state do not).

def Dpc_LstmOp : Dpc_Op<"lstm", [Dpc_Differentiable, Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "One direction of an LSTM layer over a sequence (ONNX LSTM)";
  let description = [{
    With `x_t = input[t]` and gates in ONNX's order (i, o, f, c) along the
    rows of `weights`, `recurrence` and the two halves of `bias`
    (`[Wb; Rb]`):

    ```
    i = sigmoid(x_t Wi^T + h Ri^T + Wbi + Rbi)     o, f likewise
    g = tanh(x_t Wc^T + h Rc^T + Wbc + Rbc)
    c = f * c + i * g;   h = o * tanh(c);   output[t] = h
    ```

    starting from `initial_h` and `initial_c`, for `t` from 0 up, or down
    from the last step with `reverse`. With `lengths`, batch entry `b` runs
    `lengths[b]` steps (the first ones, or the last of those with
    `reverse`), its output is zero after them, and `final_h`/`final_c` are
    its state after its last step. Computed in double, rounded once.

    Constraints:
    - (C1) `input` is `[T, B, I]` with `T >= 1`; `weights` `[4H, I]`;
      `recurrence` `[4H, H]`; `bias` `[8H]`; `initial_h`, `initial_c`,
      `final_h`, `final_c` `[B, H]`; `output` `[T, B, H]`; all of one
      element type.
    - (C2) `lengths`, if given, is `[B]`, each within `[0, T]` (checked
      when run).
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$weights,
                       Dpc_FloatTensor:$recurrence, Dpc_FloatTensor:$bias,
                       Dpc_FloatTensor:$initial_h, Dpc_FloatTensor:$initial_c,
                       Optional<Dpc_IndexTensor>:$lengths, UnitAttr:$reverse);
  let results = (outs Dpc_FloatTensor:$output, Dpc_FloatTensor:$final_h,
                      Dpc_FloatTensor:$final_c);
  let assemblyFormat = "$input `,` $weights `,` $recurrence `,` $bias `,` "
                       "$initial_h `,` $initial_c (`lengths` $lengths^)? "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_LstmGradOp : Dpc_Op<"lstm_grad", [Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Gradients of an lstm (backpropagation through time)";
  let description = [{
    Given the operands of an `lstm` and the gradients of its three results,
    returns the gradients of its six float operands. It reruns the forward
    steps (nothing but the operands is kept from the forward) and then
    walks back through time.

    Constraints:
    - (C1) the operands are an `lstm`'s (its C1) followed by
      `grad_output`, `grad_final_h` and `grad_final_c` of its results'
      types; each result has the type of the operand it differentiates.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$weights,
                       Dpc_FloatTensor:$recurrence, Dpc_FloatTensor:$bias,
                       Dpc_FloatTensor:$initial_h, Dpc_FloatTensor:$initial_c,
                       Dpc_FloatTensor:$grad_output,
                       Dpc_FloatTensor:$grad_final_h,
                       Dpc_FloatTensor:$grad_final_c,
                       Optional<Dpc_IndexTensor>:$lengths, UnitAttr:$reverse);
  let results = (outs Dpc_FloatTensor:$grad_input,
                      Dpc_FloatTensor:$grad_weights,
                      Dpc_FloatTensor:$grad_recurrence,
                      Dpc_FloatTensor:$grad_bias,
                      Dpc_FloatTensor:$grad_initial_h,
                      Dpc_FloatTensor:$grad_initial_c);
  let assemblyFormat = "$input `,` $weights `,` $recurrence `,` $bias `,` "
                       "$initial_h `,` $initial_c `,` $grad_output `,` "
                       "$grad_final_h `,` $grad_final_c "
                       "(`lengths` $lengths^)? "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_GruOp : Dpc_Op<"gru", [Dpc_Differentiable, Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "One direction of a GRU layer over a sequence (ONNX GRU)";
  let description = [{
    With `x_t = input[t]` and gates in ONNX's order (z, r, h):

    ```
    z = sigmoid(x_t Wz^T + h Rz^T + Wbz + Rbz)     r likewise
    n = tanh(x_t Wh^T + (r * h) Rh^T + Rbh + Wbh)        default
    n = tanh(x_t Wh^T + r * (h Rh^T + Rbh) + Wbh)        linear_before_reset
    h = (1 - z) * n + z * h;   output[t] = h
    ```

    (PyTorch's `nn.GRU` is the `linear_before_reset` form.) Time runs,
    `lengths` and `reverse` act as in `lstm`.

    Constraints:
    - (C1) `input` is `[T, B, I]` with `T >= 1`; `weights` `[3H, I]`;
      `recurrence` `[3H, H]`; `bias` `[6H]`; `initial_h` and `final_h`
      `[B, H]`; `output` `[T, B, H]`; all of one element type.
    - (C2) `lengths` as in `lstm`.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$weights,
                       Dpc_FloatTensor:$recurrence, Dpc_FloatTensor:$bias,
                       Dpc_FloatTensor:$initial_h,
                       Optional<Dpc_IndexTensor>:$lengths, UnitAttr:$reverse,
                       UnitAttr:$linear_before_reset);
  let results = (outs Dpc_FloatTensor:$output, Dpc_FloatTensor:$final_h);
  let assemblyFormat = "$input `,` $weights `,` $recurrence `,` $bias `,` "
                       "$initial_h (`lengths` $lengths^)? "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_GruGradOp : Dpc_Op<"gru_grad", [Pure,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Gradients of a gru (backpropagation through time)";
  let description = [{
    Given the operands of a `gru` and the gradients of its two results,
    returns the gradients of its five float operands, rerunning the forward
    steps first.

    Constraints:
    - (C1) the operands are a `gru`'s (its C1) followed by `grad_output`
      and `grad_final_h` of its results' types; each result has the type
      of the operand it differentiates.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_FloatTensor:$weights,
                       Dpc_FloatTensor:$recurrence, Dpc_FloatTensor:$bias,
                       Dpc_FloatTensor:$initial_h,
                       Dpc_FloatTensor:$grad_output,
                       Dpc_FloatTensor:$grad_final_h,
                       Optional<Dpc_IndexTensor>:$lengths, UnitAttr:$reverse,
                       UnitAttr:$linear_before_reset);
  let results = (outs Dpc_FloatTensor:$grad_input,
                      Dpc_FloatTensor:$grad_weights,
                      Dpc_FloatTensor:$grad_recurrence,
                      Dpc_FloatTensor:$grad_bias,
                      Dpc_FloatTensor:$grad_initial_h);
  let assemblyFormat = "$input `,` $weights `,` $recurrence `,` $bias `,` "
                       "$initial_h `,` $grad_output `,` $grad_final_h "
                       "(`lengths` $lengths^)? "
                       "attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Regularization and losses
//===----------------------------------------------------------------------===//

def Dpc_DropoutOp : Dpc_Op<"dropout", [Dpc_Differentiable, Pure,
    AllTypesMatch<["input", "result"]>,
    CostOpInterface, DeclareOpInterfaceMethods<ShardableOpInterface, ["partition"]>]> {
  let extraClassDefinition = Dpc_ElementwiseRule;
  let summary = "Zeroes elements at random in training";
  let description = [{
    Keeps each element with probability `1 - ratio`, scaled by
    `1 / (1 - ratio)`, and zeroes the others. The decision for the element
    at row-major index `i` is the first 32-bit word of Philox4x32-10 with
    key `seed` and counter `(offset + i, stream)`, compared with
    `ratio * 2^32`: it depends on the step's seed, on which dropout site
    this is (`stream`) and on the element's index in the whole step's
    tensor (`offset` is the index of this tensor's first element there),
    never on how the step is split into micro-batches or ranks. With the
    same operands, the op applied to a gradient masks it as the forward
    did. `ratio = 0` is the identity.

    Constraints:
    - (C1) `ratio` is within `[0, 1)`.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_I64Scalar:$seed,
                       Dpc_I64Scalar:$offset, F32Attr:$ratio, I64Attr:$stream);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $seed `,` $offset attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class Dpc_LossOp<string mnemonic, string semantics>
    : Dpc_Op<mnemonic, [Dpc_Differentiable, Dpc_KeepsFullPrecision, Pure,
                        CostOpInterface, DeclareOpInterfaceMethods<ShardableOpInterface, ["partition"]>]> {
  let description = [{
    }] # semantics # [{ `input` has shape `[N, C, d...]` (C classes) and
    `labels` shape `[N, d...]`. Samples whose label is `ignore_index` add
    nothing; `mean` divides by the number of the other samples.

    Constraints:
    - (C1) `input` has rank 2 or more and `labels` has its shape without
      dimension 1.
    - (C2) `result` has the element type of `input`; its shape is `[]`
      for `mean` and `sum` and the shape of `labels` for `none`.
  }];
  let arguments = (ins Dpc_FloatTensor:$input, Dpc_IndexTensor:$labels,
                       Dpc_LossReductionAttr:$reduction, I64Attr:$ignore_index);
  let results = (outs Dpc_FloatTensor:$result);
  let assemblyFormat = "$input `,` $labels $reduction attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Dpc_SoftmaxCrossEntropyOp : Dpc_LossOp<"softmax_cross_entropy",
    "The loss `-log_softmax(input)[label]` per sample (from logits)."> {
  let summary = "Cross-entropy of softmax(logits) against class labels";
}

def Dpc_NllLossOp : Dpc_LossOp<"nll_loss",
    "The loss `-input[label]` per sample (from log-probabilities)."> {
  let summary = "Negative log-likelihood against class labels";
}

//===----------------------------------------------------------------------===//
// The plan: meshes and changes of sharding
//===----------------------------------------------------------------------===//

def Dpc_MeshOp : Dpc_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A named, logical mesh of devices";
  let description = [{
    Declares the devices a plan runs on as an n-dimensional mesh with named
    axes. Shardings (`#dpc.sharding<@name, ...>`) refer to it by symbol.

    ```mlir
    dpc.mesh @plan ["pp"=2, "dp"=4, "tp"=8]
    dpc.mesh @pair ["dp"=2] devices = [1, 0]
    ```

    The device at mesh coordinates `(c0, ..., cn-1)` is, without
    `devices`, the row-major index of the coordinates (the last axis
    varies fastest: neighbouring devices share a node); with `devices`, the
    entry at that index. A planned step uses `@plan` with the axes
    `pp` (pipeline stages), `dp` (data parallel) and `tp` (tensor
    parallel), in that order.

    Constraints:
    - (C1) the mesh has at least one axis, and as many names as sizes.
    - (C2) axis names are distinct identifiers (a letter or `_`, then
      letters, digits or `_`).
    - (C3) every axis size is at least 1, and the mesh has at most 2^31
      devices.
    - (C4) `devices`, when present, is a permutation of `0 .. N-1` for
      the mesh's N devices.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$shape,
                       OptionalAttr<DenseI64ArrayAttr>:$devices);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The size of axis `name`, or nullopt when the mesh has none.
    std::optional<int64_t> getAxisSize(::llvm::StringRef name);
    /// The position of axis `name`, or nullopt.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name);
    int64_t getNumDevices();
    /// The devices of `device`'s group over `axes` (axes of the mesh), in
    /// the group's order: by their coordinates along `axes`, the first
    /// axis major.
    ::llvm::SmallVector<int64_t>
    getGroup(int64_t device, ::llvm::ArrayRef<::llvm::StringRef> axes);
  }];
}

def Dpc_ReshardOp : Dpc_Op<"reshard", [Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>]> {
  let summary = "Changes how a value lies on the mesh";
  let description = [{
    Returns `input` unchanged, laid out as `sharding`. The value itself is
    the same; only its distribution changes: a pending partial result is
    reduced, a split dimension is gathered, split or moved. A reshard is
    abstract: `-dpc-insert-reshards` places one on every edge of a planned
    step where the producer's layout differs from the layout the consumer's
    strategy expects, and the partitioner turns each into the cheapest
    collectives (all-reduce, reduce-scatter, all-gather, all-to-all) or
    into a local slice.

    ```mlir
    %1 = dpc.reshard %0 <@plan, [dp, *]> : tensor<8x16xf32>
    ```

    Constraints:
    - (C1) `result` has the type of `input`.
    - (C2) `sharding` is a valid sharding of that type (see
      `#dpc.sharding`).
  }];
  let arguments = (ins Dpc_Tensor:$input, Dpc_ShardingAttr:$sharding);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dpc_TransferOp : Dpc_Op<"transfer", [Pure,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<ShardableOpInterface>]> {
  let summary = "Moves a value from one pipeline stage to another";
  let description = [{
    Returns `input`, computed on pipeline stage `from`, on stage `to`: an
    activation sent forward or a gradient sent back. Each device of stage
    `from` sends its part to the device at the same data- and
    tensor-parallel coordinates on stage `to`, so the layout is unchanged
    (the rule is the elementwise one). `-dpc-outline-stages` places one on
    every value that crosses from one stage's function to another's; the
    backends lower it to a send/recv pair.

    ```mlir
    %1 = dpc.transfer %0 from 0 to 1 : tensor<8x64xf32>
    ```

    Constraints:
    - (C1) `result` has the type of `input`.
    - (C2) `from` and `to` are distinct stages (non-negative).
  }];
  let arguments = (ins Dpc_Tensor:$input, I64Attr:$from, I64Attr:$to);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `from` $from `to` $to attr-dict `:` "
                       "type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::dpc::ShardingRule $cppClass::getShardingRule() {
      return ::mlir::dpc::getElementwiseShardingRule(getOperation());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Collectives: the ranks of a mesh-axis group exchange their local values
//===----------------------------------------------------------------------===//

// Ops over a group of ranks of a mesh: they may start asynchronously
// (`dpc.wait`). Those that move data between the ranks communicate: the
// collective passes schedule, bucket and price those.
def Dpc_CollectiveTrait : NativeOpTrait<"Collective"> {
  let cppNamespace = "::mlir::dpc::OpTrait";
}
def Dpc_CommunicatesTrait : NativeOpTrait<"Communicates"> {
  let cppNamespace = "::mlir::dpc::OpTrait";
}

class Dpc_CollectiveOp<string mnemonic, string semantics,
                       string constraints, list<Trait> traits = [],
                       bit communicates = 1>
    : Dpc_Op<mnemonic, traits # [Dpc_CollectiveTrait,
        DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>] #
        !if(communicates, [Dpc_CommunicatesTrait], [])> {
  let description = [{
    Runs in a partitioned program, on each rank's local value. With
    `async` it only starts there, and completes at the `dpc.wait` ops that
    read it, so that compute placed in between overlaps it. The group of
    a rank is every rank of `mesh` whose coordinates differ from its own
    only along `axes`; within the group, ranks are ordered by their
    coordinates along `axes`, the first listed axis major. Every rank of
    the mesh runs the op (a program is the same on every rank), each with
    its own group.

    }] # semantics # [{

    Constraints:
    - (C1) `mesh` names a `dpc.mesh` of the enclosing module.
    - (C2) `axes` is a non-empty list of distinct axes of the mesh.
    - (C3) with `async`, the result is read only by `dpc.wait` ops: the
      collective starts where it stands, and its value is there only at
      the waits.
    }] # constraints;
  let hasVerifier = 1;
}

def Dpc_AllReduceOp : Dpc_CollectiveOp<"all_reduce",
    [{Every rank of a group receives the reduction of the group's values
    by `kind` (`mean`: the sum divided by the group's size).

    ```mlir
    %1 = dpc.all_reduce %0 over @plan ["tp"] <sum> : tensor<8x16xf32>
    ```}],
    [{- (C4) `result` has the type of `input`.
    - (C5) `mean` reduces floating-point values.}],
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "Reduces the values of a group and gives every rank the result";
  let arguments = (ins Dpc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, Dpc_ReductionKindAttr:$kind,
                       UnitAttr:$async);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `over` $mesh $axes $kind attr-dict `:` "
                       "type($result)";
}

def Dpc_ReduceScatterOp : Dpc_CollectiveOp<"reduce_scatter",
    [{The reduction of the group's values by `kind`, split along `dim` into
    as many blocks as the group has ranks: the i-th rank of the group
    receives block i.

    ```mlir
    %1 = dpc.reduce_scatter %0 over @plan ["tp"] <sum> dim 0
        : tensor<8x16xf32> -> tensor<4x16xf32>
    ```}],
    [{- (C4) `dim` is a dimension of `input`, and the group's size divides
      its size.
    - (C5) `result` has the element type of `input` and its shape with
      dimension `dim` divided by the group's size.
    - (C6) `mean` reduces floating-point values.}]> {
  let summary = "Reduces the values of a group and gives each rank a block";
  let arguments = (ins Dpc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, Dpc_ReductionKindAttr:$kind,
                       I64Attr:$dim, UnitAttr:$async);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `over` $mesh $axes $kind `dim` $dim attr-dict "
                       "`:` type($input) `->` type($result)";
}

def Dpc_AllGatherOp : Dpc_CollectiveOp<"all_gather",
    [{Every rank of a group receives the group's values concatenated along
    `dim`, in the group's order.

    ```mlir
    %1 = dpc.all_gather %0 over @plan ["tp"] dim 0
        : tensor<4x16xf32> -> tensor<8x16xf32>
    ```}],
    [{- (C4) `dim` is a dimension of `input`.
    - (C5) `result` has the element type of `input` and its shape with
      dimension `dim` multiplied by the group's size.}]> {
  let summary = "Concatenates the values of a group on every rank";
  let arguments = (ins Dpc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim, UnitAttr:$async);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `over` $mesh $axes `dim` $dim attr-dict `:` "
                       "type($input) `->` type($result)";
}

def Dpc_AllSliceOp : Dpc_CollectiveOp<"all_slice",
    [{Each rank keeps its block of `input` along `dim`: cut into as many
    blocks as the group has ranks, the i-th rank of the group keeps block
    i. The inverse of `all_gather`; it sends nothing, since every rank
    already holds the whole value.

    ```mlir
    %1 = dpc.all_slice %0 over @plan ["tp"] dim 1
        : tensor<8x16xf32> -> tensor<8x8xf32>
    ```}],
    [{- (C4) `dim` is a dimension of `input`, and the group's size divides
      its size.
    - (C5) `result` has the element type of `input` and its shape with
      dimension `dim` divided by the group's size.}], [], /*communicates=*/0> {
  let summary = "Keeps each rank's block of a value every rank holds";
  let arguments = (ins Dpc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim, UnitAttr:$async);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `over` $mesh $axes `dim` $dim attr-dict `:` "
                       "type($input) `->` type($result)";
}

def Dpc_AllToAllOp : Dpc_CollectiveOp<"all_to_all",
    [{Each rank splits its value along `split_dim` into as many blocks as
    the group has ranks and sends block j to the j-th rank of the group;
    each rank concatenates what it receives along `concat_dim`, in the
    group's order. It moves a split from `concat_dim` to `split_dim`.

    ```mlir
    %1 = dpc.all_to_all %0 over @plan ["tp"] split 1 concat 0
        : tensor<4x16xf32> -> tensor<8x8xf32>
    ```}],
    [{- (C4) `split_dim` and `concat_dim` are dimensions of `input`, and the
      group's size divides the size of `split_dim`.
    - (C5) `result` has the element type of `input` and its shape with
      `split_dim` divided and `concat_dim` multiplied by the group's size.}]> {
  let summary = "Exchanges blocks among the ranks of a group";
  let arguments = (ins Dpc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim,
                       I64Attr:$concat_dim, UnitAttr:$async);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input `over` $mesh $axes `split` $split_dim `concat` "
                       "$concat_dim attr-dict `:` type($input) `->` "
                       "type($result)";
}

def Dpc_SendOp : Dpc_Op<"send",
    [DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>]> {
  let summary = "Sends a value to another rank of a group";
  let description = [{
    Sends this rank's `input` to the rank `shift` places further along its
    group (the ranks of `mesh` that differ from it only along `axes`, in
    the collectives' order, wrapping around). It returns at once: the value
    waits at the receiver, in order, until a `dpc.recv` with the same group
    and shift takes it. Pipeline stages pass activations forward
    (`["pp"]`, shift 1) and gradients back (shift -1) this way.

    ```mlir
    dpc.send %act over @plan ["pp"] shift 1 : tensor<8x64xf32>
    ```

    Constraints:
    - (C1) `mesh` names a `dpc.mesh` of the enclosing module.
    - (C2) `axes` is a non-empty list of distinct axes of the mesh.
    - (C3) `shift` is not a multiple of the group's size (a rank does not
      send to itself).
  }];
  let arguments = (ins Dpc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$shift);
  let assemblyFormat = "$input `over` $mesh $axes `shift` $shift attr-dict "
                       "`:` type($input)";
  let hasVerifier = 1;
}

def Dpc_RecvOp : Dpc_Op<"recv",
    [DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>]> {
  let summary = "Receives the next value a rank of the group sent here";
  let description = [{
    Returns the oldest value not yet received that the rank `shift` places
    back along this rank's group sent here with a `dpc.send` of the same
    group and shift, waiting for it (for a bounded time) if none has come.

    ```mlir
    %act = dpc.recv over @plan ["pp"] shift 1 : tensor<8x64xf32>
    ```

    Constraints:
    - (C1) `mesh` names a `dpc.mesh` of the enclosing module.
    - (C2) `axes` is a non-empty list of distinct axes of the mesh.
    - (C3) `shift` is not a multiple of the group's size.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       I64Attr:$shift);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "`over` $mesh $axes `shift` $shift attr-dict `:` "
                       "type($result)";
  let hasVerifier = 1;
}

def Dpc_WaitOp : Dpc_Op<"wait", [Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<CostOpInterface, ["getFlops"]>]> {
  let summary = "Completes an asynchronous collective";
  let description = [{
    Returns `input`, the result of a collective started with `async`, once
    that collective has finished on this rank. Everything between the start
    and the wait may run while the collective moves data;
    `-dpc-overlap-collectives` starts each collective as soon as its operand
    is ready and waits as late as its readers allow.

    ```mlir
    %0 = dpc.all_reduce %g over @plan ["dp"] <sum> {async} : tensor<512xf32>
    ... // compute that does not read %0
    %1 = dpc.wait %0 : tensor<512xf32>
    ```

    Constraints:
    - (C1) `result` has the type of `input`.
    - (C2) `input` is the result of a collective marked `async`.
  }];
  let arguments = (ins Dpc_Tensor:$input);
  let results = (outs Dpc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // DPC_DIALECT_DPC_IR_DPCOPS
