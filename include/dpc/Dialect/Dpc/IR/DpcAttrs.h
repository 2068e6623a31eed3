//===- DpcAttrs.h - Attributes of the dpc dialect ---------------*- C++ -*-===//
//
// Declares the dpc enums and attributes (#dpc.sharding, #dpc.phase), and
// the check of a sharding against the value it describes.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_DIALECT_DPC_IR_DPCATTRS_H
#define DPC_DIALECT_DPC_IR_DPCATTRS_H

#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Interfaces/ReductionKind.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "dpc/Dialect/Dpc/IR/DpcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dpc/Dialect/Dpc/IR/DpcAttrs.h.inc"

namespace mlir::dpc {

class MeshOp;

/// The `dpc.mesh` that `sharding` names, looked up from `scope` (any op in
/// the module), or null.
MeshOp lookupMesh(ShardingAttr sharding, Operation *scope);

/// Checks `sharding` against a value of type `type` used under `scope`:
/// constraints (C2) to (C5) of #dpc.sharding. Errors go to `emitError`.
LogicalResult verifyShardingFor(ShardingAttr sharding, Type type,
                                Operation *scope,
                                function_ref<InFlightDiagnostic()> emitError);

/// The canonical form of `sharding` on `mesh`, in which equal layouts are
/// equal attributes: no axes of size 1, partial axes in the mesh's order.
ShardingAttr getCanonicalSharding(ShardingAttr sharding, MeshOp mesh);

/// The type of one device's block of a value of type `global` laid out as
/// `sharding` on `mesh`: each split dimension divided by its axes' sizes.
RankedTensorType getLocalType(ShardingAttr sharding, RankedTensorType global,
                              MeshOp mesh);

/// The inverse of getLocalType: the whole value's type.
RankedTensorType getGlobalType(ShardingAttr sharding, RankedTensorType local,
                               MeshOp mesh);

/// The coordinates of `device` on `mesh`, one per axis.
SmallVector<int64_t> getDeviceCoordinates(MeshOp mesh, int64_t device);

/// Where the block `device` holds of a value of shape `globalShape` laid
/// out as `sharding` starts, per dimension; the block has the local shape.
SmallVector<int64_t> getBlockStart(ShardingAttr sharding, MeshOp mesh,
                                   int64_t device,
                                   ArrayRef<int64_t> globalShape);

/// The per-value form on `op` (one sharding per result), if present.
SmallVector<ShardingAttr> getResultShardings(Operation *op);

/// The sharding of `value`: its defining op's entry, or its function
/// argument's attribute; null when it has none.
ShardingAttr getSharding(Value value);

/// Whether `func` carries a plan: a sharding on every argument.
/// A model's @forward with a few shardings written on it as overrides does
/// not; passes that act on the plan leave such a function alone.
bool isPlanned(FunctionOpInterface func);

} // namespace mlir::dpc

#endif // DPC_DIALECT_DPC_IR_DPCATTRS_H
