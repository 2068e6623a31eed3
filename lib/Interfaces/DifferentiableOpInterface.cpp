//===- DifferentiableOpInterface.cpp - Gradient rules ---------------------===//

#include "dpc/Interfaces/DifferentiableOpInterface.h"

#include "dpc/Interfaces/DifferentiableOpInterface.cpp.inc"
