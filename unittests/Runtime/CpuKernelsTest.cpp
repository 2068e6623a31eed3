//===- CpuKernelsTest.cpp - The kernels compiled CPU programs call --------===//
//
// Each kernel against a brute-force loop over the definition, or against
// values computed by hand, on shapes small enough to read but with the
// awkward cases: strides, padding, dilations and groups together,
// broadcast batches, ties, NaN, negative and out-of-range indices.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/CpuKernels.h"
#include "dpc/Runtime/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace dpc::cpu;

namespace {

/// `count` deterministic values in [-1, 1).
template <typename T = double>
std::vector<T> makeValues(int64_t count, uint64_t seed = 1) {
  std::vector<T> values(count);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (T &value : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    value = static_cast<T>(static_cast<double>(state >> 11) /
                               static_cast<double>(1ull << 52) -
                           1.0);
  }
  return values;
}

template <typename T>
void expectClose(const std::vector<T> &actual, const std::vector<T> &expected,
                 double tolerance = 1e-12) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i],
                tolerance * (1 + std::fabs(double(expected[i]))))
        << "at element " << i;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// [.., m, k] x [.., k, n] with both operands' batch given by `lhsBatch`
/// and `rhsBatch` (each of the output's batch rank, 1 where broadcast).
std::vector<double> referenceMatmul(const std::vector<double> &lhs,
                                    const std::vector<double> &rhs,
                                    std::vector<int64_t> lhsBatch,
                                    std::vector<int64_t> rhsBatch, int64_t m,
                                    int64_t k, int64_t n) {
  std::vector<int64_t> batch(lhsBatch.size());
  int64_t count = 1;
  for (size_t d = 0; d < batch.size(); ++d) {
    batch[d] = std::max(lhsBatch[d], rhsBatch[d]);
    count *= batch[d];
  }
  std::vector<double> out(count * m * n);
  for (int64_t b = 0; b < count; ++b) {
    // Decompose b into indices and recompose each operand's batch.
    int64_t rest = b, lhsIndex = 0, rhsIndex = 0, lhsScale = 1, rhsScale = 1;
    for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      int64_t index = rest % batch[d];
      rest /= batch[d];
      lhsIndex += (lhsBatch[d] == 1 ? 0 : index) * lhsScale;
      rhsIndex += (rhsBatch[d] == 1 ? 0 : index) * rhsScale;
      lhsScale *= lhsBatch[d];
      rhsScale *= rhsBatch[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum +=
              lhs[(lhsIndex * m + i) * k + p] * rhs[(rhsIndex * k + p) * n + j];
        out[(b * m + i) * n + j] = sum;
      }
  }
  return out;
}

TEST(CpuKernelsTest, MatmulBroadcastsBatches) {
  // [2, 1, 3, 4] x [3, 4, 5] -> [2, 3, 3, 5].
  std::vector<double> lhs = makeValues(2 * 3 * 4, 1);
  std::vector<double> rhs = makeValues(3 * 4 * 5, 2);
  std::vector<double> out(2 * 3 * 3 * 5);
  matmul(lhs.data(), {2, 1, 3, 4}, rhs.data(), {3, 4, 5}, out.data(),
         {2, 3, 3, 5});
  expectClose(out, referenceMatmul(lhs, rhs, {2, 1}, {1, 3}, 3, 4, 5));
}

TEST(CpuKernelsTest, MatmulWithSharedOrBroadcastOperand) {
  // A shared right-hand side (one tall GEMM) and a broadcast left-hand
  // side (one GEMM per batch).
  std::vector<double> a = makeValues(2 * 3 * 4, 3), w = makeValues(4 * 5, 4);
  std::vector<double> out(2 * 3 * 5);
  matmul(a.data(), {2, 3, 4}, w.data(), {4, 5}, out.data(), {2, 3, 5});
  expectClose(out, referenceMatmul(a, w, {2}, {1}, 3, 4, 5));

  std::vector<double> l = makeValues(3 * 4, 5), r = makeValues(2 * 4 * 5, 6);
  matmul(l.data(), {3, 4}, r.data(), {2, 4, 5}, out.data(), {2, 3, 5});
  expectClose(out, referenceMatmul(l, r, {1}, {2}, 3, 4, 5));
}

TEST(CpuKernelsTest, MatmulFloatAndEmptyContraction) {
  std::vector<float> lhs = {1, 2, 3, 4, 5, 6}, rhs = {1, 0, -1, 2, 0.5f, 1};
  std::vector<float> out(4);
  matmul(lhs.data(), {2, 3}, rhs.data(), {3, 2}, out.data(), {2, 2});
  expectClose(out, {1 - 2 + 1.5f, 4 + 3, 4 - 5 + 3, 10 + 6}, 1e-6);

  std::vector<float> zeros(6, 7.0f);
  matmul(lhs.data(), {2, 0}, rhs.data(), {0, 3}, zeros.data(), {2, 3});
  expectClose(zeros, std::vector<float>(6, 0.0f));
}

struct ConvCase {
  int64_t batch, channels, height, width, filters, kh, kw, groups;
  Conv2DParams params;
  int64_t outHeight() const {
    return (height + params.padding[0] + params.padding[2] -
            params.dilations[0] * (kh - 1) - 1) /
               params.strides[0] +
           1;
  }
  int64_t outWidth() const {
    return (width + params.padding[1] + params.padding[3] -
            params.dilations[1] * (kw - 1) - 1) /
               params.strides[1] +
           1;
  }
};

