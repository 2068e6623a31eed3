"""Models older than opset 7 (PyTorch's exporter wrote opset 6 until 2018;
libonnx-testdata's pytorch-converted and pytorch-operator tests are such
exports): the importer brings them to opset 7 with ONNX's version converter
and trains them as the newer ops say. The opset-6 semantics the converter
leaves alone (a PRelu slope of shape [C] runs over channels) are kept."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from dpc import tools
from dpc.interpreter import interpret


class ConvPRelu(torch.nn.Module):
    """What the opset-6 graph below computes, in PyTorch."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.shift = torch.nn.Parameter(torch.randn(4) * 0.1)
        self.prelu = torch.nn.PReLU(4, init=0.25)

    def forward(self, x):
        y = self.conv(x) + self.shift.view(1, 4, 1, 1)
        return self.prelu(y).square().mean()


def opset6_graph(model: ConvPRelu, batch: int) -> onnx.ModelProto:
    """The module as the opset-6 exporter wrote it: Add with the legacy
    `broadcast`/`axis` attributes and a PRelu slope of shape [C]."""
    weights = {name: numpy_helper.from_array(p.detach().numpy(), name)
               for name, p in model.named_parameters()}
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"],
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "shift"], ["s"], broadcast=1, axis=1),
        helper.make_node("PRelu", ["s", "prelu.weight"], ["p"]),
        helper.make_node("Mul", ["p", "p"], ["q"]),
        helper.make_node("ReduceMean", ["q"], ["loss"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "conv_prelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 6, 6])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=list(weights.values()))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])


def test_opset6_model_trains_as_pytorch(tmp_path):
    torch.manual_seed(0)
    model = ConvPRelu()
    x = torch.randn(2, 3, 6, 6)
    path = str(tmp_path / "conv_prelu_opset6.onnx")
    onnx.save(opset6_graph(model, 2), path)
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "-o", step])
    weights = {k: v.detach().numpy() for k, v in model.named_parameters()}
    got = interpret(step, {**weights, "x": x.numpy()}, function="forward_backward")
    loss = model(x)
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.detach().numpy(), rtol=1e-5)
    for name, param in model.named_parameters():
        np.testing.assert_allclose(got["grad:" + name], param.grad.numpy(),
                                   rtol=1e-5, atol=1e-7, err_msg=name)


def import_error(tmp_path, model: onnx.ModelProto) -> str:
    path = str(tmp_path / "old.onnx")
    onnx.save(model, path)
    result = tools.run("dpc-opt", [path, "-o", str(tmp_path / "out.mlir")], check=False)
    assert result.returncode != 0
    assert not (tmp_path / "out.mlir").exists()
    return result.stderr


def one_node_model(node, opset):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return helper.make_model(helper.make_graph([node], "g", [x], [y]),
                             opset_imports=[helper.make_opsetid("", opset)])


def test_unsupported_op_is_named_before_any_upgrade(tmp_path):
    error = import_error(tmp_path, one_node_model(
        helper.make_node("Crop", ["x"], ["y"], name="crop0"), 1))
    assert "unsupported ONNX op: 'Crop' (node 'crop0'" in error


# Nodes ONNX's converter cannot adapt: opset-6 Upsample takes
# width_scale/height_scale, not opset 7's scales; an opset-4 Reshape its
# shape as an attribute; the broadcasting adapters need both inputs.
REFUSED = {
    "upsample_scales": (helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 2.0]), 6,
                        "Upsample"),
    "upsample_bare": (helper.make_node("Upsample", ["x"], ["y"]), 6, "upsample_6_7"),
    "reshape_without_shape": (helper.make_node("Reshape", ["x"], ["y"]), 4, ""),
    "add_of_one_input": (helper.make_node("Add", ["x"], ["y"], broadcast=1), 6,
                         "assertInputsAvailable"),
    "gemm_of_one_input": (helper.make_node("Gemm", ["x"], ["y"], broadcast=1), 6,
                          "assertInputsAvailable"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_model_the_converter_refuses_names_the_opset_and_the_reason(tmp_path, case):
    node, opset, reason = REFUSED[case]
    error = import_error(tmp_path, one_node_model(node, opset))
    assert "the model's opset %d is older than dpc reads (7 to 17)" % opset in error
    assert "ONNX's version converter refused it" in error
    assert reason in error


@pytest.mark.parametrize("opset", [1, 6])
def test_a_malformed_old_graph_is_refused_before_the_converter_sees_it(tmp_path, opset):
    error = import_error(tmp_path, one_node_model(
        helper.make_node("Relu", ["nowhere"], ["y"], name="r"), opset))
    assert "node 'r' (Relu) reads 'nowhere', which no graph input" in error
