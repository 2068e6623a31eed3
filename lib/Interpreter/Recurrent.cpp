//===- Recurrent.cpp - LSTM and GRU layers and their gradients ------------===//
//
// One batch entry at a time, one step at a time, in double. The gradient
// kernels rerun the forward steps, keeping each step's gates and states,
// then walk back through time.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dpc;
using namespace mlir::dpc::interpreter;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// A tensor's elements as doubles.
std::vector<double> toDoubles(const Tensor &tensor) {
  return dispatchFloatKind(tensor.getKind(), [&](auto zero) {
    using T = decltype(zero);
    ArrayRef<T> data = tensor.getData<T>();
    return std::vector<double>(data.begin(), data.end());
  });
}

/// A tensor of `kind` and `shape` holding `values`, rounded once.
Tensor fromDoubles(ElementKind kind, ArrayRef<int64_t> shape,
                   ArrayRef<double> values) {
  Tensor tensor(kind, shape);
  dispatchFloatKind(kind, [&](auto zero) {
    using T = decltype(zero);
    MutableArrayRef<T> data = tensor.getData<T>();
    for (auto [i, value] : llvm::enumerate(values))
      data[i] = static_cast<T>(value);
  });
  return tensor;
}

/// `out[r] += sum_c matrix[r][c] * vector[c]` for a `rows` x `cols` matrix.
void addProduct(const double *matrix, const double *vector, int64_t rows,
                int64_t cols, double *out) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += matrix[r * cols + c] * vector[c];
    out[r] += sum;
  }
}

/// `out[c] += sum_r matrix[r][c] * vector[r]` (the transposed product).
void addTransposedProduct(const double *matrix, const double *vector,
                          int64_t rows, int64_t cols, double *out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[c] += matrix[r * cols + c] * vector[r];
}

/// `out[r][c] += a[r] * b[c]`.
void addOuter(const double *a, const double *b, int64_t rows, int64_t cols,
              double *out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] += a[r] * b[c];
}

/// The operands every layer shares, as doubles, and its sizes.
struct Layer {
  int64_t steps, batch, inputSize, hidden, gates;
  std::vector<double> x, w, r, bias;
  std::vector<int64_t> lengths;
  bool reverse;

  const double *input(int64_t t, int64_t b) const {
    return x.data() + (t * batch + b) * inputSize;
  }
  /// The time index of step `s` of batch entry `b`.
  int64_t timeOf(int64_t s, int64_t b) const {
    return reverse ? lengths[b] - 1 - s : s;
  }
};

FailureOr<Layer> readLayer(Operation *op, int64_t gates, const Tensor &x,
                           const Tensor &w, const Tensor &r, const Tensor &bias,
                           const Tensor *lengths, bool reverse) {
  Layer layer;
  layer.steps = x.getShape()[0];
  layer.batch = x.getShape()[1];
  layer.inputSize = x.getShape()[2];
  layer.hidden = r.getShape()[1];
  layer.gates = gates;
  layer.x = toDoubles(x);
  layer.w = toDoubles(w);
  layer.r = toDoubles(r);
  layer.bias = toDoubles(bias);
  layer.reverse = reverse;
  layer.lengths.assign(layer.batch, layer.steps);
  if (lengths) {
    ArrayRef<int64_t> given = lengths->getData<int64_t>();
    for (auto [b, length] : llvm::enumerate(given)) {
      if (length < 0 || length > layer.steps)
        return op->emitError("sequence length ")
               << length << " of batch entry " << b << " is outside [0, "
               << layer.steps << "]";
      layer.lengths[b] = length;
    }
  }
  return layer;
}

//===----------------------------------------------------------------------===//
// LSTM
//===----------------------------------------------------------------------===//

/// One LSTM step's activations: gates i, o, f, g and the states around it.
struct LstmStep {
  std::vector<double> gates, hPrev, cPrev, c;
};

