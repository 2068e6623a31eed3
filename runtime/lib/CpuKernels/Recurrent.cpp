//===- Recurrent.cpp - LSTM and GRU layers and their gradients ------------===//
//
// The input projections of every step are one GEMM, each step's recurrent
// product one GEMM over the batch, and the gates pointwise loops. With
// sequence lengths, step s of batch entry b is time len[b] - 1 - s
// (reverse) or s, and entries past their length sit the step out. The
// gradient kernels rerun the forward, recording each step's gates and
// states, then walk back; the weights' gradients are GEMMs over all steps.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "KernelSupport.h"

#include <cmath>
#include <vector>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// `times[s * B + b]`: the time index of step `s` of batch entry `b`, or
/// -1 once the entry's sequence has ended.
template <typename L>
bool schedule(const RecurrentSizes &n, const L *lengths, bool reverse,
              std::vector<int64_t> &times) {
  times.assign(n.steps * n.batch, -1);
  for (int64_t b = 0; b < n.batch; ++b) {
    int64_t length = lengths ? static_cast<int64_t>(lengths[b]) : n.steps;
    if (length < 0 || length > n.steps)
      return fail("sequence length " + std::to_string(length) +
                  " of batch entry " + std::to_string(b) + " is outside [0, " +
                  std::to_string(n.steps) + "]");
    for (int64_t s = 0; s < length; ++s)
      times[s * n.batch + b] = reverse ? length - 1 - s : s;
  }
  return true;
}

/// Row `b` of a [rows, width] matrix.
template <typename T> T *rowOf(T *matrix, int64_t b, int64_t width) {
  return matrix + b * width;
}

/// What the gradient kernels record of each step, [T, B, ...] by step.
template <typename T> struct LstmRecord {
  std::vector<T> gates, hPrev, cPrev, c;
};

template <typename T>
void runLstm(const RecurrentSizes &n, const T *x, const T *w, const T *r,
             const T *bias, const T *h0, const T *c0,
             const std::vector<int64_t> &times, T *output, T *finalH, T *finalC,
             LstmRecord<T> *record) {
  int64_t B = n.batch, H = n.hidden, G = 4 * H;
  std::vector<T> projected(n.steps * B * G), a(B * G);
  gemm<T>(false, true, n.steps * B, G, n.inputSize, T(1), x, n.inputSize, w,
          n.inputSize, T(0), projected.data(), G);
  std::vector<T> h(h0, h0 + B * H), c(c0, c0 + B * H);
  std::fill(output, output + n.steps * B * H, T(0));
  if (record) {
    record->gates.assign(n.steps * B * G, T(0));
    record->hPrev.assign(n.steps * B * H, T(0));
    record->cPrev.assign(n.steps * B * H, T(0));
    record->c.assign(n.steps * B * H, T(0));
  }
  for (int64_t s = 0; s < n.steps; ++s) {
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = times[s * B + b];
      for (int64_t k = 0; k < G; ++k)
        a[b * G + k] =
            t < 0 ? T(0)
                  : projected[(t * B + b) * G + k] + bias[k] + bias[G + k];
    }
    gemm<T>(false, true, B, G, H, T(1), h.data(), H, r, H, T(1), a.data(), G);
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = times[s * B + b];
      if (t < 0)
        continue;
      const T *ab = rowOf(a.data(), b, G);
      T *hb = rowOf(h.data(), b, H), *cb = rowOf(c.data(), b, H);
      int64_t at = (s * B + b);
      if (record) {
        std::copy(hb, hb + H, record->hPrev.begin() + at * H);
        std::copy(cb, cb + H, record->cPrev.begin() + at * H);
      }
      for (int64_t j = 0; j < H; ++j) {
        double i = sigmoid(ab[j]), o = sigmoid(ab[H + j]),
               f = sigmoid(ab[2 * H + j]), g = std::tanh(double(ab[3 * H + j]));
        double cj = f * cb[j] + i * g;
        cb[j] = T(cj);
        hb[j] = T(o * std::tanh(cj));
        output[(t * B + b) * H + j] = hb[j];
        if (record) {
          T *gates = record->gates.data() + at * G;
          gates[j] = T(i);
          gates[H + j] = T(o);
          gates[2 * H + j] = T(f);
          gates[3 * H + j] = T(g);
          record->c[at * H + j] = cb[j];
        }
      }
    }
  }
  std::copy(h.begin(), h.end(), finalH);
  std::copy(c.begin(), c.end(), finalC);
}

/// Column sums of a [rows, width] matrix added to `out`.
template <typename T>
void addColumnSums(const T *matrix, int64_t rows, int64_t width, T *out) {
  std::vector<double> sums(width, 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < width; ++k)
      sums[k] += matrix[i * width + k];
  for (int64_t k = 0; k < width; ++k)
    out[k] = T(out[k] + sums[k]);
}

