//===- CostOpInterface.td - What an op costs to execute ----*- tablegen -*-===//
//
// The cost model (Analysis/CostModel) asks every op for the work it does and
// the memory traffic it causes; it never switches on op names.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_COSTOPINTERFACE
#define DPC_INTERFACES_COSTOPINTERFACE

include "mlir/IR/OpBase.td"

def CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::dpc";
  let description = [{
    Reports the arithmetic work of one execution of the op on its full
    (unpartitioned) operand shapes, and the bytes it reads and writes. A
    fused multiply-add counts as two floating-point operations, as in the
    FLOP counts of Megatron-LM and Alpa.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Floating-point operations of one execution.",
      /*retTy=*/"double", /*methodName=*/"getFlops", /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        // Elementwise: one operation per result element.
        return ::mlir::dpc::getNumElements($_op->getResult(0).getType());
      }]>,
    InterfaceMethod<
      /*desc=*/"Bytes read from operands plus bytes written to results.",
      /*retTy=*/"double", /*methodName=*/"getBytesAccessed", /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::dpc::getOperandAndResultBytes($_op);
      }]>,
  ];
}

#endif // DPC_INTERFACES_COSTOPINTERFACE
