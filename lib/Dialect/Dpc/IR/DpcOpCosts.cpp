//===- DpcOpCosts.cpp - FLOP counts of the dpc ops ------------------------===//
//
// Ops whose work is not one operation per result element override
// CostOpInterface::getFlops here. Counts follow Megatron-LM and Alpa: a
// multiply-add is two operations.
//
//===----------------------------------------------------------------------===//

#include "dpc/Dialect/Dpc/IR/DpcOps.h"

using namespace mlir;
using namespace mlir::dpc;

double MatmulOp::getFlops() {
  double contracted = getLhs().getType().getShape().back();
  return 2.0 * getNumElements(getResult().getType()) * contracted;
}

double Conv2DOp::getFlops() {
  ArrayRef<int64_t> filter = getFilter().getType().getShape();
  double macsPerOutput = filter[1] * filter[2] * filter[3];
  double outputs = getNumElements(getResult().getType());
  return 2.0 * outputs * macsPerOutput + (getBias() ? outputs : 0.0);
}

double ConvTranspose2DOp::getFlops() {
  // Every input element meets every filter tap of its group.
  ArrayRef<int64_t> filter = getFilter().getType().getShape();
  double macsPerInput = filter[1] * filter[2] * filter[3];
  double flops = 2.0 * getNumElements(getInput().getType()) * macsPerInput;
  return flops + (getBias() ? getNumElements(getResult().getType()) : 0.0);
}

double Conv2DFilterGradOp::getFlops() {
  ArrayRef<int64_t> filter = getResult().getType().getShape();
  double macsPerOutput = filter[1] * filter[2] * filter[3];
  return 2.0 * getNumElements(getOutGrad().getType()) * macsPerOutput;
}

double MaxPool2DGradOp::getFlops() {
  ArrayRef<int64_t> kernel = getKernelShape();
  return getNumElements(getOutGrad().getType()) * kernel[0] * kernel[1];
}

double AvgPool2DGradOp::getFlops() {
  ArrayRef<int64_t> kernel = getKernelShape();
  return getNumElements(getOutGrad().getType()) * kernel[0] * kernel[1];
}

double MaxPool2DOp::getFlops() {
  ArrayRef<int64_t> kernel = getKernelShape();
  return getNumElements(getResult().getType()) * kernel[0] * kernel[1];
}

double AvgPool2DOp::getFlops() {
  ArrayRef<int64_t> kernel = getKernelShape();
  return getNumElements(getResult().getType()) * kernel[0] * kernel[1];
}

// max, subtract, exp, sum, divide (or log and subtract).
static constexpr double kSoftmaxFlopsPerElement = 5.0;
// mean, subtract, square, sum, scale, shift.
static constexpr double kNormFlopsPerElement = 8.0;

double SoftmaxOp::getFlops() {
  return kSoftmaxFlopsPerElement * getNumElements(getInput().getType());
}

double LogSoftmaxOp::getFlops() {
  return kSoftmaxFlopsPerElement * getNumElements(getInput().getType());
}

double LayerNormOp::getFlops() {
  return kNormFlopsPerElement * getNumElements(getInput().getType());
}

double BatchNormOp::getFlops() {
  return kNormFlopsPerElement * getNumElements(getInput().getType());
}

double ReshardOp::getFlops() {
  // Moves data; the cost model prices the collectives it lowers to.
  return 0.0;
}

double TransferOp::getFlops() {
  // Moves data; the cost model prices the send between stages.
  return 0.0;
}
