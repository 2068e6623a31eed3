//===- OneDnnConvolution.cpp - fp32 convolutions through oneDNN -----------===//
//
// oneDNN's convolution primitives are much faster than im2col and GEMM on
// the small images of CNN training, most of all in the blocked layouts
// oneDNN picks for itself (on plain NCHW it falls back to its own GEMM):
// operands are reordered into those layouts and the result back, which
// costs less than it saves (a 3x3 64-channel layer on 32x32 images: 12 ms
// plain, 6.6 ms blocked with the reorders). A primitive, its reorders and
// its blocked buffers are built once per shape and attributes (building
// costs far more than running) and kept for the thread. oneDNN reports
// failures by throwing: this file alone is built with exceptions, and any
// failure (an unsupported geometry, an output padding oneDNN's formula does
// not accept) returns false so that the caller falls back to its own loops.
//
//===----------------------------------------------------------------------===//

#include "OneDnnConvolution.h"
#include "KernelSupport.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace dpc::cpu;
using namespace dpc::cpu::detail;
using dnnl::memory;

namespace {

dnnl::engine &getEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::dims toDims(Dims dims) {
  return memory::dims(dims.begin(), dims.end());
}

memory::desc activation(Dims shape, bool any = false) {
  return memory::desc(toDims(shape), memory::data_type::f32,
                      any ? memory::format_tag::any : memory::format_tag::nchw);
}

/// OIHW, or GOIHW with the groups split out.
memory::desc weights(Dims shape, int64_t groups, bool any = false) {
  memory::dims dims = toDims(shape);
  if (groups != 1) {
    dims[0] /= groups;
    dims.insert(dims.begin(), groups);
  }
  return memory::desc(dims, memory::data_type::f32,
                      any           ? memory::format_tag::any
                      : groups == 1 ? memory::format_tag::oihw
                                    : memory::format_tag::goihw);
}

memory::desc vector(int64_t size) {
  return memory::desc({size}, memory::data_type::f32, memory::format_tag::x);
}

struct Geometry {
  memory::dims strides, dilates, padLeft, padRight;
};

Geometry getGeometry(const Conv2DParams &params) {
  // oneDNN counts dilation from 0 (no gap), ONNX from 1.
  return {{params.strides[0], params.strides[1]},
          {params.dilations[0] - 1, params.dilations[1] - 1},
          {params.padding[0], params.padding[1]},
          {params.padding[2], params.padding[3]}};
}

std::string getKey(const char *kind, Dims a, Dims b, Dims c,
                   const Conv2DParams &params, bool bias) {
  std::string key = kind;
  for (Dims dims : {a, b, c}) {
    key += '|';
    for (int64_t size : dims)
      key += std::to_string(size) + ",";
  }
  for (int64_t value : params.strides)
    key += std::to_string(value) + "s";
  for (int64_t value : params.padding)
    key += std::to_string(value) + "p";
  for (int64_t value : params.dilations)
    key += std::to_string(value) + "d";
  return key + std::to_string(params.groups) + (bias ? "b" : "");
}

dnnl::convolution_forward::primitive_desc getForward(Dims src, Dims wei,
                                                     Dims dst,
                                                     const Conv2DParams &params,
                                                     bool bias, bool any) {
  Geometry g = getGeometry(params);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      activation(src, any), weights(wei, params.groups, any),
      bias ? vector(at(wei, 0)) : memory::desc(), activation(dst, any),
      g.strides, g.dilates, g.padLeft, g.padRight);
  return dnnl::convolution_forward::primitive_desc(desc, getEngine());
}

/// An operand of a cached convolution: where the caller's plain tensor
/// goes, and, when the primitive wants another layout, a buffer in that
/// layout with the reorder between them.
struct Operand {
  int arg;
  memory::desc plain;
  bool output;
  std::optional<memory> blocked;
  std::optional<dnnl::reorder> reorder;
};

/// A primitive with its operands; `primitive` is null when oneDNN cannot
/// run the convolution.
struct Cached {
  std::unique_ptr<dnnl::primitive> primitive;
  std::vector<Operand> operands;
};

thread_local std::map<std::string, Cached> cache;

/// Describes operand `arg` of a primitive that wants it as `wanted`.
Operand makeOperand(int arg, const memory::desc &plain,
                    const memory::desc &wanted, bool output) {
  Operand operand{arg, plain, output, std::nullopt, std::nullopt};
  if (wanted == plain)
    return operand;
  operand.blocked.emplace(wanted, getEngine());
  memory plainMemory(plain, getEngine(), nullptr);
  operand.reorder.emplace(output
                              ? dnnl::reorder(*operand.blocked, plainMemory)
                              : dnnl::reorder(plainMemory, *operand.blocked));
  return operand;
}

template <typename Build> Cached *lookup(const std::string &key, Build build) {
  auto [it, inserted] = cache.try_emplace(key);
  if (inserted) {
    try {
      build(it->second);
    } catch (const dnnl::error &) {
      it->second = Cached();
    }
  }
  return it->second.primitive ? &it->second : nullptr;
}

