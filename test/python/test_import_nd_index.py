"""GatherND and ScatterND on values that flow through the model (the
libonnx-testdata node tests cover their semantics; Swin, in
test_importer_models.py, the folding of its mask).

The importer turns an index tuple into one position in the tensor with its
indexed dimensions flattened, and the op into dpc.gather / dpc.scatter_add,
so the training step differentiates through them: the gradients here are
PyTorch's (an index_put export) and NumPy's (a GatherND graph)."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from conftest import check_gradients_match_pytorch, export_for_training
from dpc import models, tools
from dpc.interpreter import InterpreterError, interpret


class IndexPutNet(torch.nn.Module):
    """h[:, [0, 2]] = tanh(rows) per sample: PyTorch exports the assignment as a
    ScatterND whose data and updates are computed by the model."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 12)
        self.rows = torch.nn.Parameter(torch.randn(2, 4))
        self.head = torch.nn.Linear(12, 5)

    def forward(self, x):
        h = self.fc(x).reshape(-1, 3, 4).clone()
        # Expanded: the exporter reshapes the updates without broadcasting.
        h[:, torch.tensor([0, 2])] = torch.tanh(self.rows).expand(h.shape[0], 2, 4)
        return self.head(torch.relu(h).reshape(h.shape[0], -1))


@pytest.fixture(scope="module")
def index_put(tmp_path_factory):
    torch.manual_seed(0)
    model = models.WithLoss(IndexPutNet())
    x, target = torch.randn(2, 6), torch.randint(0, 5, (2,))
    path = str(tmp_path_factory.mktemp("index_put") / "index_put.onnx")
    ops = {n.op_type for n in export_for_training(model, x, target, path).graph.node}
    assert "ScatterND" in ops, ops
    return path, model, x, target


def test_scatter_nd_gradients_match_pytorch(index_put, tmp_path):
    # The overwritten rows of fc's output get no gradient; rows gets theirs.
    check_gradients_match_pytorch(*index_put, tmp_path, rtol=1e-5, atol=1e-6)


def _gather_nd_model(path, batch_dims, indices, data_shape=(2, 3, 4)):
    """loss = ReduceSum(GatherND(x * w, indices)), w an initializer (a
    parameter)."""
    w = np.linspace(-1, 1, int(np.prod(data_shape))).reshape(data_shape)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["data"]),
         helper.make_node("GatherND", ["data", "indices"], ["picked"],
                          batch_dims=batch_dims),
         helper.make_node("ReduceSum", ["picked"], ["loss"], keepdims=0)],
        "gather_nd",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, data_shape),
         helper.make_tensor_value_info("indices", TensorProto.INT64, indices.shape)],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(w.astype(np.float32), "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              path)
    return w.astype(np.float32)


@pytest.mark.parametrize("batch_dims,indices", [
    # Whole rows by (i, j), a negative index and a repeated tuple among them.
    (0, np.array([[0, 1], [1, -1], [0, 1]])),
    # One element per batch entry: x[b, i, j] with b the batch position.
    (1, np.array([[1, 3], [2, 0]])),
])
def test_gather_nd_gradient_counts_each_pick(tmp_path, batch_dims, indices):
    path = str(tmp_path / "gather_nd.onnx")
    w = _gather_nd_model(path, batch_dims, indices)
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "-o", step])
    x = np.random.default_rng(0).standard_normal(w.shape).astype(np.float32)
    got = interpret(step, {"w": w, "x": x, "indices": indices},
                    function="forward_backward")

    # d loss / d data counts how often each element is picked.
    picks = np.zeros(w.shape)
    for position in np.ndindex(*indices.shape[:-1]):
        prefix = position[:batch_dims]
        picks[prefix + tuple(indices[position])] += 1
    np.testing.assert_allclose(got["loss"], np.sum(picks * x * w), rtol=1e-5)
    np.testing.assert_allclose(got["grad:w"], picks * x, rtol=1e-6)


def test_an_index_out_of_range_at_run_time_is_an_error(tmp_path):
    path = str(tmp_path / "gather_nd.onnx")
    w = _gather_nd_model(path, 0, np.array([[0, 1]]))
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "-o", step])
    # Row-major, (0, 3) would be the valid (1, 0): it must not be read.
    with pytest.raises(InterpreterError, match="out of range"):
        interpret(step, {"w": w, "x": w, "indices": np.array([[0, 3]])},
                  function="forward_backward")


def _scatter_nd_model(path, indices, reduction):
    graph = helper.make_graph(
        [helper.make_node("ScatterND", ["data", "indices", "updates"], ["out"],
                          reduction=reduction, name="scatter")],
        "scatter_nd",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 2]),
         helper.make_tensor_value_info("updates", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [4, 2])],
        [numpy_helper.from_array(indices, "indices")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              path)


@pytest.mark.parametrize("indices,reduction,message", [
    (np.array([[1], [1]]), "none",
     "node 'scatter' (ScatterND): indices address one element twice, which "
     "ONNX leaves undefined"),
    (np.array([[1], [4]]), "none",
     "node 'scatter' (ScatterND): index 4 is out of range for dimension 0 of size 4"),
    (np.array([[1], [2]]), "mul",
     "node 'scatter' (ScatterND): reduction 'mul' needs its inputs known at "
     "import time"),
])
def test_bad_scatter_nd_is_refused_naming_the_node(tmp_path, indices, reduction,
                                                   message):
    path = str(tmp_path / "scatter_nd.onnx")
    _scatter_nd_model(path, indices, reduction)
    out = tmp_path / "out.mlir"
    r = tools.run("dpc-opt", [path, "-o", str(out)], check=False)
    assert r.returncode == 1
    assert message in r.stderr
    assert not out.exists()


def test_scatter_nd_add_with_literal_indices(tmp_path):
    path = str(tmp_path / "scatter_nd.onnx")
    _scatter_nd_model(path, np.array([[3], [0]]), "add")
    out = str(tmp_path / "out.mlir")
    tools.run("dpc-opt", [path, "-o", out])
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    updates = np.array([[10, 20], [30, 40]], np.float32)
    got = interpret(out, {"data": data, "updates": updates})
    expected = data.copy()
    expected[3] += updates[0]
    expected[0] += updates[1]
    np.testing.assert_array_equal(got["out"], expected)