template <typename T> struct GruRecord {
  /// z, r, n; the candidate's recurrent product; the state before the
  /// step; what R_n multiplied (h, or r * h).
  std::vector<T> gates, candidate, hPrev, resetH;
};

template <typename T>
void runGru(const RecurrentSizes &n, const T *x, const T *w, const T *r,
            const T *bias, const T *h0, bool linearBeforeReset,
            const std::vector<int64_t> &times, T *output, T *finalH,
            GruRecord<T> *record) {
  int64_t B = n.batch, H = n.hidden, G = 3 * H;
  const T *wb = bias, *rb = bias + G, *rCandidate = r + 2 * H * H;
  std::vector<T> projected(n.steps * B * G), ah(B * G), resetH(B * H);
  gemm<T>(false, true, n.steps * B, G, n.inputSize, T(1), x, n.inputSize, w,
          n.inputSize, T(0), projected.data(), G);
  std::vector<T> h(h0, h0 + B * H);
  std::fill(output, output + n.steps * B * H, T(0));
  if (record) {
    record->gates.assign(n.steps * B * G, T(0));
    record->candidate.assign(n.steps * B * H, T(0));
    record->hPrev.assign(n.steps * B * H, T(0));
    record->resetH.assign(n.steps * B * H, T(0));
  }
  std::vector<double> z(B * H), reset(B * H);
  for (int64_t s = 0; s < n.steps; ++s) {
    for (int64_t b = 0; b < B; ++b)
      std::copy(rb, rb + G, ah.begin() + b * G);
    gemm<T>(false, true, B, 2 * H, H, T(1), h.data(), H, r, H, T(1), ah.data(),
            G);
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = std::max<int64_t>(times[s * B + b], 0);
      const T *xb = projected.data() + (t * B + b) * G;
      for (int64_t j = 0; j < H; ++j) {
        z[b * H + j] = sigmoid(xb[j] + wb[j] + ah[b * G + j]);
        reset[b * H + j] = sigmoid(xb[H + j] + wb[H + j] + ah[b * G + H + j]);
        resetH[b * H + j] = linearBeforeReset
                                ? h[b * H + j]
                                : T(reset[b * H + j] * h[b * H + j]);
      }
    }
    gemm<T>(false, true, B, H, H, T(1), resetH.data(), H, rCandidate, H, T(1),
            ah.data() + 2 * H, G);
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = times[s * B + b];
      if (t < 0)
        continue;
      const T *xb = projected.data() + (t * B + b) * G;
      int64_t at = s * B + b;
      T *hb = rowOf(h.data(), b, H);
      if (record) {
        std::copy(hb, hb + H, record->hPrev.begin() + at * H);
        std::copy(resetH.begin() + b * H, resetH.begin() + (b + 1) * H,
                  record->resetH.begin() + at * H);
      }
      for (int64_t j = 0; j < H; ++j) {
        double zj = z[b * H + j], rj = reset[b * H + j];
        double candidate = ah[b * G + 2 * H + j];
        double nj = std::tanh(xb[2 * H + j] + wb[2 * H + j] +
                              (linearBeforeReset ? rj : 1.0) * candidate);
        hb[j] = T((1 - zj) * nj + zj * hb[j]);
        output[(t * B + b) * H + j] = hb[j];
        if (record) {
          T *gates = record->gates.data() + at * G;
          gates[j] = T(zj);
          gates[H + j] = T(rj);
          gates[2 * H + j] = T(nj);
          record->candidate[at * H + j] = T(candidate);
        }
      }
    }
  }
  std::copy(h.begin(), h.end(), finalH);
}

} // namespace

template <typename T, typename L>
bool dpc::cpu::lstm(const RecurrentSizes &n, const T *x, const T *w, const T *r,
                    const T *bias, const T *h0, const T *c0, const L *lengths,
                    bool reverse, T *output, T *finalH, T *finalC) {
  std::vector<int64_t> times;
  if (!schedule(n, lengths, reverse, times))
    return false;
  runLstm<T>(n, x, w, r, bias, h0, c0, times, output, finalH, finalC, nullptr);
  return true;
}

