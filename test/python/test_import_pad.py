"""Pad (constant mode) from a real PyTorch export: nn.ZeroPad2d, F.pad with
a value, and AvgPool2d counting its padding (which PyTorch exports as a Pad
before the pool). The forward and the training step's loss and gradients
match PyTorch."""

import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

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
    torch.onnx.export(model, (x, target), path, input_names=["x", "target"],
                      output_names=["loss", "logits"], opset_version=models.OPSET,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    import onnx
    ops = {node.op_type for node in onnx.load(path).graph.node}
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
    path, model, x, target = exported
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "-o", step])
    weights = {k: v.detach().numpy() for k, v in model.named_parameters()}
    got = interpret(step, {**weights, "x": x.numpy(), "target": target.numpy()},
                    function="forward_backward")
    model.zero_grad()
    loss, _ = model(x, target)
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.detach().numpy(), rtol=1e-4, atol=1e-5)
    for name, param in model.named_parameters():
        np.testing.assert_allclose(got["grad:" + name], param.grad.numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=name)
