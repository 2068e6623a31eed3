//===- DpcEnums.td - Enumerations of the dpc dialect -------*- tablegen -*-===//

#ifndef DPC_DIALECT_DPC_IR_DPCENUMS
#define DPC_DIALECT_DPC_IR_DPCENUMS

include "mlir/IR/EnumAttr.td"

def Dpc_ComparePredicateAttr : I32EnumAttr<"ComparePredicate",
    "comparison of two tensors, elementwise", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::dpc";
}

def Dpc_LossReductionAttr : I32EnumAttr<"LossReduction",
    "how per-sample losses are combined", [
      I32EnumAttrCase<"mean", 0>, I32EnumAttrCase<"sum", 1>,
      I32EnumAttrCase<"none", 2>]> {
  let cppNamespace = "::mlir::dpc";
}

def Dpc_Phase : I32EnumAttr<"Phase",
    "the part of the training step an op belongs to", [
      I32EnumAttrCase<"forward", 0>, I32EnumAttrCase<"backward", 1>,
      I32EnumAttrCase<"optimizer", 2>]> {
  let cppNamespace = "::mlir::dpc";
  let genSpecializedAttr = 0;
}

#endif // DPC_DIALECT_DPC_IR_DPCENUMS
