//===- ShardableOpInterface.cpp - How an op may be split ------------------===//

#include "dpc/Interfaces/ShardableOpInterface.h"

#include "dpc/Interfaces/ShardableOpInterface.cpp.inc"
