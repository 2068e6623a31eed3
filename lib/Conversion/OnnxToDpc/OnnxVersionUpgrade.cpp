//===- OnnxVersionUpgrade.cpp - Old opsets through ONNX's converter -------===//
//
// Models older than the opsets dpc's converters know (PyTorch's exports
// at opset 6, the first model zoo) are brought up to date by ONNX's own
// version converter, which knows how each op changed. It throws on what
// it cannot convert, so this file is built with exceptions, and it trusts
// the graph, so it runs in a child process.
//
//===----------------------------------------------------------------------===//

#include "OnnxChildProcess.h"
#include "OnnxModelLoader.h"

#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <map>
#include <optional>
#include <vector>

using namespace mlir::dpc::onnx_import;

/// Value names to their shapes, inferred, in `graph`: -1 for a dimension
/// without a value; values of unknown shape are left out.
using Shapes = std::map<std::string, std::vector<int64_t>>;
static Shapes getInferredShapes(const onnx::GraphProto &graph) {
  Shapes shapes;
  for (const auto *values : {&graph.input(), &graph.value_info()})
    for (const onnx::ValueInfoProto &value : *values) {
      if (!value.type().tensor_type().has_shape())
        continue;
      std::vector<int64_t> &shape = shapes[value.name()];
      for (const auto &dim : value.type().tensor_type().shape().dim())
        shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
  for (const onnx::TensorProto &init : graph.initializer())
    shapes[init.name()] = {init.dims().begin(), init.dims().end()};
  return shapes;
}

/// The axes to unsqueeze `node`'s second input by so that it broadcasts
/// from the right as opset 7 does, the way it broadcast before:
///  - `broadcast` with an `axis`: B lines up with A from that axis (ONNX
///    1.12's converter appends rank(A) - rank(B) ones, which is right
///    only when the axis is 0);
///  - PRelu: a slope of shape [C] runs along X's channels (axis 1), which
///    the converter passes through as it is.
/// Empty when nothing needs to change or the shapes are not known.
static std::vector<int64_t>
getLegacyBroadcastAxes(const Shapes &shapes, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return {};
  std::optional<int64_t> alignedAt;
  bool broadcast = false;
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.name() == "broadcast")
      broadcast = attr.i() != 0;
    if (attr.name() == "axis")
      alignedAt = attr.i();
  }
  auto getShape = [&](const std::string &name) {
    auto it = shapes.find(name);
    return it == shapes.end() ? std::vector<int64_t>() : it->second;
  };
  std::vector<int64_t> a = getShape(node.input(0));
  std::vector<int64_t> b = getShape(node.input(1));
  if (node.op_type() == "PRelu" && b.size() == 1 && b[0] > 1 && a.size() > 2 &&
      a[1] == b[0])
    alignedAt = 1;
  else if (!broadcast || !alignedAt)
    return {};
  int64_t rankA = a.size(), rankB = b.size();
  if (rankA == 0 || rankB == 0 || *alignedAt < 0 || *alignedAt + rankB >= rankA)
    return {};
  std::vector<int64_t> axes;
  for (int64_t axis = rankB; axis < rankA - *alignedAt; ++axis)
    axes.push_back(axis);
  return axes;
}

/// Unsqueezes the second input of each node that broadcast the opset-6
/// way (see getLegacyBroadcastAxes), so that the converter's opset-7 model
/// computes what the old one did. `typed` carries inferred shapes.
static void spellOutLegacyBroadcasts(onnx::ModelProto &typed) {
  const onnx::GraphProto &graph = typed.graph();
  Shapes shapes = getInferredShapes(graph);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const onnx::NodeProto &node : graph.node()) {
    std::vector<int64_t> axes = getLegacyBroadcastAxes(shapes, node);
    if (axes.empty()) {
      *nodes.Add() = node;
      continue;
    }
    onnx::NodeProto *unsqueeze = nodes.Add();
    unsqueeze->set_op_type("Unsqueeze");
    unsqueeze->set_name(node.name() + "_legacy_broadcast");
    unsqueeze->add_input(node.input(1));
    unsqueeze->add_output(node.output(0) + "_legacy_broadcast_operand");
    onnx::AttributeProto *attr = unsqueeze->add_attribute();
    attr->set_name("axes");
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t axis : axes)
      attr->add_ints(axis);
    onnx::NodeProto *changed = nodes.Add();
    *changed = node;
    changed->set_input(1, unsqueeze->output(0));
    // B now lines up from the right: the axis has done its work.
    auto *attrs = changed->mutable_attribute();
    for (int i = attrs->size() - 1; i >= 0; --i)
      if (attrs->Get(i).name() == "axis")
        attrs->DeleteSubrange(i, 1);
  }
  *typed.mutable_graph()->mutable_node() = std::move(nodes);
}

/// Converts here: the serialized model, or false with ONNX's message.
static bool convert(const onnx::ModelProto &model, int targetOpset,
                    std::string &reply) {
  // The adapters of broadcasting ops need their inputs' shapes, which a
  // Constant's output has only once inferred; the shapes found are not
  // kept, so that the importer's own inference starts from the model's.
  auto inferShapes = [](onnx::ModelProto &typed) {
    onnx::ModelProto before = typed;
    try {
      onnx::shape_inference::InferShapes(typed);
    } catch (const std::exception &) {
      typed = std::move(before);
    }
  };
  onnx::ModelProto typed = model;
  inferShapes(typed);
  spellOutLegacyBroadcasts(typed);
  inferShapes(typed);
  try {
    onnx::ModelProto converted =
        onnx::version_conversion::ConvertVersion(typed, targetOpset);
    *converted.mutable_graph()->mutable_value_info() =
        model.graph().value_info();
    if (converted.SerializeToString(&reply))
      return true;
    reply = "the converted model does not serialize";
  } catch (const std::exception &e) {
    reply = e.what();
  }
  return false;
}

bool mlir::dpc::onnx_import::upgradeOpset(onnx::ModelProto &model,
                                          int targetOpset, std::string &error) {
  std::string reply;
  ChildOutcome outcome = runInChildProcess(
      [&](std::string &out) { return convert(model, targetOpset, out); },
      reply);
  if (outcome == ChildOutcome::Crashed) {
    error = "ONNX's version converter crashed on it";
    return false;
  }
  if (outcome == ChildOutcome::Failed) {
    error = "ONNX's version converter refused it: " + reply;
    return false;
  }
  onnx::ModelProto converted;
  if (!converted.ParseFromString(reply)) {
    error = "ONNX's version converter returned a model that does not parse";
    return false;
  }
  model = std::move(converted);
  return true;
}
