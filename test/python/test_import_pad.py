"""Pad (constant mode) from a real PyTorch export: nn.ZeroPad2d, F.pad with
a value, and AvgPool2d counting its padding (which PyTorch exports as a Pad
before the pool). The forward and the training step's loss and gradients
match PyTorch."""

import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import check_gradients_match_pytorch, export_for_training
from dpc import models, tools
from dpc.interpreter import interpret


class PaddedNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.pad = torch.nn.ZeroPad2d((1, 2, 0, 1))
        self.pool = torch.nn.AvgPool2d(2, padding=1, count_include_pad=True)
        self.head = torch.nn.Linear(4 * 5 * 5, 5)

    def forward(self, x):
        y = self.pad(torch.relu(self.conv(x)))
        y = F.pad(y, (0, 0, 1, 0), value=0.5)
        return self.head(self.pool(y).flatten(1))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    torch.manual_seed(0)
    model = models.WithLoss(PaddedNet())
    x, target = torch.randn(2, 3, 8, 8), torch.randint(0, 5, (2,))
    path = str(tmp_path_factory.mktemp("pad") / "padded.onnx")
    ops = {node.op_type for node in export_for_training(model, x, target, path).graph.node}
    assert "Pad" in ops, ops
    return path, model, x, target


def test_forward_matches_pytorch(exported):
    path, model, x, target = exported
    got = interpret(path, {"x": x.numpy(), "target": target.numpy()})
    with torch.no_grad():
        loss, logits = model(x, target)
    np.testing.assert_allclose(got["logits"], logits.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["loss"], loss.numpy(), rtol=1e-4, atol=1e-5)


def test_gradients_match_pytorch(exported, tmp_path):
    check_gradients_match_pytorch(*exported, tmp_path, rtol=1e-4, atol=1e-5)


class BorderPaddedNet(torch.nn.Module):
    """Reflect and edge (replicate) padding, as PyTorch exports them."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.reflect = torch.nn.ReflectionPad2d((2, 1, 1, 3))
        self.replicate = torch.nn.ReplicationPad2d((1, 0, 2, 1))
        self.head = torch.nn.Linear(4 * 15 * 10, 5)

    def forward(self, x):
        y = self.reflect(torch.tanh(self.conv(x)))
        y = self.replicate(y * y)
        y = F.pad(y, (0, 0, 1, 1), mode="reflect")
        return self.head(y.flatten(1))


@pytest.fixture(scope="module")
def border_exported(tmp_path_factory):
    torch.manual_seed(0)
    model = models.WithLoss(BorderPaddedNet())
    x, target = torch.randn(2, 3, 8, 8), torch.randint(0, 5, (2,))
    path = str(tmp_path_factory.mktemp("border") / "border.onnx")
    graph = export_for_training(model, x, target, path).graph
    modes = {attr.s.decode() for node in graph.node
             if node.op_type == "Pad" for attr in node.attribute if attr.name == "mode"}
    assert modes == {"reflect", "edge"}, modes
    return path, model, x, target


def test_reflect_and_edge_forward_matches_pytorch(border_exported):
    test_forward_matches_pytorch(border_exported)


def test_reflect_and_edge_gradients_match_pytorch(border_exported, tmp_path):
    """The gather that pads sums, in its gradient, every copy of an element."""
    test_gradients_match_pytorch(border_exported, tmp_path)


@pytest.mark.parametrize("mode,pads,message", [
    ("reflect", [0, 4, 0, 0], "reflect pads 4 and 0 of dimension 1 (size 4) "
                              "must be smaller than it"),
    ("wrap", [0, 1, 0, 1], "mode 'wrap' is not supported (constant, reflect or edge)"),
    # Checked before the pads are added to the sizes (they could overflow).
    ("constant", [0, 2**62, 0, 2**62], "a pad is larger than dpc holds (at most 1099511627776)"),
])
def test_bad_border_pads_are_refused(tmp_path, mode, pads, message):
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    p = helper.make_tensor("p", TensorProto.INT64, [4], pads)
    node = helper.make_node("Pad", ["x", "p"], ["y"], name="pad0", mode=mode)
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [p]),
                              opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    r = tools.run("dpc-opt", [path, "-o", str(tmp_path / "out.mlir")], check=False)
    assert r.returncode == 1
    assert "node 'pad0' (Pad): " + message in r.stderr