/// The 7-loop definition of conv2d, with bias.
std::vector<double> referenceConv(const ConvCase &c,
                                  const std::vector<double> &in,
                                  const std::vector<double> &filter,
                                  const std::vector<double> &bias) {
  int64_t oh = c.outHeight(), ow = c.outWidth();
  int64_t cg = c.channels / c.groups, fg = c.filters / c.groups;
  std::vector<double> out(c.batch * c.filters * oh * ow);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t f = 0; f < c.filters; ++f)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = bias[f];
          for (int64_t ch = 0; ch < cg; ++ch)
            for (int64_t y = 0; y < c.kh; ++y)
              for (int64_t x = 0; x < c.kw; ++x) {
                int64_t iy = oy * c.params.strides[0] +
                             y * c.params.dilations[0] - c.params.padding[0];
                int64_t ix = ox * c.params.strides[1] +
                             x * c.params.dilations[1] - c.params.padding[1];
                if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width)
                  continue;
                int64_t channel = f / fg * cg + ch;
                sum +=
                    in[((b * c.channels + channel) * c.height + iy) * c.width +
                       ix] *
                    filter[((f * cg + ch) * c.kh + y) * c.kw + x];
              }
          out[((b * c.filters + f) * oh + oy) * ow + ox] = sum;
        }
  return out;
}

// Stride 2, asymmetric padding, dilation 2 and two groups at once.
const ConvCase kConv = {
    2, 4, 7, 8, 6, 3, 3, 2, {{2, 2}, {1, 2, 0, 1}, {2, 2}, 2}};

TEST(CpuKernelsTest, Conv2dMatchesDirectLoops) {
  const ConvCase &c = kConv;
  ASSERT_EQ(c.outHeight(), 2);
  ASSERT_EQ(c.outWidth(), 4);
  std::vector<double> in = makeValues(2 * 4 * 7 * 8, 7);
  std::vector<double> filter = makeValues(6 * 2 * 3 * 3, 8);
  std::vector<double> bias = makeValues(6, 9);
  std::vector<double> out(2 * 6 * 2 * 4);
  conv2d(in.data(), {2, 4, 7, 8}, filter.data(), {6, 2, 3, 3}, bias.data(),
         c.params, out.data(), {2, 6, 2, 4});
  expectClose(out, referenceConv(c, in, filter, bias));

  std::vector<double> noBias(6, 0.0);
  conv2d(in.data(), {2, 4, 7, 8}, filter.data(), {6, 2, 3, 3},
         static_cast<const double *>(nullptr), c.params, out.data(),
         {2, 6, 2, 4});
  expectClose(out, referenceConv(c, in, filter, noBias));
}

TEST(CpuKernelsTest, Conv2dPointwiseShortcutAndFloat) {
  // A 1x1 kernel with unit strides multiplies the image directly.
  ConvCase c = {2, 3, 4, 5, 2, 1, 1, 1, {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1}};
  std::vector<double> in = makeValues(2 * 3 * 4 * 5, 10);
  std::vector<double> filter = makeValues(2 * 3, 11), bias = {0.5, -1};
  std::vector<double> out(2 * 2 * 4 * 5);
  conv2d(in.data(), {2, 3, 4, 5}, filter.data(), {2, 3, 1, 1}, bias.data(),
         c.params, out.data(), {2, 2, 4, 5});
  expectClose(out, referenceConv(c, in, filter, bias));

  // A 1xK kernel whose end padding keeps the width is not pointwise.
  ConvCase wide = {1, 2, 3, 4, 2, 1, 3, 1, {{1, 1}, {0, 0, 0, 2}, {1, 1}, 1}};
  ASSERT_EQ(wide.outWidth(), 4);
  std::vector<double> wideFilter = makeValues(2 * 2 * 3, 33);
  std::vector<double> wideOut(2 * 3 * 4);
  conv2d(in.data(), {1, 2, 3, 4}, wideFilter.data(), {2, 2, 1, 3}, bias.data(),
         wide.params, wideOut.data(), {1, 2, 3, 4});
  expectClose(wideOut, referenceConv(wide, in, wideFilter, bias));

  std::vector<double> inD = makeValues(2 * 4 * 7 * 8, 12);
  std::vector<double> filterD = makeValues(6 * 2 * 3 * 3, 13);
  std::vector<float> inF(inD.begin(), inD.end());
  std::vector<float> filterF(filterD.begin(), filterD.end());
  std::vector<float> outF(2 * 6 * 2 * 4);
  conv2d(inF.data(), {2, 4, 7, 8}, filterF.data(), {6, 2, 3, 3},
         static_cast<const float *>(nullptr), kConv.params, outF.data(),
         {2, 6, 2, 4});
  std::vector<double> expected =
      referenceConv(kConv, std::vector<double>(inF.begin(), inF.end()),
                    std::vector<double>(filterF.begin(), filterF.end()),
                    std::vector<double>(6, 0.0));
  expectClose(outF, std::vector<float>(expected.begin(), expected.end()), 1e-5);
}

TEST(CpuKernelsTest, ConvTranspose2dMatchesScatterLoops) {
  // Input [2, 4, 3, 4], filter [4, 3, 3, 2], two groups, output padding 1
  // along the height.
  Conv2DParams p = {{2, 2}, {1, 0, 1, 1}, {2, 1}, 2};
  int64_t batch = 2, channels = 4, height = 3, width = 4, groupFilters = 3,
          kh = 3, kw = 2, filters = 6;
  int64_t oh = (height - 1) * 2 - 1 - 1 + 2 * (kh - 1) + 1 + 1;
  int64_t ow = (width - 1) * 2 - 0 - 1 + 1 * (kw - 1) + 0 + 1;
  ASSERT_EQ(oh, 8);
  ASSERT_EQ(ow, 7);
  std::vector<double> in = makeValues(batch * channels * height * width, 14);
  std::vector<double> filter =
      makeValues(channels * groupFilters * kh * kw, 15);
  std::vector<double> bias = makeValues(filters, 16);
  std::vector<double> out(batch * filters * oh * ow);
  convTranspose2d(in.data(), {2, 4, 3, 4}, filter.data(), {4, 3, 3, 2},
                  bias.data(), p, out.data(), {2, 6, oh, ow});

  std::vector<double> expected(out.size());
  int64_t groupChannels = channels / 2;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < filters; ++f)
      for (int64_t i = 0; i < oh * ow; ++i)
        expected[(b * filters + f) * oh * ow + i] = bias[f];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t iy = 0; iy < height; ++iy)
        for (int64_t ix = 0; ix < width; ++ix)
          for (int64_t local = 0; local < groupFilters; ++local)
            for (int64_t y = 0; y < kh; ++y)
              for (int64_t x = 0; x < kw; ++x) {
                int64_t oy = iy * 2 - 1 + y * 2, ox = ix * 2 - 0 + x * 1;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow)
                  continue;
                int64_t f = c / groupChannels * groupFilters + local;
                expected[((b * filters + f) * oh + oy) * ow + ox] +=
                    in[((b * channels + c) * height + iy) * width + ix] *
                    filter[((c * groupFilters + local) * kh + y) * kw + x];
              }
  expectClose(out, expected);
}