/// Runs `cached` on the caller's plain tensors, one per operand in order.
bool run(Cached *cached, const std::vector<const float *> &data) {
  if (!cached)
    return false;
  try {
    dnnl::stream stream(getEngine());
    std::unordered_map<int, memory> args;
    std::vector<std::pair<dnnl::reorder *, std::unordered_map<int, memory>>>
        after;
    for (size_t i = 0; i < cached->operands.size(); ++i) {
      Operand &operand = cached->operands[i];
      memory plain(operand.plain, getEngine(), const_cast<float *>(data[i]));
      if (!operand.blocked) {
        args[operand.arg] = plain;
        continue;
      }
      args[operand.arg] = *operand.blocked;
      std::unordered_map<int, memory> reorderArgs = {
          {DNNL_ARG_FROM, operand.output ? *operand.blocked : plain},
          {DNNL_ARG_TO, operand.output ? plain : *operand.blocked}};
      if (operand.output)
        after.push_back({&*operand.reorder, reorderArgs});
      else
        operand.reorder->execute(stream, reorderArgs);
    }
    cached->primitive->execute(stream, args);
    for (auto &[reorder, reorderArgs] : after)
      reorder->execute(stream, reorderArgs);
    stream.wait();
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

} // namespace

bool detail::oneDnnConv2d(const float *input, Dims inputShape,
                          const float *filter, Dims filterShape,
                          const float *bias, const Conv2DParams &params,
                          float *out, Dims outShape) {
  std::string key =
      getKey("fwd", inputShape, filterShape, outShape, params, bias);
  Cached *cached = lookup(key, [&](Cached &entry) {
    auto pd = getForward(inputShape, filterShape, outShape, params, bias,
                         /*any=*/true);
    entry.primitive = std::make_unique<dnnl::convolution_forward>(pd);
    entry.operands = {
        makeOperand(DNNL_ARG_SRC, activation(inputShape), pd.src_desc(), false),
        makeOperand(DNNL_ARG_WEIGHTS, weights(filterShape, params.groups),
                    pd.weights_desc(), false),
        makeOperand(DNNL_ARG_DST, activation(outShape), pd.dst_desc(), true)};
    if (bias)
      entry.operands.push_back(makeOperand(
          DNNL_ARG_BIAS, vector(at(filterShape, 0)), pd.bias_desc(), false));
  });
  std::vector<const float *> data = {input, filter, out};
  if (bias)
    data.push_back(bias);
  return run(cached, data);
}

bool detail::oneDnnConv2dBackwardData(const float *outGrad, Dims outGradShape,
                                      const float *filter, Dims filterShape,
                                      const Conv2DParams &params, float *inGrad,
                                      Dims inGradShape) {
  std::string key =
      getKey("bwd_data", outGradShape, filterShape, inGradShape, params, false);
  Cached *cached = lookup(key, [&](Cached &entry) {
    Geometry g = getGeometry(params);
    dnnl::convolution_backward_data::desc desc(
        dnnl::algorithm::convolution_direct, activation(inGradShape, true),
        weights(filterShape, params.groups, true),
        activation(outGradShape, true), g.strides, g.dilates, g.padLeft,
        g.padRight);
    auto hint = getForward(inGradShape, filterShape, outGradShape, params,
                           /*bias=*/false, /*any=*/true);
    dnnl::convolution_backward_data::primitive_desc pd(desc, getEngine(), hint);
    entry.primitive = std::make_unique<dnnl::convolution_backward_data>(pd);
    entry.operands = {makeOperand(DNNL_ARG_DIFF_DST, activation(outGradShape),
                                  pd.diff_dst_desc(), false),
                      makeOperand(DNNL_ARG_WEIGHTS,
                                  weights(filterShape, params.groups),
                                  pd.weights_desc(), false),
                      makeOperand(DNNL_ARG_DIFF_SRC, activation(inGradShape),
                                  pd.diff_src_desc(), true)};
  });
  return run(cached, {outGrad, filter, inGrad});
}

bool detail::oneDnnConv2dBackwardWeights(const float *input, Dims inputShape,
                                         const float *outGrad,
                                         Dims outGradShape,
                                         const Conv2DParams &params,
                                         float *filterGrad, Dims filterShape) {
  std::string key = getKey("bwd_weights", inputShape, outGradShape, filterShape,
                           params, false);
  Cached *cached = lookup(key, [&](Cached &entry) {
    Geometry g = getGeometry(params);
    dnnl::convolution_backward_weights::desc desc(
        dnnl::algorithm::convolution_direct, activation(inputShape, true),
        weights(filterShape, params.groups, true),
        activation(outGradShape, true), g.strides, g.dilates, g.padLeft,
        g.padRight);
    auto hint = getForward(inputShape, filterShape, outGradShape, params,
                           /*bias=*/false, /*any=*/true);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, getEngine(),
                                                          hint);
    entry.primitive = std::make_unique<dnnl::convolution_backward_weights>(pd);
    entry.operands = {
        makeOperand(DNNL_ARG_SRC, activation(inputShape), pd.src_desc(), false),
        makeOperand(DNNL_ARG_DIFF_DST, activation(outGradShape),
                    pd.diff_dst_desc(), false),
        makeOperand(DNNL_ARG_DIFF_WEIGHTS, weights(filterShape, params.groups),
                    pd.diff_weights_desc(), true)};
  });
  return run(cached, {input, outGrad, filterGrad});
}
