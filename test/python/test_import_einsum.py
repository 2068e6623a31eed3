"""Einsum: the importer lowers each equation to gathers (diagonals),
reduce_sums and one batched dpc.matmul per further operand. The forward
equals NumPy's einsum on equations of every kind; a PyTorch model using
torch.einsum trains with PyTorch's gradients; bad equations are refused
naming the node."""

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

from conftest import check_gradients_match_pytorch, export_for_training
from dpc import models, tools
from dpc.interpreter import interpret

CASES = [
    # equation, operand shapes
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("i,i", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ba", [(3, 4)]),  # implicit output: sorted letters, a transpose
    ("ab,b", [(3, 4), (4,)]),  # implicit output "a"
    ("ijk->", [(2, 3, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (2, 5, 4, 2)]),  # broadcast batch
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # a bilinear layer
]


def _einsum_model(path, equation, shapes, name="einsum"):
    names = ["x%d" % i for i in range(len(shapes))]
    graph = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation, name=name)],
        "einsum",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
         for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              path)
    return names


@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] for c in CASES])
def test_forward_equals_numpy(tmp_path, equation, shapes):
    path = str(tmp_path / "einsum.onnx")
    names = _einsum_model(path, equation, shapes)
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    got = interpret(path, inputs)["y"]
    expected = np.einsum(equation, *[a.astype(np.float64) for a in inputs.values()])
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


class Bilinear(torch.nn.Module):
    """Attention scores and a bilinear form written with torch.einsum."""

    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(8, 8)
        self.k = torch.nn.Linear(8, 8)
        self.w = torch.nn.Parameter(torch.randn(5, 8, 8) / 8)

    def forward(self, x):  # x: (batch, tokens, 8)
        q = self.q(x).reshape(x.shape[0], x.shape[1], 2, 4)
        k = self.k(x).reshape(x.shape[0], x.shape[1], 2, 4)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k).softmax(-1)
        pooled = torch.einsum("bhqk,bkd->bd", scores, x)
        return torch.einsum("bn,onm,bm->bo", pooled, self.w, pooled)


def test_einsum_model_trains_with_pytorchs_gradients(tmp_path):
    torch.manual_seed(0)
    model = models.WithLoss(Bilinear())
    x, target = torch.randn(2, 3, 8), torch.randint(0, 5, (2,))
    path = str(tmp_path / "bilinear.onnx")
    graph = export_for_training(model, x, target, path).graph
    assert sum(n.op_type == "Einsum" for n in graph.node) == 3
    check_gradients_match_pytorch(path, model, x, target, tmp_path, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("equation,shapes,message", [
    ("ij,jk->ik", [(3, 4), (5, 6)], "label 'j' has sizes 4 and 5"),
    ("ij->k", [(3, 4)], "output label 'k' is in no input term"),
    ("ij->ii", [(3, 4)], "output label 'i' appears twice"),
    ("i$->i", [(3, 4)], "equation character '$' is neither a letter nor part of '...'"),
    # ONNX's shape inference finds these first, and names the node too.
    ("ij,jk", [(3, 4)], "Number of input tensors does not match the operands"),
    ("ijk->i", [(3, 4)], "Rank of input 0 does not match the equation indices"),
])
def test_bad_equations_are_refused_naming_the_node(tmp_path, equation, shapes, message):
    path = str(tmp_path / "einsum.onnx")
    _einsum_model(path, equation, shapes, name="mix")
    out = tmp_path / "out.mlir"
    r = tools.run("dpc-opt", [path, "-o", str(out)], check=False)
    assert r.returncode == 1
    assert ("node 'mix' (Einsum): " + message in r.stderr
            or "(op_type:Einsum, node name: mix): [ShapeInferenceError] " + message
            in r.stderr), r.stderr
    assert not out.exists()
