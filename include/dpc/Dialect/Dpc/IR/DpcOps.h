//===- DpcOps.h - Ops of the dpc dialect ------------------------*- C++ -*-===//
//
// Declares the dpc ops and the shared helpers of their verifiers and
// sharding rules.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_DIALECT_DPC_IR_DPCOPS_H
#define DPC_DIALECT_DPC_IR_DPCOPS_H

#include "dpc/Dialect/Dpc/IR/DpcAttrs.h"
#include "dpc/Dialect/Dpc/IR/DpcDialect.h"
#include "dpc/Interfaces/CostOpInterface.h"
#include "dpc/Interfaces/DifferentiableOpInterface.h"
#include "dpc/Interfaces/ShardableOpInterface.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dpc::OpTrait {
/// Marks an op that mixed precision keeps in f32 (Dpc_KeepsFullPrecision).
template <typename ConcreteType>
class KeepsFullPrecision
    : public mlir::OpTrait::TraitBase<ConcreteType, KeepsFullPrecision> {};
/// Marks an op over a group of ranks, which may start asynchronously
/// (Dpc_CollectiveTrait).
template <typename ConcreteType>
class Collective : public mlir::OpTrait::TraitBase<ConcreteType, Collective> {};
/// Marks a collective that moves data between ranks
/// (Dpc_CommunicatesTrait).
template <typename ConcreteType>
class Communicates
    : public mlir::OpTrait::TraitBase<ConcreteType, Communicates> {};
/// Marks an op that maps pending sums to a pending sum
/// (Dpc_KeepsPendingSums).
template <typename ConcreteType>
class KeepsPendingSums
    : public mlir::OpTrait::TraitBase<ConcreteType, KeepsPendingSums> {};
} // namespace mlir::dpc::OpTrait

namespace mlir::dpc {

/// Whether `operand` of an op that keeps pending sums takes its share of
/// the sum: floating-point operands do; integer ones are indices, the same
/// on every rank.
inline bool takesPendingSum(Value operand) {
  return isa<FloatType>(cast<ShapedType>(operand.getType()).getElementType());
}

/// Whether a sum pending in `op`'s operands can stay pending in its
/// results: the op keeps pending sums (Dpc_KeepsPendingSums) and every
/// result is floating point (a cast to an integer truncates each term).
inline bool keepsPendingSums(Operation *op) {
  return op->hasTrait<OpTrait::KeepsPendingSums>() &&
         llvm::all_of(op->getResultTypes(), [](Type type) {
           return isa<FloatType>(cast<ShapedType>(type).getElementType());
         });
}

/// The NumPy broadcast of `shapes`, or failure when they are incompatible.
FailureOr<SmallVector<int64_t>>
getBroadcastShape(ArrayRef<ArrayRef<int64_t>> shapes);

/// Output size of a sliding window (convolution, pooling) along one
/// dimension, or a non-positive number when the window does not fit.
int64_t getWindowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                            int64_t padBegin, int64_t padEnd, int64_t dilation,
                            bool ceilMode);

/// Verifies an op whose operands broadcast to its result: the `data`
/// operands share one element type, the result has `resultElementType`,
/// and the result shape is the broadcast of all operand shapes.
LogicalResult verifyBroadcastingOp(Operation *op, ArrayRef<Value> data,
                                   Type resultElementType);

/// The elementwise rule of an op whose operands broadcast to its result:
/// one parallel factor per result dimension; operand dimensions of size 1
/// that are broadcast map to no factor.
ShardingRule getElementwiseShardingRule(Operation *op);

/// The rule of a reduction of operand 0 over `dims`, whose partial results
/// combine by `kind`; `reducedKind` is NeedReplication for a reduction that
/// needs the whole of its dimensions (argmax).
ShardingRule
getReductionShardingRule(Operation *op, ArrayRef<int64_t> dims,
                         ReductionKind kind,
                         FactorKind reducedKind = FactorKind::Reduction);

} // namespace mlir::dpc

#define GET_OP_CLASSES
#include "dpc/Dialect/Dpc/IR/DpcOps.h.inc"

#endif // DPC_DIALECT_DPC_IR_DPCOPS_H