TEST(CpuKernelsTest, ConvolutionsAreAdjoint) {
  // conv2d is linear in its input and in its filter: <conv2d(x, w), g> is
  // <x, conv_transpose2d(g, w)> (the same OIHW filter read as the
  // transposed problem's (C, F / groups, ..)) and <w, filter_grad(x, g)>.
  // For the awkward case, and for a pointwise kernel with groups.
  for (const ConvCase &c :
       {kConv,
        ConvCase{1, 2, 3, 3, 4, 1, 1, 2, {{1, 1}, {0, 0, 0, 0}, {1, 1}, 2}}}) {
    int64_t oh = c.outHeight(), ow = c.outWidth();
    int64_t cg = c.channels / c.groups;
    std::vector<double> x =
        makeValues(c.batch * c.channels * c.height * c.width, 17);
    std::vector<double> w = makeValues(c.filters * cg * c.kh * c.kw, 18);
    std::vector<double> g = makeValues(c.batch * c.filters * oh * ow, 19);
    std::vector<double> y(g.size()), xt(x.size()), wt(w.size());
    Dims xShape = {c.batch, c.channels, c.height, c.width};
    Dims wShape = {c.filters, cg, c.kh, c.kw};
    Dims yShape = {c.batch, c.filters, oh, ow};
    conv2d(x.data(), xShape, w.data(), wShape,
           static_cast<const double *>(nullptr), c.params, y.data(), yShape);
    convTranspose2d(g.data(), yShape, w.data(), wShape,
                    static_cast<const double *>(nullptr), c.params, xt.data(),
                    xShape);
    conv2dFilterGrad(x.data(), xShape, g.data(), yShape, c.params, wt.data(),
                     wShape);
    auto dot = [](const std::vector<double> &a, const std::vector<double> &b) {
      double sum = 0;
      for (size_t i = 0; i < a.size(); ++i)
        sum += a[i] * b[i];
      return sum;
    };
    double expected = dot(y, g);
    EXPECT_NE(expected, 0.0);
    EXPECT_NEAR(dot(x, xt), expected, 1e-10);
    EXPECT_NEAR(dot(w, wt), expected, 1e-10);
  }
}

