//===- ShardableOpInterface.h - How an op may be split ----------*- C++ -*-===//
//
// Declares the interface through which ops provide their sharding rule.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_INTERFACES_SHARDABLEOPINTERFACE_H
#define DPC_INTERFACES_SHARDABLEOPINTERFACE_H

#include "dpc/Interfaces/ShardingRule.h"
#include "mlir/IR/OpDefinition.h"

#include "dpc/Interfaces/ShardableOpInterface.h.inc"

#endif // DPC_INTERFACES_SHARDABLEOPINTERFACE_H