/// Runs batch entry `b` forward; records each step when `steps` is given.
void runLstm(const Layer &layer, int64_t b, std::vector<double> &h,
             std::vector<double> &c, double *output,
             std::vector<LstmStep> *steps) {
  int64_t H = layer.hidden, I = layer.inputSize;
  std::vector<double> a(4 * H);
  for (int64_t s = 0; s < layer.lengths[b]; ++s) {
    int64_t t = layer.timeOf(s, b);
    for (int64_t k = 0; k < 4 * H; ++k)
      a[k] = layer.bias[k] + layer.bias[4 * H + k];
    addProduct(layer.w.data(), layer.input(t, b), 4 * H, I, a.data());
    addProduct(layer.r.data(), h.data(), 4 * H, H, a.data());
    LstmStep step{std::vector<double>(4 * H), h, c, {}};
    for (int64_t j = 0; j < H; ++j) {
      double i = sigmoid(a[j]), o = sigmoid(a[H + j]),
             f = sigmoid(a[2 * H + j]), g = std::tanh(a[3 * H + j]);
      step.gates[j] = i;
      step.gates[H + j] = o;
      step.gates[2 * H + j] = f;
      step.gates[3 * H + j] = g;
      c[j] = f * c[j] + i * g;
      h[j] = o * std::tanh(c[j]);
      output[(t * layer.batch + b) * H + j] = h[j];
    }
    if (steps) {
      step.c = c;
      steps->push_back(std::move(step));
    }
  }
}

//===----------------------------------------------------------------------===//
// GRU
//===----------------------------------------------------------------------===//

/// One GRU step: gates z, r, n, the recurrent product of the candidate
/// (`hiddenCandidate`: R_h h + Rb_h, or of r * h without
/// linear_before_reset) and the state before it.
struct GruStep {
  std::vector<double> gates, hiddenCandidate, hPrev;
};

void runGru(const Layer &layer, bool linearBeforeReset, int64_t b,
            std::vector<double> &h, double *output,
            std::vector<GruStep> *steps) {
  int64_t H = layer.hidden, I = layer.inputSize;
  const double *wb = layer.bias.data(), *rb = layer.bias.data() + 3 * H;
  std::vector<double> ax(3 * H), ah(3 * H), rh(H);
  for (int64_t s = 0; s < layer.lengths[b]; ++s) {
    int64_t t = layer.timeOf(s, b);
    std::copy(wb, wb + 3 * H, ax.begin());
    std::copy(rb, rb + 3 * H, ah.begin());
    addProduct(layer.w.data(), layer.input(t, b), 3 * H, I, ax.data());
    // z and r always see R h; the candidate row block depends on the form.
    addProduct(layer.r.data(), h.data(), 2 * H, H, ah.data());
    GruStep step{std::vector<double>(3 * H), std::vector<double>(H), h};
    for (int64_t j = 0; j < H; ++j) {
      step.gates[j] = sigmoid(ax[j] + ah[j]);
      step.gates[H + j] = sigmoid(ax[H + j] + ah[H + j]);
      rh[j] = linearBeforeReset ? h[j] : step.gates[H + j] * h[j];
    }
    addProduct(layer.r.data() + 2 * H * H, rh.data(), H, H, ah.data() + 2 * H);
    for (int64_t j = 0; j < H; ++j) {
      double z = step.gates[j], r = step.gates[H + j];
      step.hiddenCandidate[j] = ah[2 * H + j];
      double n = std::tanh(ax[2 * H + j] +
                           (linearBeforeReset ? r : 1.0) * ah[2 * H + j]);
      step.gates[2 * H + j] = n;
      h[j] = (1 - z) * n + z * h[j];
      output[(t * layer.batch + b) * H + j] = h[j];
    }
    if (steps)
      steps->push_back(std::move(step));
  }
}

/// Row `b` of a [B, H] state.
std::vector<double> row(ArrayRef<double> states, int64_t b, int64_t H) {
  return std::vector<double>(states.begin() + b * H,
                             states.begin() + (b + 1) * H);
}

} // namespace

FailureOr<SmallVector<Tensor>>
interpreter::lstm(Operation *op, const Tensor &x, const Tensor &w,
                  const Tensor &r, const Tensor &bias, const Tensor &h0,
                  const Tensor &c0, const Tensor *lengths, bool reverse) {
  FailureOr<Layer> layer = readLayer(op, 4, x, w, r, bias, lengths, reverse);
  if (failed(layer))
    return failure();
  int64_t B = layer->batch, H = layer->hidden;
  std::vector<double> output(layer->steps * B * H), finalH(B * H),
      finalC(B * H);
  std::vector<double> initialH = toDoubles(h0), initialC = toDoubles(c0);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h = row(initialH, b, H), c = row(initialC, b, H);
    runLstm(*layer, b, h, c, output.data(), nullptr);
    std::copy(h.begin(), h.end(), finalH.begin() + b * H);
    std::copy(c.begin(), c.end(), finalC.begin() + b * H);
  }
  ElementKind kind = x.getKind();
  return SmallVector<Tensor>{fromDoubles(kind, {layer->steps, B, H}, output),
                             fromDoubles(kind, {B, H}, finalH),
                             fromDoubles(kind, {B, H}, finalC)};
}