TEST(CpuKernelsTest, Conv2dFilterGradMatchesDirectLoops) {
  const ConvCase &c = kConv;
  int64_t oh = c.outHeight(), ow = c.outWidth(), cg = 2, fg = 3;
  std::vector<double> in = makeValues(2 * 4 * 7 * 8, 20);
  std::vector<double> grad = makeValues(2 * 6 * oh * ow, 21);
  std::vector<double> out(6 * 2 * 3 * 3, 99.0);
  conv2dFilterGrad(in.data(), {2, 4, 7, 8}, grad.data(), {2, 6, oh, ow},
                   c.params, out.data(), {6, 2, 3, 3});
  std::vector<double> expected(out.size());
  for (int64_t f = 0; f < 6; ++f)
    for (int64_t ch = 0; ch < cg; ++ch)
      for (int64_t y = 0; y < 3; ++y)
        for (int64_t x = 0; x < 3; ++x) {
          double sum = 0;
          for (int64_t b = 0; b < 2; ++b)
            for (int64_t oy = 0; oy < oh; ++oy)
              for (int64_t ox = 0; ox < ow; ++ox) {
                int64_t iy = oy * 2 + y * 2 - 1, ix = ox * 2 + x * 2 - 2;
                if (iy < 0 || iy >= 7 || ix < 0 || ix >= 8)
                  continue;
                sum += grad[((b * 6 + f) * oh + oy) * ow + ox] *
                       in[((b * 4 + f / fg * cg + ch) * 7 + iy) * 8 + ix];
              }
          expected[((f * cg + ch) * 3 + y) * 3 + x] = sum;
        }
  expectClose(out, expected);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST(CpuKernelsTest, MaxPool2dSkipsPaddingAndPropagatesNaN) {
  // 1x1x4x4, kernel 2x2, stride 2, dilation 1, padding [1, 1, 1, 1]:
  // a 3x3 output whose corner windows hold one input each.
  std::vector<double> in = {1,  2,  3,  4,  //
                            5,  6,  7,  8,  //
                            9,  10, 11, 12, //
                            13, 14, 15, kNaN};
  Pool2DParams p = {{2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false};
  std::vector<double> out(9);
  maxPool2d(in.data(), {1, 1, 4, 4}, p, out.data(), {1, 1, 3, 3});
  std::vector<double> expected = {1, 3, 4, 9, 11, 12, 13, 15};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(out[i], expected[i]) << "at element " << i;
  EXPECT_TRUE(std::isnan(out[8]));
}

TEST(CpuKernelsTest, MaxPool2dGradGoesToTheFirstMaximum) {
  // Ties everywhere: each window's gradient goes to its first (top-left)
  // tap. Kernel 2x2, stride 1 over 3x3 ones.
  std::vector<double> in(9, 1.0), grad = {1, 2, 3, 4};
  Pool2DParams p = {{2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false};
  std::vector<double> out(9, -1.0);
  maxPool2dGrad(in.data(), {1, 1, 3, 3}, grad.data(), {1, 1, 2, 2}, p,
                out.data());
  expectClose(out, {1, 2, 0, 3, 4, 0, 0, 0, 0});

  // A later strictly larger value wins; a tie with it does not.
  std::vector<float> values = {1, 3, 3, 2}, g = {5};
  std::vector<float> result(4);
  Pool2DParams whole = {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false};
  maxPool2dGrad(values.data(), {1, 1, 2, 2}, g.data(), {1, 1, 1, 1}, whole,
                result.data());
  expectClose(result, {0, 5, 0, 0});
}

/// Max pooling tap by tap, as its definition reads: each window's first
/// maximum in row-major order (the first NaN where there is one); -inf and
/// no winner for a window without inputs.
void referenceMaxPool(const std::vector<float> &in, int64_t planes, int64_t h,
                      int64_t w, const Pool2DParams &p, int64_t oh, int64_t ow,
                      std::vector<float> &out, const std::vector<float> &grad,
                      std::vector<double> &inGrad) {
  out.assign(planes * oh * ow, 0);
  inGrad.assign(planes * h * w, 0);
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t winner = -1;
        for (int64_t ky = 0; ky < p.kernel[0]; ++ky)
          for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
            int64_t iy = oy * p.strides[0] + ky * p.dilations[0] - p.padding[0];
            int64_t ix = ox * p.strides[1] + kx * p.dilations[1] - p.padding[1];
            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
              continue;
            int64_t tap = plane * h * w + iy * w + ix;
            if (winner < 0 || (!std::isnan(in[winner]) &&
                               (std::isnan(in[tap]) || in[tap] > in[winner])))
              winner = tap;
          }
        int64_t o = (plane * oh + oy) * ow + ox;
        out[o] =
            winner < 0 ? -std::numeric_limits<float>::infinity() : in[winner];
        if (winner >= 0)
          inGrad[winner] += grad[o];
      }
}

TEST(CpuKernelsTest, MaxPool2dEqualsItsDefinition) {
  // Windows that overlap, skip inputs (dilation, stride past the kernel),
  // reach into the padding or past it (as ceil_mode's last window does);
  // ties (values drawn from a few integers) and planes with NaN or -inf.
  std::mt19937 rng(7);
  struct Case {
    int64_t h, w;
    Pool2DParams p;
  } cases[] = {
      {16, 16, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false}},
      {9, 11, {{2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}, false}},
      {7, 7, {{2, 2}, {3, 3}, {0, 0, 2, 2}, {1, 1}, false}},
      {5, 6, {{3, 3}, {1, 1}, {2, 2, 2, 2}, {1, 1}, false}},
  };
  for (const Case &c : cases) {
    const Pool2DParams &p = c.p;
    int64_t oh = (c.h + p.padding[0] + p.padding[2] -
                  p.dilations[0] * (p.kernel[0] - 1) - 1) /
                     p.strides[0] +
                 1;
    int64_t ow = (c.w + p.padding[1] + p.padding[3] -
                  p.dilations[1] * (p.kernel[1] - 1) - 1) /
                     p.strides[1] +
                 1;
    int64_t planes = 6;
    std::vector<float> in(planes * c.h * c.w), grad(planes * oh * ow);
    for (float &v : in)
      v = static_cast<float>(static_cast<int>(rng() % 5) - 2);
    for (float &g : grad)
      g = static_cast<float>(rng() % 97) / 8;
    const float kNaNf = std::numeric_limits<float>::quiet_NaN();
    in[2 * c.h * c.w + 5] = kNaNf;
    in[3 * c.h * c.w + 1] = kNaNf;
    in[3 * c.h * c.w + 2] = kNaNf;
    std::fill(in.begin() + 4 * c.h * c.w, in.begin() + 5 * c.h * c.w,
              -std::numeric_limits<float>::infinity());
    std::vector<float> expected, out(grad.size()), inGrad(in.size());
    std::vector<double> expectedGrad;
    referenceMaxPool(in, planes, c.h, c.w, p, oh, ow, expected, grad,
                     expectedGrad);
    maxPool2d(in.data(), {2, 3, c.h, c.w}, p, out.data(), {2, 3, oh, ow});
    maxPool2dGrad(in.data(), {2, 3, c.h, c.w}, grad.data(), {2, 3, oh, ow}, p,
                  inGrad.data());
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_TRUE(out[i] == expected[i] ||
                  (std::isnan(out[i]) && std::isnan(expected[i])))
          << c.h << "x" << c.w << " output " << i << ": " << out[i]
          << " against " << expected[i];
    for (size_t i = 0; i < inGrad.size(); ++i)
      EXPECT_EQ(inGrad[i], static_cast<float>(expectedGrad[i]))
          << c.h << "x" << c.w << " input gradient " << i;
  }
}

TEST(CpuKernelsTest, AvgPool2dCountsPaddingOnlyWhenAsked) {
  // 1x1x3x3, kernel 2x2, stride 2, padding [1, 1, 0, 0]: windows cover
  // {0}, {1, 2}, {3, 6}, {4, 5, 7, 8} (row-major input positions).
  std::vector<double> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Pool2DParams p = {{2, 2}, {2, 2}, {1, 1, 0, 0}, {1, 1}, false};
  std::vector<double> out(4);
  avgPool2d(in.data(), {1, 1, 3, 3}, p, out.data(), {1, 1, 2, 2});
  expectClose(out, {1, 2.5, 5.5, 7});
  p.countIncludePad = true;
  avgPool2d(in.data(), {1, 1, 3, 3}, p, out.data(), {1, 1, 2, 2});
  expectClose(out, {0.25, 1.25, 2.75, 7});

  // ceil_mode: the last window runs past the input with no end padding;
  // those taps are not counted even under count_include_pad.
  Pool2DParams ceil = {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true};
  avgPool2d(in.data(), {1, 1, 3, 3}, ceil, out.data(), {1, 1, 2, 2});
  expectClose(out, {3, 4.5, 7.5, 9});
}

