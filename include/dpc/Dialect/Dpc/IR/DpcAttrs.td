//===- DpcAttrs.td - Attributes of the dpc dialect ---------*- tablegen -*-===//
//
// The plan as typed IR: how a value lies on a named device mesh, and the
// phase of the training step an op belongs to. Each description is the
// attribute's specification, with the numbered constraints its verifier
// enforces and cites.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_DIALECT_DPC_IR_DPCATTRS
#define DPC_DIALECT_DPC_IR_DPCATTRS

include "dpc/Dialect/Dpc/IR/DpcDialect.td"
include "dpc/Dialect/Dpc/IR/DpcEnums.td"
include "dpc/Interfaces/ReductionKind.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Dpc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dpc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Dpc_ShardingAttr : Dpc_Attr<"Sharding", "sharding"> {
  let summary = "How a tensor lies on a device mesh";
  let description = [{
    A sharding names a `dpc.mesh` and says, for each dimension of a tensor,
    which mesh axes split it, and over which axes the tensor is a pending
    partial result together with how the partial values combine.

    ```mlir
    #dpc.sharding<@plan, [dp, *, tp]>
    #dpc.sharding<@plan, [(dp, tp), *]>
    #dpc.sharding<@plan, [*, *], partial = [tp : sum, dp : mean]>
    ```

    `*` is a whole dimension. A dimension split over several axes lists
    them major to minor: under `[(dp, tp)]` the device at coordinates
    (`dp` = i, `tp` = j) holds block `i * |tp| + j`. A device's block of a
    split dimension of size `n` over axes of total size `k` is the range
    `[b * n / k, (b + 1) * n / k)`. Axes that neither split a dimension nor
    hold a partial result replicate the tensor.

    A partial value is one term per device of the group along each partial
    axis; the whole value is their reduction: `sum` adds them, `mean`
    averages them (every shard counts the same number of elements), `max`
    and `min` take the elementwise extreme. Several partial axes combine
    in any order (the kinds commute over distinct axes).

    Where it appears: `dpc.sharding` on function arguments and results
    (one sharding) and on ops (an array with one sharding per result, the
    per-value form), and as the target of `dpc.reshard`.

    Constraints:
    - (C1) every mesh axis appears at most once, over the dimensions and
      the partial axes together.
    - (C2) `mesh` names a `dpc.mesh` op of the enclosing module.
    - (C3) the sharding has one entry per dimension of the tensor's type.
    - (C4) every axis named is an axis of the mesh.
    - (C5) every split dimension's size is a multiple of the product of
      the sizes of the axes that split it (uneven splits are refused
      rather than truncated).
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    "::mlir::ArrayAttr":$dims,
    "::mlir::ArrayAttr":$partialAxes,
    ArrayRefParameter<"::mlir::dpc::ReductionKind">:$partialKinds);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::StringRef":$mesh,
                     "::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>>":$dims,
                     "::llvm::ArrayRef<std::pair<::llvm::StringRef, ::mlir::dpc::ReductionKind>>":$partial)>
  ];
  let extraClassDeclaration = [{
    unsigned getRank() const { return getDims().size(); }
    /// The axes that split dimension `dim`, major to minor.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(unsigned dim) const;
    /// The reduction pending over `axis`, if the value is partial over it.
    std::optional<::mlir::dpc::ReductionKind>
    getPartialKind(::llvm::StringRef axis) const;
    bool isPartial() const { return !getPartialAxes().empty(); }
    /// The same sharding with no pending partial results.
    ShardingAttr withoutPartial() const;
    /// Replicated on `mesh`, for a tensor of rank `rank`.
    static ShardingAttr getReplicated(::mlir::MLIRContext *context,
                                      ::llvm::StringRef mesh, unsigned rank);
  }];
}

def Dpc_PhaseAttr : EnumAttr<Dpc_Dialect, Dpc_Phase, "phase"> {
  let summary = "The part of the training step an op belongs to";
  let description = [{
    Autodiff marks every op of `@forward_backward` as `forward` or
    `backward`, and the training-step builder marks the update in
    `@train_step` as `optimizer`: `dpc.phase = #dpc.phase<backward>`.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Dpc_ReductionKindAttr : EnumAttr<Dpc_Dialect, Dpc_ReductionKind,
                                     "reduction"> {
  let summary = "How a collective combines the values of a group";
  let assemblyFormat = "`<` $value `>`";
}

#endif // DPC_DIALECT_DPC_IR_DPCATTRS
