//===- DifferentiableOpInterface.td - Gradient rules -------*- tablegen -*-===//
//
// Reverse-mode autodiff (Transforms/Autodiff) asks each op to build its own
// vector-Jacobian product, so the pass holds no table of op names.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_DIFFERENTIABLEOPINTERFACE
#define DPC_INTERFACES_DIFFERENTIABLEOPINTERFACE

include "mlir/IR/OpBase.td"

def DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::dpc";
  let description = [{
    The gradient rule of an op. Given the gradient of the loss with respect
    to each result (a null value where a result does not reach the loss), the
    op emits, at the builder's insertion point, the gradient with respect to
    each operand. Operands that are not differentiable (integer indices,
    shapes) get a null value.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Emits the vector-Jacobian product of this op.",
      /*retTy=*/"::llvm::LogicalResult", /*methodName=*/"buildGradients",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::llvm::ArrayRef<::mlir::Value>":$resultGradients,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>,
  ];
}

#endif // DPC_INTERFACES_DIFFERENTIABLEOPINTERFACE