TEST(CpuKernelsTest, AvgPool2dGradIsTheAdjoint) {
  // <avg_pool(x), g> == <x, avg_pool_grad(g)>, dilated and padded.
  for (bool include : {false, true}) {
    Pool2DParams p = {{3, 2}, {2, 1}, {1, 0, 2, 1}, {2, 2}, include};
    int64_t oh = (6 + 1 + 2 - 2 * 2 - 1) / 2 + 1, ow = (5 + 0 + 1 - 2 - 1) + 1;
    std::vector<double> x = makeValues(2 * 3 * 6 * 5, 22);
    std::vector<double> g = makeValues(2 * 3 * oh * ow, 23);
    std::vector<double> y(g.size()), xt(x.size());
    avgPool2d(x.data(), {2, 3, 6, 5}, p, y.data(), {2, 3, oh, ow});
    avgPool2dGrad(g.data(), {2, 3, oh, ow}, p, xt.data(), {2, 3, 6, 5});
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < y.size(); ++i)
      lhs += y[i] * g[i];
    for (size_t i = 0; i < x.size(); ++i)
      rhs += x[i] * xt[i];
    EXPECT_NEAR(lhs, rhs, 1e-12);
    EXPECT_NE(lhs, 0.0);
  }
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, normalizations
//===----------------------------------------------------------------------===//

TEST(CpuKernelsTest, ReduceOverAnyDimensions) {
  // [2, 3, 4]: reduce {0, 2}, {1}, {2} and everything.
  std::vector<double> in = makeValues(24, 24);
  auto element = [&](int64_t a, int64_t b, int64_t c) {
    return in[(a * 3 + b) * 4 + c];
  };
  std::vector<double> out(3), expected(3, 0.0);
  reduce(in.data(), {2, 3, 4}, {0, 2}, ReduceKind::Sum, out.data());
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c)
        expected[b] += element(a, b, c);
  expectClose(out, expected);

  std::vector<double> middle(8), middleExpected(8, -1e300);
  reduce(in.data(), {2, 3, 4}, {1}, ReduceKind::Max, middle.data());
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c)
        middleExpected[a * 4 + c] =
            std::max(middleExpected[a * 4 + c], element(a, b, c));
  expectClose(middle, middleExpected);

  std::vector<double> last(6), lastExpected(6, 0.0);
  reduce(in.data(), {2, 3, 4}, {2}, ReduceKind::Mean, last.data());
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < 4; ++c)
      lastExpected[r] += in[r * 4 + c];
    lastExpected[r] /= 4;
  }
  expectClose(last, lastExpected);

  double all = 0, minimum = 1e300;
  for (double value : in)
    minimum = std::min(minimum, value);
  reduce(in.data(), {2, 3, 4}, {0, 1, 2}, ReduceKind::Min, &all);
  EXPECT_EQ(all, minimum);
}

TEST(CpuKernelsTest, ReduceMaxPropagatesNaNAndIntegersTruncate) {
  std::vector<float> in = {1, float(kNaN), 3, 4, 5, 6};
  std::vector<float> out(2);
  reduce(in.data(), {2, 3}, {1}, ReduceKind::Max, out.data());
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 6);

  std::vector<int64_t> ints = {-7, 2, 4, 1, -5, 9};
  std::vector<int64_t> sums(3), means(3), maxima(2), minima(2);
  reduce(ints.data(), {2, 3}, {0}, ReduceKind::Sum, sums.data());
  EXPECT_EQ(sums, (std::vector<int64_t>{-6, -3, 13}));
  reduce(ints.data(), {2, 3}, {0}, ReduceKind::Mean, means.data());
  EXPECT_EQ(means, (std::vector<int64_t>{-3, -1, 6}));
  reduce(ints.data(), {2, 3}, {1}, ReduceKind::Max, maxima.data());
  EXPECT_EQ(maxima, (std::vector<int64_t>{4, 9}));
  reduce(ints.data(), {2, 3}, {1}, ReduceKind::Min, minima.data());
  EXPECT_EQ(minima, (std::vector<int64_t>{-7, -5}));
}

TEST(CpuKernelsTest, SoftmaxAlongAMiddleAxis) {
  std::vector<double> in = makeValues(2 * 3 * 4, 25);
  in[5] = 700; // Would overflow exp without subtracting the maximum.
  for (bool logarithm : {false, true}) {
    std::vector<double> out(24), expected(24);
    softmax(in.data(), {2, 3, 4}, 1, logarithm, out.data());
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t c = 0; c < 4; ++c) {
        double maximum = -1e300, sum = 0;
        for (int64_t b = 0; b < 3; ++b)
          maximum = std::max(maximum, in[(a * 3 + b) * 4 + c]);
        for (int64_t b = 0; b < 3; ++b)
          sum += std::exp(in[(a * 3 + b) * 4 + c] - maximum);
        for (int64_t b = 0; b < 3; ++b) {
          double shifted = in[(a * 3 + b) * 4 + c] - maximum;
          expected[(a * 3 + b) * 4 + c] =
              logarithm ? shifted - std::log(sum) : std::exp(shifted) / sum;
        }
      }
    expectClose(out, expected);
  }
}