template <typename T, typename L>
bool dpc::cpu::lstmGrad(const RecurrentSizes &n, const T *x, const T *w,
                        const T *r, const T *bias, const T *h0, const T *c0,
                        const T *gradOutput, const T *gradH, const T *gradC,
                        const L *lengths, bool reverse, T *gradX, T *gradW,
                        T *gradR, T *gradBias, T *gradH0, T *gradC0) {
  std::vector<int64_t> times;
  if (!schedule(n, lengths, reverse, times))
    return false;
  int64_t B = n.batch, H = n.hidden, G = 4 * H, I = n.inputSize;
  std::vector<T> output(n.steps * B * H), lastH(B * H), lastC(B * H);
  LstmRecord<T> record;
  runLstm<T>(n, x, w, r, bias, h0, c0, times, output.data(), lastH.data(),
             lastC.data(), &record);

  std::vector<T> dh(gradH, gradH + B * H), dc(gradC, gradC + B * H);
  std::vector<T> daAll(n.steps * B * G, T(0)), da(B * G), dhPrev(B * H);
  std::fill(gradR, gradR + G * H, T(0));
  for (int64_t s = n.steps - 1; s >= 0; --s) {
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = times[s * B + b], at = s * B + b;
      T *dab = rowOf(da.data(), b, G);
      if (t < 0) {
        std::fill(dab, dab + G, T(0));
        continue;
      }
      const T *gates = record.gates.data() + at * G;
      for (int64_t j = 0; j < H; ++j) {
        double i = gates[j], o = gates[H + j], f = gates[2 * H + j],
               g = gates[3 * H + j];
        double tanhC = std::tanh(double(record.c[at * H + j]));
        double dhj = double(dh[b * H + j]) + gradOutput[(t * B + b) * H + j];
        double dcj = dc[b * H + j] + dhj * o * (1 - tanhC * tanhC);
        dab[j] = T(dcj * g * i * (1 - i));
        dab[H + j] = T(dhj * tanhC * o * (1 - o));
        dab[2 * H + j] = T(dcj * record.cPrev[at * H + j] * f * (1 - f));
        dab[3 * H + j] = T(dcj * i * (1 - g * g));
        dc[b * H + j] = T(dcj * f);
      }
      std::copy(dab, dab + G, daAll.begin() + (t * B + b) * G);
    }
    gemm<T>(true, false, G, H, B, T(1), da.data(), G,
            record.hPrev.data() + s * B * H, H, T(1), gradR, H);
    gemm<T>(false, false, B, H, G, T(1), da.data(), G, r, H, T(0),
            dhPrev.data(), H);
    for (int64_t b = 0; b < B; ++b)
      if (times[s * B + b] >= 0)
        std::copy(dhPrev.begin() + b * H, dhPrev.begin() + (b + 1) * H,
                  dh.begin() + b * H);
  }
  gemm<T>(false, false, n.steps * B, I, G, T(1), daAll.data(), G, w, I, T(0),
          gradX, I);
  gemm<T>(true, false, G, I, n.steps * B, T(1), daAll.data(), G, x, I, T(0),
          gradW, I);
  std::fill(gradBias, gradBias + 2 * G, T(0));
  addColumnSums(daAll.data(), n.steps * B, G, gradBias);
  std::copy(gradBias, gradBias + G, gradBias + G);
  std::copy(dh.begin(), dh.end(), gradH0);
  std::copy(dc.begin(), dc.end(), gradC0);
  return true;
}

template <typename T, typename L>
bool dpc::cpu::gru(const RecurrentSizes &n, const T *x, const T *w, const T *r,
                   const T *bias, const T *h0, const L *lengths, bool reverse,
                   bool linearBeforeReset, T *output, T *finalH) {
  std::vector<int64_t> times;
  if (!schedule(n, lengths, reverse, times))
    return false;
  runGru<T>(n, x, w, r, bias, h0, linearBeforeReset, times, output, finalH,
            nullptr);
  return true;
}

