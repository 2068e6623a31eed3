"""ONNX op types the importer builds from dpc's own ops (ElementwiseConverters,
NeuralNetConverters, ShapeConverters): Elu, Selu, PRelu, InstanceNormalization,
DepthToSpace, Tile, ReduceLogSumExp and OneHot, as PyTorch exports them. A
model using all of them trains with PyTorch's loss and gradients (their
gradients are those of the ops they are built from); the node tests check
the rest of their semantics."""

import pytest
import torch
import torch.nn.functional as F

from conftest import check_gradients_match_pytorch, export_for_training
from dpc import models


class Composite(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.InstanceNorm2d(8, affine=True)
        self.prelu = torch.nn.PReLU(8, init=0.2)
        self.shuffle = torch.nn.PixelShuffle(2)
        self.head = torch.nn.Linear(2 * 8 * 8 * 2, 5)
        self.table = torch.nn.Parameter(torch.randn(4, 2 * 8 * 8 * 2) * 0.1)

    def forward(self, x):
        y = self.prelu(self.norm(F.elu(self.conv(x), alpha=0.7)))
        y = F.selu(self.shuffle(y))                    # [N, 2, 8, 8]
        y = y.flatten(1).repeat(1, 2)                  # Tile
        # A one-hot of each sample's argmax selects a learned row.
        pick = F.one_hot(y[:, :4].argmax(1), 4).to(y.dtype)
        y = y + pick @ self.table
        logits = self.head(y)
        return logits - torch.logsumexp(logits, dim=1, keepdim=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    torch.manual_seed(0)
    model = models.WithLoss(Composite())
    x, target = torch.randn(2, 3, 4, 4), torch.randint(0, 5, (2,))
    path = str(tmp_path_factory.mktemp("composite") / "composite.onnx")
    ops = {n.op_type for n in export_for_training(model, x, target, path).graph.node}
    wanted = {"Elu", "Selu", "PRelu", "InstanceNormalization", "DepthToSpace",
              "Tile", "ReduceLogSumExp", "OneHot"}
    assert wanted <= ops, sorted(wanted - ops)
    return path, model, x, target


def test_gradients_match_pytorch(exported, tmp_path):
    check_gradients_match_pytorch(*exported, tmp_path, rtol=1e-4, atol=1e-5)


def _layer_norm_model(tmp_path, stash_type, dtype, stash_dtype):
    import onnx
    from onnx import helper
    node = helper.make_node("LayerNormalization", ["x", "scale"], ["y", "mean", "inv_std"],
                            axis=1, epsilon=1e-3, stash_type=stash_type)
    graph = helper.make_graph(
        [node], "layer_norm",
        [helper.make_tensor_value_info("x", dtype, [2, 3, 4]),
         helper.make_tensor_value_info("scale", dtype, [3, 4])],
        [helper.make_tensor_value_info("y", dtype, [2, 3, 4])] +
        [helper.make_tensor_value_info(name, stash_dtype, [2, 1, 1])
         for name in ("mean", "inv_std")])
    path = str(tmp_path / ("layer_norm_%d.onnx" % stash_type))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_layer_normalization_statistics_outputs(tmp_path):
    """LayerNormalization's Mean and InvStdDev outputs (19 ONNX node tests):
    over the dimensions from `axis` on, kept as ones, in the stash type."""
    import numpy as np
    from onnx import TensorProto
    from dpc.interpreter import interpret
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    # The epsilon attribute is a float32.
    epsilon = float(np.float32(1e-3))
    mean = x.mean(axis=(1, 2), keepdims=True)
    inv_std = 1 / np.sqrt(x.var(axis=(1, 2), keepdims=True) + epsilon)
    path = _layer_norm_model(tmp_path, 11, TensorProto.DOUBLE, TensorProto.DOUBLE)
    got = interpret(path, {"x": x, "scale": np.ones((3, 4))}, precision="fp64")
    np.testing.assert_allclose(got["mean"], mean, rtol=1e-12)
    np.testing.assert_allclose(got["inv_std"], inv_std, rtol=1e-12)
    np.testing.assert_allclose(got["y"], (x - mean) * inv_std, rtol=1e-6)
    # A float16 stash type computes them in float16 from a float32 input.
    path = _layer_norm_model(tmp_path, 10, TensorProto.FLOAT, TensorProto.FLOAT16)
    got = interpret(path, {"x": x.astype(np.float32), "scale": np.ones((3, 4), np.float32)})
    assert got["mean"].dtype == np.float16
    np.testing.assert_allclose(got["mean"], mean, atol=2e-3)
    np.testing.assert_allclose(got["inv_std"], inv_std, rtol=4e-3)


class WeightedLoss(torch.nn.Module):
    """A classifier over [N, C, L] positions trained by a class-weighted
    cross-entropy that ignores label -1 (PyTorch exports the weights as an
    initializer of SoftmaxCrossEntropyLoss)."""

    def __init__(self):
        super().__init__()
        self.head = torch.nn.Conv1d(3, 5, 1)
        self.register_buffer("class_weights", torch.tensor([0.5, 2.0, 1.0, 0.25, 3.0]))

    def forward(self, x, target):
        logits = self.head(x)
        return F.cross_entropy(logits, target, weight=self.class_weights,
                               ignore_index=-1), logits


def test_class_weighted_loss_trains_as_pytorch(tmp_path):
    """Class weights (41 ONNX node tests of SoftmaxCrossEntropyLoss and
    NegativeLogLikelihoodLoss): the loss is built from dpc's ops (log
    softmax, the label's log-probability and weight gathered, ignored labels
    weighing nothing, the mean over the weights counted); its loss and
    gradients equal PyTorch's, and the weights stay constants, not
    parameters to train."""
    torch.manual_seed(0)
    model = WeightedLoss()
    x = torch.randn(4, 3, 6)
    target = torch.randint(0, 5, (4, 6))
    target[0, :3] = -1
    path = str(tmp_path / "weighted.onnx")
    graph = export_for_training(model, x, target, path).graph
    (loss,) = [n for n in graph.node if n.op_type == "SoftmaxCrossEntropyLoss"]
    assert len(loss.input) == 3
    check_gradients_match_pytorch(path, model, x, target, tmp_path, rtol=1e-5, atol=1e-6)
    # A constant of the step, not a parameter (nor an input).
    step = open(tmp_path / "step.mlir").read()
    assert '"class_weights"' not in step


@pytest.mark.parametrize("mesh, dp, tp", [("2", 2, 1), ("2x2", 2, 2)])
def test_class_weighted_loss_over_ranks_equals_one_device(tmp_path, mesh, dp, tp):
    """The weighted mean divides the sum of the weighted losses by the sum
    of the counted weights: split over data-parallel ranks, both sums are
    completed before the division (each rank's own quotient would weigh
    its share of the batch wrongly). Three AdamW steps on simulated ranks
    equal the single-device steps."""
    import subprocess
    import numpy as np
    from dpc import tools, train
    torch.manual_seed(0)
    model = WeightedLoss()
    x, target = torch.randn(4, 3, 6), torch.randint(0, 5, (4, 6))
    # The ignored labels all in the first half of the batch: rank 0 counts
    # fewer weights than rank 1.
    target[0, :4] = -1
    target[1, :2] = -1
    path = str(tmp_path / "weighted.onnx")
    export_for_training(model, x, target, path)
    step, split = str(tmp_path / "step.mlir"), str(tmp_path / "split.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "--optimizer=adamw",
                          "-o", step])
    subprocess.run([tools.tool("dpc-opt"), step, "--mesh=" + mesh, "--dp=%d" % dp,
                    "--tp=%d" % tp, "--pp=1", "--zero=0", "--partition", "-o", split],
                   check=True)
    roles = tools.signature(open(step).read(), function="train_step")
    rng = np.random.default_rng(1)
    inputs = {k: (0.3 * rng.standard_normal(s)).astype(np.float32)
              for k, s in roles["param"].items()}
    inputs.update({k: np.zeros(s, np.float32) for k, s in roles["opt_state"].items()})
    inputs.update({"x": x.numpy(), "target": target.numpy()})
    expected, expected_losses = train.train(step, inputs, list(roles["hyper"]))
    actual, losses = train.train(split, inputs, list(roles["hyper"]))
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-5)
    for key in roles["param"]:
        np.testing.assert_allclose(actual[key], expected[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)