// Float softmax and cross-entropy take SimdMath.h's vectorized exponential
// (2 ulp) over each row and sum in double: within a few float ulps of the
// double computation, along the innermost axis and across it (gathered),
// with the maximum still taken out first.
TEST(CpuKernelsTest, FloatSoftmaxAndCrossEntropyAreWithinUlpsOfDouble) {
  for (auto [shape, axis] :
       {std::pair(std::vector<int64_t>{6, 300}, int64_t(1)),
        std::pair(std::vector<int64_t>{3, 300, 5}, int64_t(1))}) {
    int64_t outer = shape[0], size = shape[1];
    int64_t inner = shape.size() == 3 ? shape[2] : 1;
    std::vector<float> in(outer * size * inner);
    std::vector<double> noise = makeValues(in.size(), 40);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<float>(8 * noise[i]);
    in[7] = 90; // exp(90) overflows float: the maximum must come out first.
    // Masked out (attention's causal mask): exactly 0, or -inf in log.
    in[in.size() - 1] = -std::numeric_limits<float>::infinity();
    for (bool logarithm : {false, true}) {
      std::vector<float> out(in.size()), expected(in.size());
      if (inner == 1)
        softmax(in.data(), {6, 300}, axis, logarithm, out.data());
      else
        softmax(in.data(), {3, 300, 5}, axis, logarithm, out.data());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t j) { return (o * size + j) * inner + i; };
          double maximum = -1e300, sum = 0;
          for (int64_t j = 0; j < size; ++j)
            maximum = std::max(maximum, double(in[at(j)]));
          for (int64_t j = 0; j < size; ++j)
            sum += std::exp(in[at(j)] - maximum);
          for (int64_t j = 0; j < size; ++j)
            expected[at(j)] = static_cast<float>(
                logarithm ? in[at(j)] - maximum - std::log(sum)
                          : std::exp(in[at(j)] - maximum) / sum);
        }
      EXPECT_EQ(out.back(), expected.back());
      for (size_t i = 0; i + 1 < out.size(); ++i)
        EXPECT_NEAR(out[i], expected[i], 4e-7 * std::fabs(expected[i]) + 1e-30)
            << "at element " << i << (logarithm ? " (log)" : "");
    }
  }
  std::vector<float> logits(4 * 300);
  std::vector<double> noise = makeValues(logits.size(), 41);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>(10 * noise[i]);
  std::vector<int64_t> labels = {3, 299, 0, 150};
  std::vector<float> losses(4);
  ASSERT_TRUE(classificationLoss(logits.data(), {4, 300}, labels.data(),
                                 LossReduction::None, -100, true,
                                 losses.data()));
  for (int64_t n = 0; n < 4; ++n) {
    double maximum = -1e300, sum = 0;
    for (int64_t c = 0; c < 300; ++c)
      maximum = std::max(maximum, double(logits[n * 300 + c]));
    for (int64_t c = 0; c < 300; ++c)
      sum += std::exp(logits[n * 300 + c] - maximum);
    double expected = maximum + std::log(sum) - logits[n * 300 + labels[n]];
    EXPECT_NEAR(losses[n], expected, 4e-7 * std::fabs(expected)) << n;
  }
}

TEST(CpuKernelsTest, LayerNormOverTrailingDimensions) {
  std::vector<double> in = makeValues(2 * 3 * 4, 26);
  std::vector<double> scale = makeValues(12, 27), bias = makeValues(12, 28);
  std::vector<double> out(24), expected(24);
  layerNorm(in.data(), {2, 3, 4}, scale.data(), bias.data(), 1, 1e-5,
            out.data());
  for (int64_t o = 0; o < 2; ++o) {
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < 12; ++i)
      mean += in[o * 12 + i] / 12;
    for (int64_t i = 0; i < 12; ++i)
      variance += (in[o * 12 + i] - mean) * (in[o * 12 + i] - mean) / 12;
    for (int64_t i = 0; i < 12; ++i)
      expected[o * 12 + i] =
          (in[o * 12 + i] - mean) / std::sqrt(variance + 1e-5) * scale[i] +
          bias[i];
  }
  expectClose(out, expected);

  std::vector<double> noBias(24);
  layerNorm(in.data(), {2, 3, 4}, scale.data(),
            static_cast<const double *>(nullptr), 1, 1e-5, noBias.data());
  for (int64_t i = 0; i < 24; ++i)
    EXPECT_NEAR(noBias[i], expected[i] - bias[i % 12], 1e-12);
}

TEST(CpuKernelsTest, BatchNormTrainingUpdatesRunningStatistics) {
  // [2, 2, 2]: channel 0 holds {1, 2, 5, 6}, channel 1 {3, 4, 7, 8}.
  std::vector<double> in = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> scale = {2, 1}, bias = {0, 1};
  std::vector<double> mean = {1, 0}, var = {1, 2};
  std::vector<double> out(8), newMean(2), newVar(2), batchMean(2), batchVar(2);
  ASSERT_TRUE(batchNorm(in.data(), {2, 2, 2}, scale.data(), bias.data(),
                        mean.data(), var.data(), 0.0, 0.9, true, out.data(),
                        newMean.data(), newVar.data(), batchMean.data(),
                        batchVar.data()));
  // Both channels: mean m + 3.5, biased variance 4.25, unbiased 17/3.
  double inv = 1 / std::sqrt(4.25);
  expectClose(out,
              {2 * (1 - 3.5) * inv, 2 * (2 - 3.5) * inv, (3 - 5.5) * inv + 1,
               (4 - 5.5) * inv + 1, 2 * (5 - 3.5) * inv, 2 * (6 - 3.5) * inv,
               (7 - 5.5) * inv + 1, (8 - 5.5) * inv + 1});
  expectClose(newMean, {0.9 * 1 + 0.1 * 3.5, 0.9 * 0 + 0.1 * 5.5});
  expectClose(newVar, {0.9 * 1 + 0.1 * 17 / 3.0, 0.9 * 2 + 0.1 * 17 / 3.0});
  expectClose(batchMean, {3.5, 5.5});
  expectClose(batchVar, {4.25, 4.25});

  // Inference normalizes with the running statistics and keeps them.
  ASSERT_TRUE(batchNorm(in.data(), {2, 2, 2}, scale.data(), bias.data(),
                        mean.data(), var.data(), 0.0, 0.9, false, out.data(),
                        newMean.data(), newVar.data(), batchMean.data(),
                        batchVar.data()));
  EXPECT_NEAR(out[0], 2 * (1 - 1) / 1.0, 1e-12);
  EXPECT_NEAR(out[2], (3 - 0) / std::sqrt(2.0) + 1, 1e-12);
  expectClose(newMean, mean);
  expectClose(newVar, var);
  expectClose(batchMean, mean);
  expectClose(batchVar, var);
}