template <typename T, typename L>
bool dpc::cpu::gruGrad(const RecurrentSizes &n, const T *x, const T *w,
                       const T *r, const T *bias, const T *h0,
                       const T *gradOutput, const T *gradH, const L *lengths,
                       bool reverse, bool linearBeforeReset, T *gradX, T *gradW,
                       T *gradR, T *gradBias, T *gradH0) {
  std::vector<int64_t> times;
  if (!schedule(n, lengths, reverse, times))
    return false;
  int64_t B = n.batch, H = n.hidden, G = 3 * H, I = n.inputSize;
  const T *rCandidate = r + 2 * H * H;
  std::vector<T> output(n.steps * B * H), lastH(B * H);
  GruRecord<T> record;
  runGru<T>(n, x, w, r, bias, h0, linearBeforeReset, times, output.data(),
            lastH.data(), &record);

  std::vector<T> dh(gradH, gradH + B * H), dhPrev(B * H), drh(B * H);
  std::vector<T> daxAll(n.steps * B * G, T(0)), dax(B * G), dah(B * G);
  std::fill(gradR, gradR + G * H, T(0));
  std::fill(gradBias, gradBias + 2 * G, T(0));
  for (int64_t s = n.steps - 1; s >= 0; --s) {
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = times[s * B + b], at = s * B + b;
      T *daxb = rowOf(dax.data(), b, G), *dahb = rowOf(dah.data(), b, G);
      if (t < 0) {
        std::fill(daxb, daxb + G, T(0));
        std::fill(dahb, dahb + G, T(0));
        std::fill(dhPrev.begin() + b * H, dhPrev.begin() + (b + 1) * H, T(0));
        continue;
      }
      const T *gates = record.gates.data() + at * G;
      for (int64_t j = 0; j < H; ++j) {
        double z = gates[j], rj = gates[H + j], nj = gates[2 * H + j];
        double hp = record.hPrev[at * H + j];
        double dhj = double(dh[b * H + j]) + gradOutput[(t * B + b) * H + j];
        double dan = dhj * (1 - z) * (1 - nj * nj);
        daxb[j] = dahb[j] = T(dhj * (hp - nj) * z * (1 - z));
        daxb[2 * H + j] = T(dan);
        dhPrev[b * H + j] = T(dhj * z);
        if (linearBeforeReset) {
          dahb[2 * H + j] = T(dan * rj);
          daxb[H + j] = dahb[H + j] =
              T(dan * record.candidate[at * H + j] * rj * (1 - rj));
        } else {
          dahb[2 * H + j] = T(dan);
        }
      }
    }
    if (!linearBeforeReset) {
      // The candidate's product took r * h: the reset gate's gradient
      // comes through it.
      gemm<T>(false, false, B, H, H, T(1), dah.data() + 2 * H, G, rCandidate, H,
              T(0), drh.data(), H);
      for (int64_t b = 0; b < B; ++b) {
        if (times[s * B + b] < 0)
          continue;
        const T *gates = record.gates.data() + (s * B + b) * G;
        for (int64_t j = 0; j < H; ++j) {
          double rj = gates[H + j], d = drh[b * H + j];
          dax[b * G + H + j] = dah[b * G + H + j] =
              T(d * record.hPrev[(s * B + b) * H + j] * rj * (1 - rj));
          dhPrev[b * H + j] = T(dhPrev[b * H + j] + d * rj);
        }
      }
    }
    const T *hPrev = record.hPrev.data() + s * B * H;
    gemm<T>(true, false, 2 * H, H, B, T(1), dah.data(), G, hPrev, H, T(1),
            gradR, H);
    gemm<T>(true, false, H, H, B, T(1), dah.data() + 2 * H, G,
            record.resetH.data() + s * B * H, H, T(1), gradR + 2 * H * H, H);
    addColumnSums(dah.data(), B, G, gradBias + G);
    gemm<T>(false, false, B, H, 2 * H, T(1), dah.data(), G, r, H, T(1),
            dhPrev.data(), H);
    if (linearBeforeReset)
      gemm<T>(false, false, B, H, H, T(1), dah.data() + 2 * H, G, rCandidate, H,
              T(1), dhPrev.data(), H);
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = times[s * B + b];
      if (t < 0)
        continue;
      std::copy(dhPrev.begin() + b * H, dhPrev.begin() + (b + 1) * H,
                dh.begin() + b * H);
      std::copy(dax.begin() + b * G, dax.begin() + (b + 1) * G,
                daxAll.begin() + (t * B + b) * G);
    }
  }
  gemm<T>(false, false, n.steps * B, I, G, T(1), daxAll.data(), G, w, I, T(0),
          gradX, I);
  gemm<T>(true, false, G, I, n.steps * B, T(1), daxAll.data(), G, x, I, T(0),
          gradW, I);
  addColumnSums(daxAll.data(), n.steps * B, G, gradBias);
  std::copy(dh.begin(), dh.end(), gradH0);
  return true;
}

#define DPC_INSTANTIATE(T, L)                                                  \
  template bool dpc::cpu::lstm<T, L>(                                          \
      const RecurrentSizes &, const T *, const T *, const T *, const T *,      \
      const T *, const T *, const L *, bool, T *, T *, T *);                   \
  template bool dpc::cpu::lstmGrad<T, L>(                                      \
      const RecurrentSizes &, const T *, const T *, const T *, const T *,      \
      const T *, const T *, const T *, const T *, const T *, const L *, bool,  \
      T *, T *, T *, T *, T *, T *);                                           \
  template bool dpc::cpu::gru<T, L>(                                           \
      const RecurrentSizes &, const T *, const T *, const T *, const T *,      \
      const T *, const L *, bool, bool, T *, T *);                             \
  template bool dpc::cpu::gruGrad<T, L>(                                       \
      const RecurrentSizes &, const T *, const T *, const T *, const T *,      \
      const T *, const T *, const T *, const L *, bool, bool, T *, T *, T *,   \
      T *, T *);
DPC_INSTANTIATE(float, int32_t)
DPC_INSTANTIATE(float, int64_t)
DPC_INSTANTIATE(double, int32_t)
DPC_INSTANTIATE(double, int64_t)
#undef DPC_INSTANTIATE
