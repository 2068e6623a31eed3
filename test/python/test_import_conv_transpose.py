"""ConvTranspose with `output_shape` past what the input reaches (ONNX's
test_convtranspose_output_shape: stride 3, 3 rows in, 10 out, where the
windows reach 9): the rows no input lands on come at the end, holding the
bias, as output padding of a stride or more, which PyTorch cannot express.
The training step's gradient rule cuts them off before the adjoint
convolution. Checked against PyTorch's transposed convolution followed by
the zero rows and the bias, and compiled over two ranks."""

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

from dpc import tools
from dpc.interpreter import interpret


def _model(path, weight, bias):
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name="up",
                              strides=[3, 2], output_shape=[10, 8]),
             helper.make_node("Mul", ["y", "y"], ["sq"]),
             helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "up", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 3, 3])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=[numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def _torch_loss(x, w, b):
    natural = F.conv_transpose2d(x, w, stride=(3, 2))      # [2, 2, 9, 7]
    y = F.pad(natural, (0, 1, 0, 1)) + b.view(1, -1, 1, 1)  # [2, 2, 10, 8]
    return (y * y).mean()


def test_output_shape_past_the_reach_trains_as_pytorch(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    w = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    path = str(tmp_path / "up.onnx")
    _model(path, w, b)
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "-o", step])
    got = interpret(step, {"x": x, "w": w, "b": b}, function="forward_backward",
                    precision="fp64")
    tx, tw, tb = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, w, b))
    loss = _torch_loss(tx, tw, tb)
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.item(), rtol=1e-6)
    np.testing.assert_allclose(got["grad:w"], tw.grad.numpy(), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got["grad:b"], tb.grad.numpy(), rtol=1e-6, atol=1e-9)


def test_output_shape_past_the_reach_compiled_equals_one_device(tmp_path):
    from test_cpu_backend import LAYOUTS, assert_compiled_steps_near_exact

    rng = np.random.default_rng(1)
    path = str(tmp_path / "up.onnx")
    _model(path, rng.standard_normal((1, 2, 3, 3)).astype(np.float32),
           rng.standard_normal(2).astype(np.float32))
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "--optimizer=adamw",
                          "-o", step])
    roles = tools.signature(open(step).read(), function="train_step")
    inputs = {k: (0.3 * rng.standard_normal(s)).astype(np.float32)
              for k, s in roles["param"].items()}
    inputs.update({k: np.zeros(s, np.float32) for k, s in roles["opt_state"].items()})
    inputs["x"] = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    assert_compiled_steps_near_exact(step, inputs, list(roles["hyper"]), LAYOUTS["dp"],
                                     tmp_path)
