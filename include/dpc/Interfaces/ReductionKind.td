//===- ReductionKind.td - How partial results combine ------*- tablegen -*-===//
//
// A reduction factor split over a mesh axis leaves one partial result per
// device; its kind says how they combine. Sharding rules state it, the
// #dpc.sharding attribute carries it, the partitioner finishes it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_REDUCTIONKIND
#define DPC_INTERFACES_REDUCTIONKIND

include "mlir/IR/EnumAttr.td"

def Dpc_ReductionKind : I32EnumAttr<"ReductionKind",
    "how the shards of a partial value combine into the whole value", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]> {
  let cppNamespace = "::mlir::dpc";
  let genSpecializedAttr = 0;
}

#endif // DPC_INTERFACES_REDUCTIONKIND
