"""ScatterElements as PyTorch exports Tensor.scatter (reduction none) and
Tensor.scatter_add (reduction add): the importer builds it from
dpc.scatter_add_elements, so the training step differentiates through it
with PyTorch's gradients; literal indices that address one element twice
without a reduction are refused naming the node."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from conftest import check_gradients_match_pytorch, export_for_training
from dpc import models, tools

INDEX = torch.tensor([[2, 0, 5], [1, 4, 3]])
# scatter_add sums what lands on one element twice.
REPEATED = torch.tensor([[3, 3, 0], [5, 1, 5]])


class ScatterNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 6)
        self.src = torch.nn.Parameter(torch.randn(2, 3))
        self.head = torch.nn.Linear(6, 3)

    def forward(self, x):
        h = torch.tanh(self.fc(x))                       # [2, 6]
        h = h.scatter(1, INDEX, self.src * 2)            # overwrite
        h = h.scatter_add(1, REPEATED, self.src)         # accumulate
        return self.head(h)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    torch.manual_seed(0)
    model = models.WithLoss(ScatterNet())
    x, target = torch.randn(2, 4), torch.randint(0, 3, (2,))
    path = str(tmp_path_factory.mktemp("scatter") / "scatter.onnx")
    graph = export_for_training(model, x, target, path).graph
    reductions = [next((a.s.decode() for a in n.attribute if a.name == "reduction"), "none")
                  for n in graph.node if n.op_type == "ScatterElements"]
    assert sorted(reductions) == ["add", "none"], reductions
    return path, model, x, target


def test_gradients_match_pytorch(exported, tmp_path):
    check_gradients_match_pytorch(*exported, tmp_path, rtol=1e-5, atol=1e-6)


def test_literal_indices_addressing_an_element_twice_are_refused(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("ScatterElements", ["data", "idx", "u"], ["y"], axis=1,
                          name="put")],
        "scatter",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("u", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(np.array([[1, 1], [0, 3]], np.int64), "idx")])
    path = str(tmp_path / "scatter.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    out = tmp_path / "out.mlir"
    r = tools.run("dpc-opt", [path, "-o", str(out)], check=False)
    assert r.returncode == 1
    assert ("node 'put' (ScatterElements): indices address one element twice, "
            "which ONNX leaves undefined") in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("op,reduction,axis", [
    ("ScatterElements", "mul", 1), ("ScatterElements", "max", 0),
    ("ScatterND", "min", None), ("ScatterND", "add", None)])
def test_literal_scatters_fold_with_every_reduction(tmp_path, op, reduction, axis):
    """Every input a Constant: the importer computes the scatter, applying
    the updates in order with the reduction (repeated targets included)."""
    data = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    if op == "ScatterElements":
        idx = np.array([[1, 1], [0, 3]], np.int64) if axis else np.array([[1, 0, 1, 1]])
        upd = np.array([[2, 3], [-1, 5]], np.float32) if axis else np.array(
            [[9, -2, 0.5, 4]], np.float32)
        expected = data.copy()
        for pos in np.ndindex(*idx.shape):
            target = list(pos)
            target[axis] = idx[pos]
            target = tuple(target)
            expected[target] = {"mul": np.multiply, "max": np.maximum}[reduction](
                expected[target], upd[pos])
        attrs = {"axis": axis}
    else:
        idx = np.array([[1], [0], [1]], np.int64)
        upd = np.array([[1, 9, -3, 4], [0, 0, 7, 1], [6, -5, 2, 8]], np.float32)
        expected = data.copy()
        for row, value in zip(idx[:, 0], upd):
            expected[row] = {"min": np.minimum, "add": np.add}[reduction](expected[row], value)
        attrs = {}
    constants = [helper.make_node("Constant", [], [n], value=numpy_helper.from_array(a, n))
                 for n, a in (("d", data), ("i", idx), ("u", upd))]
    graph = helper.make_graph(
        constants + [helper.make_node(op, ["d", "i", "u"], ["s"], reduction=reduction,
                                      **attrs),
                     helper.make_node("Add", ["x", "s"], ["xs"]),
                     helper.make_node("Add", ["xs", "b"], ["y"])],
        "fold", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        # A float initializer: the model keeps its weights there, so its
        # Constant nodes are constants (docs/onnx-import.md).
        [numpy_helper.from_array(np.zeros(4, np.float32), "b")])
    path = str(tmp_path / "fold.onnx")
    # Opset 17, dpc's newest: max and min are opset 18's, and dpc folds
    # them at any opset.
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    from dpc.interpreter import interpret
    text = tools.run("dpc-opt", [path]).stdout
    assert "dpc.scatter" not in text  # folded
    got = interpret(path, {"x": np.zeros((2, 4), np.float32),
                           "b": np.zeros(4, np.float32)})["y"]
    np.testing.assert_array_equal(got, expected)
