//===- OneDnnConvolution.cpp - fp32 convolutions through oneDNN -----------===//
//
// oneDNN's convolution primitives are much faster than im2col and GEMM on
// the small images of CNN training. A primitive is built once per shape
// and attributes (building one costs far more than running it) and kept
// for the thread. Plain NCHW/OIHW layouts are used, so no reorder is
// needed around the call. oneDNN reports failures by throwing: this file
// alone is built with exceptions, and any failure (an unsupported
// geometry, an output padding oneDNN's formula does not accept) returns
// false so that the caller falls back to its own loops.
//
//===----------------------------------------------------------------------===//

#include "OneDnnConvolution.h"
#include "KernelSupport.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <string>

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

memory::desc activation(Dims shape) {
  return memory::desc(toDims(shape), memory::data_type::f32,
                      memory::format_tag::nchw);
}

/// OIHW, or GOIHW with the groups split out.
memory::desc weights(Dims shape, int64_t groups) {
  memory::dims dims = toDims(shape);
  if (groups == 1)
    return memory::desc(dims, memory::data_type::f32, memory::format_tag::oihw);
  dims[0] /= groups;
  dims.insert(dims.begin(), groups);
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::goihw);
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
                                                     bool bias) {
  Geometry g = getGeometry(params);
  memory::desc biasDesc =
      bias ? memory::desc({at(wei, 0)}, memory::data_type::f32,
                          memory::format_tag::x)
           : memory::desc();
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      activation(src), weights(wei, params.groups), biasDesc, activation(dst),
      g.strides, g.dilates, g.padLeft, g.padRight);
  return dnnl::convolution_forward::primitive_desc(desc, getEngine());
}

/// A cached primitive; null when oneDNN cannot build it.
struct Cached {
  std::unique_ptr<dnnl::primitive> primitive;
};

thread_local std::map<std::string, Cached> cache;

template <typename Build>
dnnl::primitive *lookup(const std::string &key, Build build) {
  auto [it, inserted] = cache.try_emplace(key);
  if (inserted) {
    try {
      it->second.primitive = build();
    } catch (const dnnl::error &) {
      it->second.primitive.reset();
    }
  }
  return it->second.primitive.get();
}

memory wrap(const memory::desc &desc, const float *data) {
  return memory(desc, getEngine(), const_cast<float *>(data));
}

bool run(dnnl::primitive *primitive,
         const std::unordered_map<int, memory> &args) {
  if (!primitive)
    return false;
  try {
    dnnl::stream stream(getEngine());
    primitive->execute(stream, args);
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
  dnnl::primitive *primitive = lookup(key, [&] {
    return std::make_unique<dnnl::convolution_forward>(
        getForward(inputShape, filterShape, outShape, params, bias));
  });
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, wrap(activation(inputShape), input)},
      {DNNL_ARG_WEIGHTS, wrap(weights(filterShape, params.groups), filter)},
      {DNNL_ARG_DST, wrap(activation(outShape), out)}};
  if (bias)
    args[DNNL_ARG_BIAS] =
        wrap(memory::desc({at(filterShape, 0)}, memory::data_type::f32,
                          memory::format_tag::x),
             bias);
  return run(primitive, args);
}

bool detail::oneDnnConv2dBackwardData(const float *outGrad, Dims outGradShape,
                                      const float *filter, Dims filterShape,
                                      const Conv2DParams &params, float *inGrad,
                                      Dims inGradShape) {
  std::string key =
      getKey("bwd_data", outGradShape, filterShape, inGradShape, params, false);
  dnnl::primitive *primitive = lookup(key, [&] {
    Geometry g = getGeometry(params);
    dnnl::convolution_backward_data::desc desc(
        dnnl::algorithm::convolution_direct, activation(inGradShape),
        weights(filterShape, params.groups), activation(outGradShape),
        g.strides, g.dilates, g.padLeft, g.padRight);
    auto hint = getForward(inGradShape, filterShape, outGradShape, params,
                           /*bias=*/false);
    return std::make_unique<dnnl::convolution_backward_data>(
        dnnl::convolution_backward_data::primitive_desc(desc, getEngine(),
                                                        hint));
  });
  return run(
      primitive,
      {{DNNL_ARG_DIFF_DST, wrap(activation(outGradShape), outGrad)},
       {DNNL_ARG_WEIGHTS, wrap(weights(filterShape, params.groups), filter)},
       {DNNL_ARG_DIFF_SRC, wrap(activation(inGradShape), inGrad)}});
}

bool detail::oneDnnConv2dBackwardWeights(const float *input, Dims inputShape,
                                         const float *outGrad,
                                         Dims outGradShape,
                                         const Conv2DParams &params,
                                         float *filterGrad, Dims filterShape) {
  std::string key = getKey("bwd_weights", inputShape, outGradShape, filterShape,
                           params, false);
  dnnl::primitive *primitive = lookup(key, [&] {
    Geometry g = getGeometry(params);
    dnnl::convolution_backward_weights::desc desc(
        dnnl::algorithm::convolution_direct, activation(inputShape),
        weights(filterShape, params.groups), activation(outGradShape),
        g.strides, g.dilates, g.padLeft, g.padRight);
    auto hint = getForward(inputShape, filterShape, outGradShape, params,
                           /*bias=*/false);
    return std::make_unique<dnnl::convolution_backward_weights>(
        dnnl::convolution_backward_weights::primitive_desc(desc, getEngine(),
                                                           hint));
  });
  return run(primitive,
             {{DNNL_ARG_SRC, wrap(activation(inputShape), input)},
              {DNNL_ARG_DIFF_DST, wrap(activation(outGradShape), outGrad)},
              {DNNL_ARG_DIFF_WEIGHTS,
               wrap(weights(filterShape, params.groups), filterGrad)}});
}
