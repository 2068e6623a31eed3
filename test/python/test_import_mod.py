"""Mod with ONNX's semantics, the divisor's sign by default and the
dividend's under fmod=1: folded where its inputs are known at import time
(shifted-window attention computes its window indices so), dpc.mod where
they come at run time; an integer divisor of zero then is a clear error."""

import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dpc.interpreter import interpret
from dpc.tools import tool


def _model(path, a, b, graph_input=False):
    inits = [numpy_helper.from_array(b, "b")]
    inputs = []
    if graph_input:
        inputs.append(helper.make_tensor_value_info("a", TensorProto.INT64, list(a.shape)))
    else:
        inits.append(numpy_helper.from_array(a, "a"))
    elem = TensorProto.INT64 if a.dtype == np.int64 else TensorProto.FLOAT
    nodes = [helper.make_node("Mod", ["a", "b"], ["python"], name="window_mod",
                              fmod=0 if a.dtype == np.int64 else 1),
             helper.make_node("Mod", ["a", "b"], ["c"], name="window_fmod", fmod=1)]
    outputs = [helper.make_tensor_value_info(n, elem, list(a.shape)) for n in ("python", "c")]
    graph = helper.make_graph(nodes, "mod", inputs, outputs, initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_integer_mod_folds_with_both_sign_rules(tmp_path):
    a = np.array([-7, 5, 9, -3, 0, 8], np.int64)
    b = np.array([4, -3, 4, 2, 5, -8], np.int64)
    path = str(tmp_path / "mod.onnx")
    _model(path, a, b)
    got = interpret(path, {})
    np.testing.assert_array_equal(got["python"], np.mod(a, b))
    np.testing.assert_array_equal(got["c"], np.fmod(a, b))


def test_float_mod_is_fmod(tmp_path):
    """Float Mod folds where its operands are known: scalar Constant nodes
    (float initializers and larger float constants are parameters)."""
    path = str(tmp_path / "mod.onnx")
    nodes = [helper.make_node("Constant", [], ["a"], value=numpy_helper.from_array(
                 np.array(-7.5, np.float32))),
             helper.make_node("Constant", [], ["b"], value=numpy_helper.from_array(
                 np.array(4.0, np.float32))),
             helper.make_node("Mod", ["a", "b"], ["c"], fmod=1)]
    graph = helper.make_graph(nodes, "mod", [], [
        helper.make_tensor_value_info("c", TensorProto.FLOAT, [])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    got = interpret(path, {})
    assert got["c"] == np.fmod(np.float32(-7.5), np.float32(4.0))


def test_mod_of_a_graph_input_runs_with_both_sign_rules(tmp_path):
    a = np.array([-7, 5, 9, -3, 0, 8, -2**63], np.int64)
    b = np.array([4, -3, 4, 2, 5, -8, -1], np.int64)
    path = str(tmp_path / "mod.onnx")
    _model(path, a, b, graph_input=True)
    got = interpret(path, {"a": a})
    np.testing.assert_array_equal(got["python"], np.mod(a, b))
    np.testing.assert_array_equal(got["c"], np.fmod(a, b))


def test_integer_mod_by_zero_at_run_time_is_a_clear_error(tmp_path):
    path = str(tmp_path / "mod.onnx")
    _model(path, np.array([1, 2], np.int64), np.array([2, 0], np.int64), graph_input=True)
    r = subprocess.run([tool("dpc-run"), "--interpret", path, "--input",
                        "a=" + _npy(tmp_path, np.array([1, 2], np.int64)),
                        "--output-dir", str(tmp_path / "out")],
                       capture_output=True, text=True)
    assert r.returncode == 1
    # Where: the file and the ONNX node.
    assert "mod.onnx: node 'window_mod': error: integer remainder of a division by " \
        "zero" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def _npy(tmp_path, array):
    path = str(tmp_path / "a.npy")
    np.save(path, array)
    return path
