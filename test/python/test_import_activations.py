"""Activations the importer builds from dpc's elementwise ops (Softplus,
Softsign, Celu, Sign, HardSwish), at opset 17 (the ONNX node tests of the
first two are opset 1, below what dpc imports), against NumPy. Their
gradients are those of the ops they are made of, each checked by finite
differences in test_gradient_rules.py."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from dpc.interpreter import interpret

X = np.array([[-3.0, -0.5, 0.0, 0.25, 2.0, 7.0]], np.float32)

REFERENCES = {
    "Softplus": lambda x: np.log1p(np.exp(x)),
    "Softsign": lambda x: x / (1 + np.abs(x)),
    "Celu": lambda x: np.maximum(0, x) + np.minimum(0, 0.7 * (np.exp(x / 0.7) - 1)),
    "Sign": np.sign,
    "HardSwish": lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
}


@pytest.mark.parametrize("op", sorted(REFERENCES))
def test_activation_matches_numpy(tmp_path, op):
    attrs = {"alpha": 0.7} if op == "Celu" else {}
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(X.shape))])
    path = str(tmp_path / (op + ".onnx"))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    got = interpret(path, {"x": X})["y"]
    np.testing.assert_allclose(got, REFERENCES[op](X.astype(np.float64)), rtol=1e-6, atol=1e-7)


def _clip_model(tmp_path, bound_type, bound_shape):
    """Clip(x, lo, hi) with its bounds graph inputs, not constants."""
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    graph = helper.make_graph(
        [node], "clip",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape)),
         helper.make_tensor_value_info("lo", bound_type, bound_shape),
         helper.make_tensor_value_info("hi", bound_type, bound_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(X.shape))])
    path = str(tmp_path / "clip.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("shape", [[], [1]])
def test_clip_bounds_given_at_run_time(tmp_path, shape):
    """Clip's min and max may be the graph's inputs (9 ONNX node tests):
    they are read when the step runs, not folded at import."""
    path = _clip_model(tmp_path, TensorProto.FLOAT, shape)
    for lo, hi in ((-0.5, 2.0), (0.0, 0.25)):
        bounds = {"lo": np.full(shape, lo, np.float32), "hi": np.full(shape, hi, np.float32)}
        got = interpret(path, {"x": X, **bounds})["y"]
        np.testing.assert_array_equal(got, np.clip(X, lo, hi))


def test_clip_bound_of_another_type_is_a_clear_error(tmp_path):
    import subprocess
    from dpc.tools import tool
    path = _clip_model(tmp_path, TensorProto.DOUBLE, [])
    r = subprocess.run([tool("dpc-opt"), path, "-o", str(tmp_path / "out.mlir")],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert r.stderr.count("error:") == 1, r.stderr
    assert "(Clip): min is 'f64', not the input's 'f32'" in r.stderr, r.stderr
    assert not (tmp_path / "out.mlir").exists()