FailureOr<SmallVector<Tensor>>
interpreter::lstmGrad(Operation *op, const Tensor &x, const Tensor &w,
                      const Tensor &r, const Tensor &bias, const Tensor &h0,
                      const Tensor &c0, const Tensor &gradOutput,
                      const Tensor &gradH, const Tensor &gradC,
                      const Tensor *lengths, bool reverse) {
  FailureOr<Layer> layer = readLayer(op, 4, x, w, r, bias, lengths, reverse);
  if (failed(layer))
    return failure();
  int64_t B = layer->batch, H = layer->hidden, I = layer->inputSize;
  std::vector<double> initialH = toDoubles(h0), initialC = toDoubles(c0);
  std::vector<double> dy = toDoubles(gradOutput), dhFinal = toDoubles(gradH),
                      dcFinal = toDoubles(gradC);
  std::vector<double> dx(layer->x.size()), dw(layer->w.size()),
      dr(layer->r.size()), dbias(layer->bias.size()), dh0(B * H), dc0(B * H);
  std::vector<double> output(layer->steps * B * H), da(4 * H);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h = row(initialH, b, H), c = row(initialC, b, H);
    std::vector<LstmStep> steps;
    runLstm(*layer, b, h, c, output.data(), &steps);
    std::vector<double> dh = row(dhFinal, b, H), dc = row(dcFinal, b, H);
    for (int64_t s = layer->lengths[b] - 1; s >= 0; --s) {
      int64_t t = layer->timeOf(s, b);
      const LstmStep &step = steps[s];
      for (int64_t j = 0; j < H; ++j) {
        double i = step.gates[j], o = step.gates[H + j],
               f = step.gates[2 * H + j], g = step.gates[3 * H + j];
        double tanhC = std::tanh(step.c[j]);
        double dhj = dh[j] + dy[(t * B + b) * H + j];
        double dcj = dc[j] + dhj * o * (1 - tanhC * tanhC);
        da[j] = dcj * g * i * (1 - i);
        da[H + j] = dhj * tanhC * o * (1 - o);
        da[2 * H + j] = dcj * step.cPrev[j] * f * (1 - f);
        da[3 * H + j] = dcj * i * (1 - g * g);
        dc[j] = dcj * f;
      }
      addOuter(da.data(), layer->input(t, b), 4 * H, I, dw.data());
      addOuter(da.data(), step.hPrev.data(), 4 * H, H, dr.data());
      for (int64_t k = 0; k < 4 * H; ++k) {
        dbias[k] += da[k];
        dbias[4 * H + k] += da[k];
      }
      addTransposedProduct(layer->w.data(), da.data(), 4 * H, I,
                           dx.data() + (t * B + b) * I);
      std::fill(dh.begin(), dh.end(), 0.0);
      addTransposedProduct(layer->r.data(), da.data(), 4 * H, H, dh.data());
    }
    std::copy(dh.begin(), dh.end(), dh0.begin() + b * H);
    std::copy(dc.begin(), dc.end(), dc0.begin() + b * H);
  }
  ElementKind kind = x.getKind();
  return SmallVector<Tensor>{fromDoubles(kind, x.getShape(), dx),
                             fromDoubles(kind, w.getShape(), dw),
                             fromDoubles(kind, r.getShape(), dr),
                             fromDoubles(kind, bias.getShape(), dbias),
                             fromDoubles(kind, {B, H}, dh0),
                             fromDoubles(kind, {B, H}, dc0)};
}

FailureOr<SmallVector<Tensor>>
interpreter::gru(Operation *op, const Tensor &x, const Tensor &w,
                 const Tensor &r, const Tensor &bias, const Tensor &h0,
                 const Tensor *lengths, bool reverse, bool linearBeforeReset) {
  FailureOr<Layer> layer = readLayer(op, 3, x, w, r, bias, lengths, reverse);
  if (failed(layer))
    return failure();
  int64_t B = layer->batch, H = layer->hidden;
  std::vector<double> output(layer->steps * B * H), finalH(B * H);
  std::vector<double> initialH = toDoubles(h0);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h = row(initialH, b, H);
    runGru(*layer, linearBeforeReset, b, h, output.data(), nullptr);
    std::copy(h.begin(), h.end(), finalH.begin() + b * H);
  }
  ElementKind kind = x.getKind();
  return SmallVector<Tensor>{fromDoubles(kind, {layer->steps, B, H}, output),
                             fromDoubles(kind, {B, H}, finalH)};
}

