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
    InterfaceMethod<
      /*desc=*/[{
        Rewrites the op in place for one rank of a partitioned program. Its
        operands are already the rank's local values, laid out as the
        op's `dpc.operand_shardings` say; `localResultTypes` are the local
        types of its results under its `dpc.sharding`. The default sets the
        result types, which is all an op needs whose attributes hold no
        global size. An op whose attributes do (a slice's limits), or whose
        local result needs finishing before the planned collectives apply
        (a count-weighted mean), rewrites itself, building new ops with
        `builder` (set before the op) and replacing its results. Fails with
        an error on the op where it cannot run on these shards.
      }],
      /*retTy=*/"::llvm::LogicalResult", /*methodName=*/"partition",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::TypeRange":$localResultTypes),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        for (auto [result, type] :
             llvm::zip_equal($_op->getResults(), localResultTypes))
          result.setType(type);
        return ::mlir::success();
      }]>,
    InterfaceMethod<
      /*desc=*/[{
        The all-reduces the op's `partition` adds when `factor` of its
        rule is split, so that the planner prices what will be built (a
        synchronized batch norm's statistics); none by default.
      }],
      /*retTy=*/"::mlir::dpc::SplitCollectives",
      /*methodName=*/"getSplitCollectives", /*args=*/(ins "int64_t":$factor),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{ return {}; }]>,
  ];
}

#endif // DPC_INTERFACES_SHARDABLEOPINTERFACE
