//===- RecurrentKernelsTest.cpp - LSTM and GRU kernels --------------------===//
//
// One LSTM step by hand; sequence lengths against running each entry alone
// on its own sequence; every gradient kernel against central differences
// of its forward kernel, in double, with lengths and in reverse.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

using namespace dpc::cpu;

namespace {

std::vector<double> makeValues(int64_t count, uint64_t seed) {
  std::vector<double> values(count);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (double &value : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    value = static_cast<double>(state >> 11) / static_cast<double>(1ull << 52) -
            1.0;
  }
  return values;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

/// A layer's operands: x [T, B, I], w, r, bias, h0 and (LSTM) c0.
struct Operands {
  RecurrentSizes sizes;
  int64_t gates;
  std::vector<double> x, w, r, bias, h0, c0;

  Operands(RecurrentSizes n, int64_t gates, uint64_t seed)
      : sizes(n), gates(gates),
        x(makeValues(n.steps * n.batch * n.inputSize, seed)),
        w(makeValues(gates * n.hidden * n.inputSize, seed + 1)),
        r(makeValues(gates * n.hidden * n.hidden, seed + 2)),
        bias(makeValues(2 * gates * n.hidden, seed + 3)),
        h0(makeValues(n.batch * n.hidden, seed + 4)),
        c0(makeValues(n.batch * n.hidden, seed + 5)) {}

  std::vector<std::vector<double> *> all() {
    return {&x, &w, &r, &bias, &h0, &c0};
  }
};

/// The results of a forward kernel: output, final h, final c.
struct Results {
  std::vector<double> output, h, c;
};

enum class Layer { Lstm, Gru, GruLinearBeforeReset };

Results runForward(Layer layer, Operands &o, const int64_t *lengths,
                   bool reverse) {
  const RecurrentSizes &n = o.sizes;
  Results out{std::vector<double>(n.steps * n.batch * n.hidden),
              std::vector<double>(n.batch * n.hidden),
              std::vector<double>(n.batch * n.hidden)};
  bool ok = layer == Layer::Lstm
                ? lstm(n, o.x.data(), o.w.data(), o.r.data(), o.bias.data(),
                       o.h0.data(), o.c0.data(), lengths, reverse,
                       out.output.data(), out.h.data(), out.c.data())
                : gru(n, o.x.data(), o.w.data(), o.r.data(), o.bias.data(),
                      o.h0.data(), lengths, reverse,
                      layer == Layer::GruLinearBeforeReset, out.output.data(),
                      out.h.data());
  EXPECT_TRUE(ok) << getKernelError();
  return out;
}

TEST(RecurrentKernelsTest, OneLstmStepByHand) {
  // One unit: gates i, o, f, c read x * w + h * r + both biases.
  std::vector<double> x = {0.5}, w = {1, 2, 3, 4}, r = {-1, 0.5, 0.25, 1};
  std::vector<double> bias = {0.1, 0, 0, 0, 0, 0.2, 0, 0.3}, h0 = {0.4},
                      c0 = {-0.6};
  std::vector<double> y(1), h(1), c(1);
  ASSERT_TRUE(lstm(RecurrentSizes{1, 1, 1, 1}, x.data(), w.data(), r.data(),
                   bias.data(), h0.data(), c0.data(),
                   static_cast<const int64_t *>(nullptr), false, y.data(),
                   h.data(), c.data()));
  double i = sigmoid(0.5 * 1 + 0.4 * -1 + 0.1),
         o = sigmoid(0.5 * 2 + 0.4 * 0.5 + 0.2),
         f = sigmoid(0.5 * 3 + 0.4 * 0.25),
         g = std::tanh(0.5 * 4 + 0.4 * 1 + 0.3);
  double cell = f * -0.6 + i * g;
  EXPECT_NEAR(c[0], cell, 1e-15);
  EXPECT_NEAR(h[0], o * std::tanh(cell), 1e-15);
  EXPECT_EQ(y[0], h[0]);
}

/// Entry b of `o` alone, on its first `length` steps.
Operands takeEntry(const Operands &o, int64_t b, int64_t length) {
  RecurrentSizes n = o.sizes;
  Operands one = o;
  one.sizes = {length, 1, n.inputSize, n.hidden};
  one.x.clear();
  for (int64_t t = 0; t < length; ++t)
    for (int64_t k = 0; k < n.inputSize; ++k)
      one.x.push_back(o.x[(t * n.batch + b) * n.inputSize + k]);
  one.h0.assign(o.h0.begin() + b * n.hidden, o.h0.begin() + (b + 1) * n.hidden);
  one.c0.assign(o.c0.begin() + b * n.hidden, o.c0.begin() + (b + 1) * n.hidden);
  return one;
}

TEST(RecurrentKernelsTest, EachEntryRunsItsOwnLength) {
  RecurrentSizes n{4, 3, 2, 3};
  const int64_t lengths[] = {4, 2, 0};
  for (Layer layer : {Layer::Lstm, Layer::Gru, Layer::GruLinearBeforeReset})
    for (bool reverse : {false, true}) {
      Operands o(n, layer == Layer::Lstm ? 4 : 3, 7);
      Results all = runForward(layer, o, lengths, reverse);
      for (int64_t b = 0; b < n.batch; ++b) {
        SCOPED_TRACE("entry " + std::to_string(b));
        for (int64_t j = 0; j < n.hidden; ++j) {
          // Past its length an entry's output is zero.
          for (int64_t t = lengths[b]; t < n.steps; ++t)
            EXPECT_EQ(all.output[(t * n.batch + b) * n.hidden + j], 0.0);
          if (lengths[b] == 0) {
            EXPECT_EQ(all.h[b * n.hidden + j], o.h0[b * n.hidden + j]);
          }
        }
        if (lengths[b] == 0)
          continue;
        Operands one = takeEntry(o, b, lengths[b]);
        Results alone = runForward(layer, one, nullptr, reverse);
        for (int64_t j = 0; j < n.hidden; ++j) {
          EXPECT_NEAR(all.h[b * n.hidden + j], alone.h[j], 1e-14);
          if (layer == Layer::Lstm) {
            EXPECT_NEAR(all.c[b * n.hidden + j], alone.c[j], 1e-14);
          }
          for (int64_t t = 0; t < lengths[b]; ++t)
            EXPECT_NEAR(all.output[(t * n.batch + b) * n.hidden + j],
                        alone.output[t * n.hidden + j], 1e-14);
        }
      }
    }
}

TEST(RecurrentKernelsTest, GradientsMatchFiniteDifferences) {
  RecurrentSizes n{3, 2, 2, 2};
  const int64_t lengths[] = {3, 2};
  for (Layer layer : {Layer::Lstm, Layer::Gru, Layer::GruLinearBeforeReset})
    for (bool reverse : {false, true}) {
      SCOPED_TRACE("layer " + std::to_string(int(layer)) +
                   (reverse ? ", reverse" : ""));
      bool isLstm = layer == Layer::Lstm;
      Operands o(n, isLstm ? 4 : 3, 11);
      // loss = <output, dy> + <final h, dh> (+ <final c, dc>).
      std::vector<double> dy = makeValues(n.steps * n.batch * n.hidden, 20),
                          dh = makeValues(n.batch * n.hidden, 21),
                          dc = makeValues(n.batch * n.hidden, 22);
      auto loss = [&]() {
        Results r = runForward(layer, o, lengths, reverse);
        double sum = 0;
        for (size_t i = 0; i < dy.size(); ++i)
          sum += r.output[i] * dy[i];
        for (size_t i = 0; i < dh.size(); ++i)
          sum += r.h[i] * dh[i] + (isLstm ? r.c[i] * dc[i] : 0.0);
        return sum;
      };
      std::vector<std::vector<double>> grads;
      for (std::vector<double> *operand : o.all())
        grads.emplace_back(operand->size());
      bool ok =
          isLstm ? lstmGrad(n, o.x.data(), o.w.data(), o.r.data(),
                            o.bias.data(), o.h0.data(), o.c0.data(), dy.data(),
                            dh.data(), dc.data(), lengths, reverse,
                            grads[0].data(), grads[1].data(), grads[2].data(),
                            grads[3].data(), grads[4].data(), grads[5].data())
                 : gruGrad(n, o.x.data(), o.w.data(), o.r.data(), o.bias.data(),
                           o.h0.data(), dy.data(), dh.data(), lengths, reverse,
                           layer == Layer::GruLinearBeforeReset,
                           grads[0].data(), grads[1].data(), grads[2].data(),
                           grads[3].data(), grads[4].data());
      ASSERT_TRUE(ok) << getKernelError();
      std::vector<std::vector<double> *> operands = o.all();
      for (size_t k = 0; k < (isLstm ? 6u : 5u); ++k)
        for (size_t i = 0; i < operands[k]->size(); ++i) {
          double saved = (*operands[k])[i], eps = 1e-6;
          (*operands[k])[i] = saved + eps;
          double up = loss();
          (*operands[k])[i] = saved - eps;
          double down = loss();
          (*operands[k])[i] = saved;
          EXPECT_NEAR(grads[k][i], (up - down) / (2 * eps), 1e-7)
              << "operand " << k << ", element " << i;
        }
    }
}

TEST(RecurrentKernelsTest, ALengthOutOfRangeFails) {
  Operands o({2, 1, 1, 1}, 3, 3);
  std::vector<double> y(2), h(1);
  const int32_t lengths[] = {3};
  EXPECT_FALSE(gru(o.sizes, o.x.data(), o.w.data(), o.r.data(), o.bias.data(),
                   o.h0.data(), lengths, false, true, y.data(), h.data()));
  EXPECT_EQ(getKernelError(),
            "sequence length 3 of batch entry 0 is outside [0, 2]");
}

} // namespace