FailureOr<SmallVector<Tensor>>
interpreter::gruGrad(Operation *op, const Tensor &x, const Tensor &w,
                     const Tensor &r, const Tensor &bias, const Tensor &h0,
                     const Tensor &gradOutput, const Tensor &gradH,
                     const Tensor *lengths, bool reverse,
                     bool linearBeforeReset) {
  FailureOr<Layer> layer = readLayer(op, 3, x, w, r, bias, lengths, reverse);
  if (failed(layer))
    return failure();
  int64_t B = layer->batch, H = layer->hidden, I = layer->inputSize;
  std::vector<double> initialH = toDoubles(h0);
  std::vector<double> dy = toDoubles(gradOutput), dhFinal = toDoubles(gradH);
  std::vector<double> dx(layer->x.size()), dw(layer->w.size()),
      dr(layer->r.size()), dbias(layer->bias.size()), dh0(B * H);
  std::vector<double> output(layer->steps * B * H), dax(3 * H), dah(3 * H),
      rh(H), drh(H);
  const double *rCandidate = layer->r.data() + 2 * H * H;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h = row(initialH, b, H);
    std::vector<GruStep> steps;
    runGru(*layer, linearBeforeReset, b, h, output.data(), &steps);
    std::vector<double> dh = row(dhFinal, b, H), dhPrev(H);
    for (int64_t s = layer->lengths[b] - 1; s >= 0; --s) {
      int64_t t = layer->timeOf(s, b);
      const GruStep &step = steps[s];
      for (int64_t j = 0; j < H; ++j) {
        double z = step.gates[j], rj = step.gates[H + j],
               n = step.gates[2 * H + j], hp = step.hPrev[j];
        double dhj = dh[j] + dy[(t * B + b) * H + j];
        double dan = dhj * (1 - z) * (1 - n * n);
        dax[j] = dah[j] = dhj * (hp - n) * z * (1 - z);
        dax[2 * H + j] = dan;
        dhPrev[j] = dhj * z;
        if (linearBeforeReset) {
          // n = tanh(ax_n + r * ah_n): ah_n = R_n h + Rb_n.
          dah[2 * H + j] = dan * rj;
          dax[H + j] = dah[H + j] =
              dan * step.hiddenCandidate[j] * rj * (1 - rj);
          rh[j] = hp;
        } else {
          dah[2 * H + j] = dan;
          rh[j] = rj * hp;
        }
      }
      if (!linearBeforeReset) {
        // ah_n = R_n (r * h) + Rb_n: the reset gate's gradient goes
        // through the product.
        std::fill(drh.begin(), drh.end(), 0.0);
        addTransposedProduct(rCandidate, dah.data() + 2 * H, H, H, drh.data());
        for (int64_t j = 0; j < H; ++j) {
          double rj = step.gates[H + j];
          dax[H + j] = dah[H + j] = drh[j] * step.hPrev[j] * rj * (1 - rj);
          dhPrev[j] += drh[j] * rj;
        }
      }
      addOuter(dax.data(), layer->input(t, b), 3 * H, I, dw.data());
      addOuter(dah.data(), step.hPrev.data(), 2 * H, H, dr.data());
      addOuter(dah.data() + 2 * H, rh.data(), H, H, dr.data() + 2 * H * H);
      for (int64_t k = 0; k < 3 * H; ++k) {
        dbias[k] += dax[k];
        dbias[3 * H + k] += dah[k];
      }
      addTransposedProduct(layer->w.data(), dax.data(), 3 * H, I,
                           dx.data() + (t * B + b) * I);
      addTransposedProduct(layer->r.data(), dah.data(), 2 * H, H,
                           dhPrev.data());
      if (linearBeforeReset)
        addTransposedProduct(rCandidate, dah.data() + 2 * H, H, H,
                             dhPrev.data());
      dh = dhPrev;
    }
    std::copy(dh.begin(), dh.end(), dh0.begin() + b * H);
  }
  ElementKind kind = x.getKind();
  return SmallVector<Tensor>{fromDoubles(kind, x.getShape(), dx),
                             fromDoubles(kind, w.getShape(), dw),
                             fromDoubles(kind, r.getShape(), dr),
                             fromDoubles(kind, bias.getShape(), dbias),
                             fromDoubles(kind, {B, H}, dh0)};
}
