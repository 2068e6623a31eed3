//===- Resize.cpp - Nearest and linear resampling -------------------------===//
//
// dpc.resize maps each output coordinate to an input coordinate, dimension
// by dimension, by the op's coordinate mode; nearest mode rounds it to an
// input index, linear mode blends the two neighbouring indices in every
// dimension whose size changes (a multilinear blend of 2^k corners).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

namespace {

/// Where output index `x` of a dimension reads: the indices `low` and
/// `high` and the weight of `high` (0 for nearest).
struct Source {
  int64_t low;
  int64_t high;
  double weight;
};

double mapCoordinate(int64_t x, int64_t in, int64_t out, double scale,
                     StringRef mode) {
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "align_corners")
    return out == 1 ? 0.0 : static_cast<double>(x) * (in - 1) / (out - 1);
  if (mode == "pytorch_half_pixel" && out == 1)
    return 0.0;
  return (x + 0.5) / scale - 0.5; // half_pixel, pytorch_half_pixel
}

int64_t roundNearest(double coordinate, StringRef mode) {
  if (mode == "floor")
    return static_cast<int64_t>(std::floor(coordinate));
  if (mode == "ceil")
    return static_cast<int64_t>(std::ceil(coordinate));
  double floor = std::floor(coordinate);
  double fraction = coordinate - floor;
  if (fraction == 0.5)
    return static_cast<int64_t>(mode == "round_prefer_ceil" ? floor + 1
                                                            : floor);
  return static_cast<int64_t>(std::round(coordinate));
}

} // namespace

/// Calls `tap(i, offset, weight)` for every input element (row-major
/// `offset`) that output element `i` reads, with its weight. Resize sums
/// the taps; its gradient scatters through the same taps.
template <typename Fn>
void forEachTap(ArrayRef<int64_t> shape, ArrayRef<int64_t> resultShape,
                const ResizeParams &params, Fn &&tap) {
  int64_t rank = shape.size();
  bool linear = params.mode == "linear";
  // The sources of every output index, per dimension.
  SmallVector<SmallVector<Source>> sources(rank);
  SmallVector<int64_t> blended; // the dimensions linear mode blends
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = shape[d], out = resultShape[d];
    if (linear && in != out)
      blended.push_back(d);
    for (int64_t x = 0; x < out; ++x) {
      double coordinate =
          mapCoordinate(x, in, out, params.scales[d], params.coordinateMode);
      if (!linear || in == out) {
        int64_t index =
            linear ? x : roundNearest(coordinate, params.nearestMode);
        index = std::clamp<int64_t>(index, 0, in - 1);
        sources[d].push_back({index, index, 0.0});
        continue;
      }
      coordinate = std::clamp(coordinate, 0.0, static_cast<double>(in - 1));
      int64_t low = static_cast<int64_t>(std::floor(coordinate));
      int64_t high = std::min(low + 1, in - 1);
      sources[d].push_back({low, high, coordinate - low});
    }
  }
  SmallVector<int64_t> strides = getStrides(shape);
  SmallVector<int64_t> index(rank, 0);
  int64_t count = 1;
  for (int64_t size : resultShape)
    count *= size;
  for (int64_t i = 0; i < count; ++i) {
    // The corner with every blended dimension at its low neighbour.
    int64_t base = 0;
    for (int64_t d = 0; d < rank; ++d)
      base += sources[d][index[d]].low * strides[d];
    for (int64_t corner = 0; corner < (int64_t(1) << blended.size());
         ++corner) {
      double weight = 1;
      int64_t offset = base;
      for (size_t k = 0; k < blended.size(); ++k) {
        const Source &source = sources[blended[k]][index[blended[k]]];
        bool high = (corner >> k) & 1;
        weight *= high ? source.weight : 1 - source.weight;
        if (high)
          offset += (source.high - source.low) * strides[blended[k]];
      }
      if (weight != 0)
        tap(i, offset, weight);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < resultShape[d])
        break;
      index[d] = 0;
    }
  }
}

Tensor interpreter::resize(const Tensor &input, const ResizeParams &params,
                           ArrayRef<int64_t> resultShape) {
  Tensor result(input.getKind(), resultShape);
  dispatchFloatKind(input.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> in = input.getData<T>();
    std::vector<double> sums(result.getNumElements());
    forEachTap(input.getShape(), resultShape, params,
               [&](int64_t i, int64_t offset, double weight) {
                 sums[i] += weight * in[offset];
               });
    std::copy(sums.begin(), sums.end(), result.getData<T>().begin());
  });
  return result;
}

Tensor interpreter::resizeGrad(const Tensor &outGrad,
                               const ResizeParams &params,
                               ArrayRef<int64_t> resultShape) {
  Tensor result(outGrad.getKind(), resultShape);
  dispatchFloatKind(outGrad.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> grad = outGrad.getData<T>();
    std::vector<double> sums(result.getNumElements());
    forEachTap(resultShape, outGrad.getShape(), params,
               [&](int64_t i, int64_t offset, double weight) {
                 sums[offset] += weight * grad[i];
               });
    std::copy(sums.begin(), sums.end(), result.getData<T>().begin());
  });
  return result;
}
