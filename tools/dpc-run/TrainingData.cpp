//===- TrainingData.cpp - Batches and the learning rate -------------------===//

#include "TrainingData.h"
#include "Blocks.h"

#include "dpc/Runtime/Npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace mlir::dpc;
using namespace mlir::dpc::artifact;

double artifact::getLearningRate(const ArtifactRunOptions &options, double base,
                                 int step) {
  double lr = base;
  if (options.warmupSteps > 0 && step <= options.warmupSteps)
    return lr * step / options.warmupSteps;
  double progress = options.steps > options.warmupSteps
                        ? double(step - options.warmupSteps) /
                              double(options.steps - options.warmupSteps)
                        : 1.0;
  if (options.lrSchedule == "cosine")
    return lr * 0.5 * (1 + std::cos(M_PI * progress));
  if (options.lrSchedule == "linear")
    return lr * (1 - progress);
  return lr;
}

Status artifact::loadData(const ArtifactRunOptions &options,
                          const Manifest &manifest, DataSource &data) {
  if (options.data == "synthetic")
    return Status::success();
  std::vector<::dpc::NamedTensor> tensors;
  if (Status status = ::dpc::readNpzFile(options.data, tensors);
      status.isError())
    return status;
  for (::dpc::NamedTensor &tensor : tensors)
    data.arrays[tensor.name] = std::move(tensor.tensor);
  data.batches = -1;
  for (const TensorSpec &spec : manifest.arguments) {
    if (spec.role != "input")
      continue;
    auto it = data.arrays.find(spec.name);
    if (it == data.arrays.end())
      return Status::error(options.data + ": has no array '" + spec.name +
                           "', an input of the step");
    const HostTensor &array = it->second;
    // A step of several micro-batches takes its samples as [micro-batches,
    // batch, ...]: that many consecutive batches of the data.
    size_t batchDims = manifest.microBatches > 1 ? 2 : 1;
    int64_t rows = 1;
    for (size_t d = 0; d < batchDims && d < spec.shape.size(); ++d)
      rows *= spec.shape[d];
    std::vector<int64_t> stacked(spec.shape.begin() +
                                     std::min(batchDims, spec.shape.size()),
                                 spec.shape.end());
    stacked.insert(stacked.begin(), rows);
    if (spec.shape.size() < batchDims || array.shape.size() != stacked.size() ||
        !std::equal(stacked.begin() + 1, stacked.end(),
                    array.shape.begin() + 1) ||
        array.shape[0] % rows != 0 || array.shape[0] == 0)
      return Status::error(
          options.data + ": array '" + spec.name + "' of shape " +
          formatShape(array.shape) +
          " is not a whole number of the step's batches of shape " +
          formatShape(stacked) +
          (batchDims > 1 ? " (the step's " +
                               std::to_string(manifest.microBatches) +
                               " micro-batches of " +
                               std::to_string(spec.shape[1]) +
                               " samples, consecutive along dimension 0)"
                         : ""));
    int64_t count = array.shape[0] / rows;
    data.batches = data.batches < 0 ? count : std::min(data.batches, count);
  }
  if (data.batches < 0)
    data.batches = 1;
  return Status::success();
}

Status artifact::getBatch(const ArtifactRunOptions &options,
                          const TensorSpec &spec, const DataSource &data,
                          int step, HostTensor &out) {
  if (options.data != "synthetic") {
    const HostTensor &array = data.arrays.find(spec.name)->second;
    HostTensor slice(array.dtype, spec.shape);
    size_t bytes = slice.data.size();
    int64_t index = (step - 1) % data.batches;
    std::memcpy(slice.data.data(), array.data.data() + index * bytes, bytes);
    return convertForSpec(spec, slice, out);
  }
  // Every rank draws the same global batch and keeps its block.
  out = HostTensor(spec.dtype, spec.shape);
  std::mt19937_64 engine(options.seed * 1000003 + step * 7919 +
                         std::hash<std::string>()(spec.name));
  int64_t n = out.getNumElements();
  if (spec.dtype == DType::I64) {
    // Labels and token ids: valid classes and rows of what they index.
    std::uniform_int_distribution<int64_t> draw(0, spec.bound - 1);
    for (int64_t i = 0; i < n; ++i)
      out.getData<int64_t>()[i] = draw(engine);
    return Status::success();
  }
  std::normal_distribution<double> draw(0.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    if (spec.dtype == DType::F64)
      out.getData<double>()[i] = draw(engine);
    else
      out.getData<float>()[i] = float(draw(engine));
  }
  return Status::success();
}
