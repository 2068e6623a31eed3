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
