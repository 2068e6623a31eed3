//===- ShardableOpInterface.td - How an op may be split ----*- tablegen -*-===//
//
// The planner and the partitioner learn how an op may be split over a mesh
// from its sharding rule, never from its name.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_SHARDABLEOPINTERFACE
#define DPC_INTERFACES_SHARDABLEOPINTERFACE

include "mlir/IR/OpBase.td"

def ShardableOpInterface : OpInterface<"ShardableOpInterface"> {
  let cppNamespace = "::mlir::dpc";
  let description = [{
    The sharding rule of an op in factor (einsum-like) form: the op's
    iteration space is a set of factors, and each dimension of each operand
    and result is indexed by one factor or by none. Matmul is
    `([b,i,k],[b,k,j])->([b,i,j])`: splitting the parallel factors `b`, `i`
    or `j` over a mesh axis needs no communication inside the op; splitting
    the reduction factor `k` leaves a partial sum in the result.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns the op's sharding rule.",
      /*retTy=*/"::mlir::dpc::ShardingRule", /*methodName=*/"getShardingRule",
      /*args=*/(ins)>,
  ];
}

#endif // DPC_INTERFACES_SHARDABLEOPINTERFACE