TEST(CpuKernelsTest, BatchNormTrainingFailsOnASingleValue) {
  std::vector<float> in = {1, 2}, one = {1, 1}, zero = {0, 0};
  std::vector<float> out(2), newMean(2), newVar(2), batchMean(2), batchVar(2);
  EXPECT_FALSE(batchNorm(in.data(), {1, 2}, one.data(), zero.data(),
                         zero.data(), one.data(), 1e-5, 0.9, true, out.data(),
                         newMean.data(), newVar.data(), batchMean.data(),
                         batchVar.data()));
  EXPECT_EQ(getKernelError(), "training-mode batch_norm needs more than one "
                              "value per channel, got 1");
}

TEST(CpuKernelsTest, TopKByMagnitudeTiesByPositionNaNFirst) {
  std::vector<double> in = {1, -5, 3, kNaN, -3, 5};
  std::vector<double> values(4);
  std::vector<int64_t> indices(4);
  topK(in.data(), 6, 4, values.data(), indices.data());
  EXPECT_EQ(indices, (std::vector<int64_t>{3, 1, 5, 2}));
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], -5);
  EXPECT_EQ(values[2], 5);
  EXPECT_EQ(values[3], 3);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(CpuKernelsTest, BroadcastTransposeSlice) {
  std::vector<int64_t> column = {1, 2, 3}, out(24);
  broadcastTo(column.data(), {3, 1}, out.data(), {2, 3, 4});
  for (int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(out[i], i / 4 % 3 + 1) << "at element " << i;

  std::vector<double> in = makeValues(24, 29), transposed(24);
  transpose(in.data(), {2, 3, 4}, {2, 0, 1}, transposed.data());
  for (int64_t c = 0; c < 4; ++c)
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b)
        EXPECT_EQ(transposed[(c * 2 + a) * 3 + b], in[(a * 3 + b) * 4 + c]);

  // Large enough to take the tiled path, with partial tiles.
  std::vector<float> big = makeValues<float>(3 * 70 * 45, 30);
  std::vector<float> bigT(big.size());
  transpose(big.data(), {3, 70, 45}, {0, 2, 1}, bigT.data());
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 70; ++i)
      for (int64_t j = 0; j < 45; ++j)
        ASSERT_EQ(bigT[(b * 45 + j) * 70 + i], big[(b * 70 + i) * 45 + j]);

  // Rows 1.. by 2, columns 0.. by 3 of a 4x5 matrix: [[5, 8], [15, 18]].
  std::vector<int64_t> matrix(20), sliced(4);
  for (int64_t i = 0; i < 20; ++i)
    matrix[i] = i;
  slice(matrix.data(), {4, 5}, {1, 0}, {2, 3}, sliced.data(), {2, 2});
  EXPECT_EQ(sliced, (std::vector<int64_t>{5, 8, 15, 18}));
}

TEST(CpuKernelsTest, ConcatAndSplitAreInverse) {
  std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8, 9, 10};
  const double *inputs[] = {a.data(), b.data()};
  Dims shapes[] = {{2, 2}, {2, 3}};
  std::vector<double> out(10);
  concat(inputs, shapes, 2, 1, out.data());
  expectClose(out, {1, 2, 5, 6, 7, 3, 4, 8, 9, 10});

  std::vector<double> first(4), second(6);
  double *outs[] = {first.data(), second.data()};
  split(out.data(), {2, 5}, 1, {2, 3}, outs);
  expectClose(first, a);
  expectClose(second, b);
}

TEST(CpuKernelsTest, GatherWrapsNegativeIndicesAndRejectsOutOfRange) {
  // Rows of a [2, 3, 2] tensor along axis 1.
  std::vector<int64_t> in(12);
  for (int64_t i = 0; i < 12; ++i)
    in[i] = i;
  std::vector<int64_t> indices = {2, -3, -1}, out(12);
  ASSERT_TRUE(gather(in.data(), {2, 3, 2}, indices.data(), {3}, 1, out.data()));
  EXPECT_EQ(out,
            (std::vector<int64_t>{4, 5, 0, 1, 4, 5, 10, 11, 6, 7, 10, 11}));

  std::vector<int64_t> bad = {0, 3};
  EXPECT_FALSE(gather(in.data(), {2, 3, 2}, bad.data(), {2}, 1, out.data()));
  EXPECT_EQ(getKernelError(), "index 3 (element 1 of the indices) is out of "
                              "range for axis 1 of size 3");
  std::vector<int64_t> tooNegative = {-4};
  EXPECT_FALSE(
      gather(in.data(), {2, 3, 2}, tooNegative.data(), {1}, 1, out.data()));
}

TEST(CpuKernelsTest, ScatterAddSumsRepeatedIndices) {
  // The adjoint of the gather above, into zeros: index 2 and -1 collide.
  std::vector<float> updates(12);
  for (int i = 0; i < 12; ++i)
    updates[i] = float(i + 1);
  std::vector<int64_t> indices = {2, -3, -1};
  std::vector<float> out(12, 42.0f);
  ASSERT_TRUE(scatterAdd(updates.data(), {2, 3, 2}, indices.data(), {3}, 1,
                         out.data(), {2, 3, 2}));
  expectClose(out, {3, 4, 0, 0, 1 + 5, 2 + 6, 9, 10, 0, 0, 7 + 11, 8 + 12});

  std::vector<int64_t> bad = {5};
  EXPECT_FALSE(scatterAdd(updates.data(), {2, 1, 2}, bad.data(), {1}, 1,
                          out.data(), {2, 3, 2}));
}

