"""Which stored tensors are parameters. Initializers are (PyTorch exports
every parameter as one); Constant nodes are constants, like the masks and
zero states a model builds in its forward; --parameters and --freeze
override the rule by name (docs/onnx-import.md)."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from conftest import check_gradients_match_pytorch, export_for_training
from dpc import models, tools


class MaskedNet(torch.nn.Module):
    """A constant float mask and a zero initial state built in forward:
    PyTorch exports both as Constant nodes."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 6)
        self.head = torch.nn.Linear(6, 3)

    def forward(self, x):
        mask = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
        state = torch.zeros(x.shape[0], 6)
        h = torch.tanh(self.fc(x) * mask + state)
        return self.head(h)


@pytest.fixture(scope="module")
def masked(tmp_path_factory):
    torch.manual_seed(0)
    model = models.WithLoss(MaskedNet())
    x, target = torch.randn(4, 6), torch.randint(0, 3, (4,))
    path = str(tmp_path_factory.mktemp("masked") / "masked.onnx")
    graph = export_for_training(model, x, target, path).graph
    constants = [n.output[0] for n in graph.node
                 if n.op_type == "Constant" and any(
                     a.t.data_type == TensorProto.FLOAT and len(a.t.dims) > 0
                     and np.prod(a.t.dims) > 1 for a in n.attribute)]
    assert constants, "the export has no multi-element float Constant node"
    return path, model, x, target, constants


def parameters(step):
    return set(tools.signature(open(step).read(), function="train_step")["param"])


def test_parameters_are_pytorchs(masked, tmp_path):
    path, model, x, target, _ = masked
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "-o", step])
    assert parameters(step) == {name for name, _ in model.named_parameters()}


def test_gradients_match_pytorch_with_the_mask_held_constant(masked, tmp_path):
    check_gradients_match_pytorch(*masked[:4], tmp_path, rtol=1e-5, atol=1e-6)


def test_parameters_flag_trains_a_constant(masked, tmp_path):
    path, model, _, _, constants = masked
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss",
                          "--parameters=" + constants[0], "-o", step])
    assert parameters(step) == {name for name, _ in model.named_parameters()} | {constants[0]}


def test_freeze_flag_holds_parameters_constant(masked, tmp_path):
    path, model, _, _, _ = masked
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "--freeze=net\\.fc\\..*",
                          "-o", step])
    assert parameters(step) == {"net.head.weight", "net.head.bias"}


def test_a_model_without_float_initializers_keeps_its_weights_in_constant_nodes(tmp_path):
    """Some exporters store every weight as a Constant node: there the
    multi-element float ones are parameters; scalars stay constants."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    nodes = [
        helper.make_node("Constant", [], ["w"], name="w0", value=helper.make_tensor(
            "w", TensorProto.FLOAT, [3, 4], np.arange(12, dtype=np.float32))),
        helper.make_node("Constant", [], ["s"], name="s0", value=helper.make_tensor(
            "s", TensorProto.FLOAT, [], [2.0])),
        helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
        helper.make_node("Mul", ["m", "s"], ["y"], name="mul"),
    ]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    out = tools.run("dpc-opt", [path]).stdout
    assert '{dpc.param = "w"}' in out
    assert '"s"' not in out


@pytest.mark.parametrize("flag", ["--parameters", "--freeze"])
def test_a_bad_pattern_is_refused_naming_the_flag(masked, tmp_path, flag):
    path = masked[0]
    r = tools.run("dpc-opt", [path, flag + "=net.(fc", "-o", str(tmp_path / "o.mlir")],
                  check=False)
    assert r.returncode == 1
    assert "dpc-opt: %s='net.(fc' is not a regular expression: " % flag in r.stderr
    assert not (tmp_path / "o.mlir").exists()


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_every_bundled_models_parameters_are_pytorchs(exported, name, tmp_path):
    """dpc.param arguments of the imported model: PyTorch's parameters
    (batch-norm statistics are dpc.state, buffers, not parameters)."""
    outdir, _ = exported[name]
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", ["%s/%s.onnx" % (outdir, name), "--train", "-o", step])
    expected = {k for k, _ in models.build(name).model.named_parameters()}
    assert parameters(step) == expected
