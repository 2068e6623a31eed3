//===- Kernels.h - What compiled CUDA programs include ----------*- C++ -*-===//
//
// The CUDA backend's runtime, header-only: the kernels are templates
// instantiated in each artifact's translation unit, where their shapes
// are constants. Every kernel computes what the reference interpreter's
// kernel of the same name computes (lib/Interpreter); tensors are dense
// and row-major, element types float and double for floats (f16 and bf16
// held in floats, rounded) and int64_t for every integer type.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_KERNELS_H
#define DPC_RUNTIME_CUDA_KERNELS_H

#include "dpc/Runtime/Cuda/Collectives.h"
#include "dpc/Runtime/Cuda/Context.h"
#include "dpc/Runtime/Cuda/Contraction.h"
#include "dpc/Runtime/Cuda/Convolution.h"
#include "dpc/Runtime/Cuda/DataMovement.h"
#include "dpc/Runtime/Cuda/Elementwise.h"
#include "dpc/Runtime/Cuda/Loss.h"
#include "dpc/Runtime/Cuda/Normalization.h"
#include "dpc/Runtime/Cuda/Pooling.h"
#include "dpc/Runtime/Cuda/Reduction.h"

#endif // DPC_RUNTIME_CUDA_KERNELS_H