TEST(CpuKernelsTest, GatherAndScatterElements) {
  // Along axis 0 of [3, 2]: out[i][j] = in[indices[i][j]][j].
  std::vector<double> in = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> indices = {2, 0, -3, -1};
  std::vector<double> out(4);
  ASSERT_TRUE(
      gatherElements(in.data(), {3, 2}, indices.data(), {2, 2}, 0, out.data()));
  expectClose(out, {5, 2, 1, 6});

  std::vector<double> updates = {10, 20, 30, 40}, scattered(6, -1.0);
  ASSERT_TRUE(scatterAddElements(updates.data(), indices.data(), {2, 2}, 0,
                                 scattered.data(), {3, 2}));
  expectClose(scattered, {30, 20, 0, 0, 10, 40});

  // Along axis 1 of [2, 3] with [2, 2] indices.
  std::vector<int64_t> ints = {1, 2, 3, 4, 5, 6}, rows = {2, 2, 0, 1};
  std::vector<int64_t> picked(4);
  ASSERT_TRUE(gatherElements(ints.data(), {2, 3}, rows.data(), {2, 2}, 1,
                             picked.data()));
  EXPECT_EQ(picked, (std::vector<int64_t>{3, 3, 4, 5}));

  std::vector<int64_t> bad = {0, 2, 3, 0};
  EXPECT_FALSE(
      gatherElements(in.data(), {3, 2}, bad.data(), {2, 2}, 0, out.data()));
  EXPECT_EQ(getKernelError(), "index 3 (element 2 of the indices) is out of "
                              "range for axis 0 of size 3");
}

TEST(CpuKernelsTest, PadWithLowHighAndInterior) {
  // [2, 2] -> low {1, 0}, interior {1, 1}, high {0, 2}: [4, 5].
  std::vector<int64_t> in = {1, 2, 3, 4}, out(20);
  pad(in.data(), {2, 2}, {1, 0}, {1, 1}, 9.0, out.data(), {4, 5});
  EXPECT_EQ(out, (std::vector<int64_t>{9, 9, 9, 9, 9, //
                                       1, 9, 2, 9, 9, //
                                       9, 9, 9, 9, 9, //
                                       3, 9, 4, 9, 9}));
  std::vector<double> scalar = {2.5}, padded(3);
  pad(scalar.data(), {1}, {1}, {0}, -0.5, padded.data(), {3});
  expectClose(padded, {-0.5, 2.5, -0.5});
}

//===----------------------------------------------------------------------===//
// Dropout and losses
//===----------------------------------------------------------------------===//

TEST(CpuKernelsTest, DropoutFollowsThePhiloxMask) {
  std::vector<float> in = makeValues<float>(1000, 31), out(1000);
  dropout(in.data(), 1000, /*seed=*/7, /*offset=*/500, 0.25, /*stream=*/3,
          out.data());
  int dropped = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    bool keep = dpc::dropoutKeeps(7, 3, 500 + i, 0.25);
    dropped += !keep;
    EXPECT_EQ(out[i], keep ? static_cast<float>(in[i] * (1 / 0.75)) : 0.0f)
        << "at element " << i;
  }
  EXPECT_GT(dropped, 150);
  EXPECT_LT(dropped, 350);
}

TEST(CpuKernelsTest, CrossEntropyIgnoresLabelsAndAveragesTheRest) {
  // Input [2, 3, 2] (N, C, d), labels [2, 2] with one ignored.
  std::vector<double> in = makeValues(12, 32);
  std::vector<int64_t> labels = {2, -100, 0, 1};
  auto logit = [&](int64_t n, int64_t c, int64_t d) {
    return in[(n * 3 + c) * 2 + d];
  };
  std::vector<double> expected(4, 0.0);
  double total = 0;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t d = 0; d < 2; ++d) {
      int64_t label = labels[n * 2 + d];
      if (label == -100)
        continue;
      double sum = 0;
      for (int64_t c = 0; c < 3; ++c)
        sum += std::exp(logit(n, c, d));
      expected[n * 2 + d] = std::log(sum) - logit(n, label, d);
      total += expected[n * 2 + d];
    }

  std::vector<double> none(4, 1.0);
  ASSERT_TRUE(classificationLoss(in.data(), {2, 3, 2}, labels.data(),
                                 LossReduction::None, -100, true, none.data()));
  expectClose(none, expected);
  double sum = 0, mean = 0;
  ASSERT_TRUE(classificationLoss(in.data(), {2, 3, 2}, labels.data(),
                                 LossReduction::Sum, -100, true, &sum));
  EXPECT_NEAR(sum, total, 1e-12);
  ASSERT_TRUE(classificationLoss(in.data(), {2, 3, 2}, labels.data(),
                                 LossReduction::Mean, -100, true, &mean));
  EXPECT_NEAR(mean, total / 3, 1e-12);
}

TEST(CpuKernelsTest, NllLossAndBadLabels) {
  std::vector<float> logProbs = {-0.5f, -1.0f, -2.0f, -0.25f};
  std::vector<int64_t> labels = {1, 0};
  float mean = 0;
  ASSERT_TRUE(classificationLoss(logProbs.data(), {2, 2}, labels.data(),
                                 LossReduction::Mean, -100, false, &mean));
  EXPECT_FLOAT_EQ(mean, (1.0f + 2.0f) / 2);

  std::vector<float> logits(20);
  std::vector<int64_t> bad = {3, 12};
  EXPECT_FALSE(classificationLoss(logits.data(), {2, 10}, bad.data(),
                                  LossReduction::Sum, -100, true, &mean));
  EXPECT_EQ(getKernelError(), "label 12 (element 1 of the labels) is neither "
                              "a class in [0, 10) nor the ignore_index -100");
}

} // namespace
