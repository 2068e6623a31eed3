"""ONNX Loop and Scan whose iterations are known at import time are unrolled
with ONNX's semantics (scan axes and directions, carried values, an early
exit known at import time, weights a body holds read as one parameter);
loops bounded only at run time, or too large to unroll, are refused naming
the node. An If takes the branch a condition known at import time names,
or selects between both branches' outputs. The Elman RNN PyTorch exports
as a Loop is checked against PyTorch in test_importer_models.py."""

import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dpc.interpreter import interpret
from dpc.tools import tool

FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _save(path, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def _refused(path):
    out = path + ".mlir"
    r = subprocess.run([tool("dpc-opt"), path, "-o", out], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert not os.path.exists(out)
    return r.stderr


def test_scan_slices_and_stacks_along_its_axes_in_its_directions(tmp_path):
    """Two states, a forward scan over axis 1 and a reverse one over axis 0;
    one scan output stacked along axis 1, one reversed along axis 0."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "a"], ["s_out"]),
         helper.make_node("Mul", ["p_in", "b"], ["p_out"]),
         helper.make_node("Sub", ["s_out", "p_out"], ["y"]),
         helper.make_node("Identity", ["p_out"], ["z"])],
        "body",
        [_info("s_in", FLOAT, [2]), _info("p_in", FLOAT, [2]),
         _info("a", FLOAT, [2]), _info("b", FLOAT, [2])],
        [_info("s_out", FLOAT, [2]), _info("p_out", FLOAT, [2]),
         _info("y", FLOAT, [2]), _info("z", FLOAT, [2])])
    node = helper.make_node("Scan", ["s0", "p0", "xa", "xb"], ["s", "p", "ys", "zs"],
                            name="scan", body=body, num_scan_inputs=2,
                            scan_input_axes=[1, 0], scan_input_directions=[0, 1],
                            scan_output_axes=[1, 0], scan_output_directions=[0, 1])
    path = str(tmp_path / "scan.onnx")
    _save(path, [node],
          [_info("s0", FLOAT, [2]), _info("p0", FLOAT, [2]),
           _info("xa", FLOAT, [2, 3]), _info("xb", FLOAT, [3, 2])],
          [_info("s", FLOAT, [2]), _info("p", FLOAT, [2]),
           _info("ys", FLOAT, [2, 3]), _info("zs", FLOAT, [3, 2])])
    rng = np.random.default_rng(0)
    feed = {"s0": rng.standard_normal(2).astype(np.float32),
            "p0": rng.standard_normal(2).astype(np.float32),
            "xa": rng.standard_normal((2, 3)).astype(np.float32),
            "xb": rng.standard_normal((3, 2)).astype(np.float32)}
    s, p, ys, zs = feed["s0"], feed["p0"], [], []
    for t in range(3):
        s = s + feed["xa"][:, t]
        p = p * feed["xb"][2 - t]
        ys.append(s - p)
        zs.append(p)
    got = interpret(path, feed)
    np.testing.assert_allclose(got["s"], s, rtol=1e-6)
    np.testing.assert_allclose(got["p"], p, rtol=1e-6)
    np.testing.assert_allclose(got["ys"], np.stack(ys, axis=1), rtol=1e-6)
    np.testing.assert_allclose(got["zs"], np.stack(zs[::-1], axis=0), rtol=1e-6)


def _loop_body(cond_nodes, cond_name, weight=None):
    """h_out = tanh(h_in * W + i), W a body initializer; scan output h_out."""
    nodes = [helper.make_node("Cast", ["i"], ["i_f"], to=FLOAT),
             helper.make_node("Mul", ["h_in", "W"], ["hw"]),
             helper.make_node("Add", ["hw", "i_f"], ["pre"]),
             helper.make_node("Tanh", ["pre"], ["h_out"]),
             helper.make_node("Identity", ["h_out"], ["scan"])] + cond_nodes
    inits = [numpy_helper.from_array(weight, "W")] if weight is not None else []
    return helper.make_graph(
        nodes, "body",
        [_info("i", INT64, []), _info("c_in", BOOL, []), _info("h_in", FLOAT, [3])],
        [_info(cond_name, BOOL, []), _info("h_out", FLOAT, [3]), _info("scan", FLOAT, [3])],
        initializer=inits)


def _loop_model(path, trip, body, trip_as_input=False):
    nodes, inputs = [], [_info("h0", FLOAT, [3])]
    if trip_as_input:
        inputs.append(_info("trip", INT64, []))
    elif trip is not None:
        nodes.append(helper.make_node("Constant", [], ["trip"],
                                      value=numpy_helper.from_array(np.array(trip, np.int64))))
    nodes.append(helper.make_node("Constant", [], ["c0"],
                                  value=numpy_helper.from_array(np.array(True))))
    nodes.append(helper.make_node("Loop", ["trip" if trip is not None or trip_as_input else "",
                                           "c0", "h0"], ["h", "hs"], name="loop", body=body))
    _save(path, nodes, inputs, [_info("h", FLOAT, [3]), _info("hs", FLOAT, [None, 3])])


def test_loop_unrolls_its_trip_count_and_exits_where_its_condition_says(tmp_path):
    """Trip count 4; the body's condition, i < 2 (known each iteration),
    ends the loop after its third iteration. The body's weight W is one
    parameter, read by every iteration."""
    weight = np.array([0.5, -1.0, 2.0], np.float32)
    two = numpy_helper.from_array(np.array(2, np.int64))
    body = _loop_body([helper.make_node("Constant", [], ["two"], value=two),
                       helper.make_node("Less", ["i", "two"], ["c_out"])], "c_out", weight)
    path = str(tmp_path / "loop.onnx")
    _loop_model(path, 4, body)
    text = subprocess.run([tool("dpc-opt"), path], capture_output=True, text=True,
                          check=True).stdout
    assert text.count('dpc.param = "W"') == 1, text
    assert text.count("dpc.tanh") == 3, text
    h0 = np.array([0.1, 0.2, -0.3], np.float32)
    got = interpret(path, {"h0": h0, "W": weight})
    h, hs = h0, []
    for i in range(3):
        h = np.tanh(h * weight + i)
        hs.append(h)
    np.testing.assert_allclose(got["h"], h, rtol=1e-6)
    np.testing.assert_allclose(got["hs"], np.stack(hs), rtol=1e-6)


@pytest.mark.parametrize("case, message", [
    ("trip input", "node 'loop' (Loop): its trip count ('trip') must be known at import time"),
    ("no trip", "node 'loop' (Loop): has no trip count; dpc unrolls loops whose iterations "
                "are known at import time"),
    ("huge trip", "node 'loop' (Loop): unrolls to 1000000000000 iterations of 6 nodes, more "
                  "than the 100000 dpc unrolls"),
    ("computed condition", "node 'loop' (Loop): its body's condition 'c_out' is computed at "
                           "run time"),
    ("reads nothing", "node 'tanh' (Tanh) in the body of node 'loop' (Loop) reads 'missing', "
                      "which no graph input, initializer or node produces"),
])
def test_loop_bounded_only_at_run_time_is_refused(tmp_path, case, message):
    path = str(tmp_path / "loop.onnx")
    weight = np.ones(3, np.float32)
    if case == "computed condition":
        # The condition compares the carried float value: a run-time value.
        zero = numpy_helper.from_array(np.array(0.0, np.float32))
        body = _loop_body([helper.make_node("Constant", [], ["zero"], value=zero),
                           helper.make_node("ReduceSum", ["h_out"], ["total"], keepdims=0),
                           helper.make_node("Less", ["total", "zero"], ["c_out"])],
                          "c_out", weight)
    else:
        body = _loop_body([helper.make_node("Identity", ["c_in"], ["c_out"])], "c_out", weight)
    if case == "reads nothing":
        body.node[3].CopyFrom(helper.make_node("Tanh", ["missing"], ["h_out"], name="tanh"))
    _loop_model(path, {"huge trip": 10 ** 12, "no trip": None}.get(case, 3), body,
                trip_as_input=case == "trip input")
    assert message in _refused(path)


def test_nested_loops_are_bounded_in_all(tmp_path):
    """Three nested loops of 100 iterations each pass the check of their
    own size; together they would unroll to a million bodies."""
    def loop(depth):
        if depth == 0:
            nodes = [helper.make_node("Neg", ["x_in"], ["x_out"])]
        else:
            trip = numpy_helper.from_array(np.array(100, np.int64))
            nodes = [helper.make_node("Constant", [], ["trip%d" % depth], value=trip),
                     helper.make_node("Loop", ["trip%d" % depth, "", "x_in"], ["x_out"],
                                      name="loop%d" % depth, body=loop(depth - 1))]
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out%d" % depth]))
        return helper.make_graph(
            nodes, "body%d" % depth,
            [_info("i", INT64, []), _info("c_in", BOOL, []), _info("x_in", FLOAT, [2])],
            [_info("c_out%d" % depth, BOOL, []), _info("x_out", FLOAT, [2])])
    path = str(tmp_path / "nested.onnx")
    trip = numpy_helper.from_array(np.array(100, np.int64))
    _save(path, [helper.make_node("Constant", [], ["trip"], value=trip),
                 helper.make_node("Loop", ["trip", "", "x0"], ["x"], name="outer",
                                  body=loop(2))],
          [_info("x0", FLOAT, [2])], [_info("x", FLOAT, [2])])
    assert "the model's loops unroll to more than 100000 body nodes in all" in _refused(path)


def _scan8(path, lengths=None):
    """An opset-8 Scan: a batch of 2, one state [2, 3], a forward and a
    reverse scan input [2, 4, 3] and [2, 4, 1], one scan output."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["a", "b"], ["ab"]),
         helper.make_node("Add", ["s_in", "ab"], ["s_out"]),
         helper.make_node("Tanh", ["s_out"], ["y"])],
        "body",
        [_info("s_in", FLOAT, [3]), _info("a", FLOAT, [3]), _info("b", FLOAT, [1])],
        [_info("s_out", FLOAT, [3]), _info("y", FLOAT, [3])])
    nodes, first = [], ""
    if lengths is not None:
        nodes.append(helper.make_node("Constant", [], ["lengths"],
                                      value=numpy_helper.from_array(np.array(lengths, np.int64))))
        first = "lengths"
    nodes.append(helper.make_node("Scan", [first, "s0", "xa", "xb"], ["s", "ys"], name="scan",
                                  body=body, num_scan_inputs=2, directions=[0, 1]))
    _save(path, nodes,
          [_info("s0", FLOAT, [2, 3]), _info("xa", FLOAT, [2, 4, 3]), _info("xb", FLOAT, [2, 4, 1])],
          [_info("s", FLOAT, [2, 3]), _info("ys", FLOAT, [2, 4, 3])], opset=8)


@pytest.mark.parametrize("lengths", [None, [4, 4]])
def test_scan_of_opset_8_runs_per_batch_entry(tmp_path, lengths):
    """Opset 8's Scan has a batch axis its body does not see and scans
    along axis 1; sequence lengths that give every entry the whole
    sequence change nothing (they were refused with the whole op)."""
    path = str(tmp_path / "scan8.onnx")
    _scan8(path, lengths)
    rng = np.random.default_rng(0)
    feed = {"s0": rng.standard_normal((2, 3)).astype(np.float32),
            "xa": rng.standard_normal((2, 4, 3)).astype(np.float32),
            "xb": rng.standard_normal((2, 4, 1)).astype(np.float32)}
    s, ys = feed["s0"].copy(), np.zeros((2, 4, 3), np.float32)
    for b in range(2):
        for t in range(4):
            s[b] = s[b] + feed["xa"][b, t] * feed["xb"][b, 3 - t]
            ys[b, t] = np.tanh(s[b])
    got = interpret(path, feed)
    np.testing.assert_allclose(got["s"], s, rtol=1e-6)
    np.testing.assert_allclose(got["ys"], ys, rtol=1e-6)


def test_scan_of_opset_8_with_shorter_sequences_is_refused(tmp_path):
    path = str(tmp_path / "scan8.onnx")
    _scan8(path, [4, 2])
    assert ("node 'scan' (Scan): its sequence_lens do not give each of the 2 entries the "
            "whole sequence of 4; only full-length sequences are supported") in _refused(path)


def _if_model(path, condition_nodes, transposed_else=False):
    """y = If(cond, then: Relu(x), else: Neg(x), or x transposed) with x
    [2, 5]."""
    then_branch = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                                    [_info("t", FLOAT, None)])
    else_node = (helper.make_node("Transpose", ["x"], ["e"], perm=[1, 0]) if transposed_else
                 else helper.make_node("Neg", ["x"], ["e"]))
    else_branch = helper.make_graph([else_node], "else", [], [_info("e", FLOAT, None)])
    node = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_branch,
                            else_branch=else_branch)
    inputs = [_info("x", FLOAT, [2, 5])]
    if not condition_nodes:
        inputs.append(_info("cond", BOOL, []))
    _save(path, condition_nodes + [node], inputs, [_info("y", FLOAT, None)])


def test_if_known_at_import_time_imports_its_branch(tmp_path):
    """The condition, x's width above 4, is computed from its shape: only
    the then branch is imported."""
    four = numpy_helper.from_array(np.array([4], np.int64))
    one = numpy_helper.from_array(np.array([1], np.int64))
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Constant", [], ["one"], value=one),
             helper.make_node("Gather", ["shape", "one"], ["width"], axis=0),
             helper.make_node("Constant", [], ["four"], value=four),
             helper.make_node("Greater", ["width", "four"], ["cond"])]
    path = str(tmp_path / "if.onnx")
    _if_model(path, nodes)
    text = subprocess.run([tool("dpc-opt"), path], capture_output=True, text=True,
                          check=True).stdout
    assert "dpc.relu" in text and "dpc.neg" not in text and "dpc.select" not in text, text
    x = np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_array_equal(interpret(path, {"x": x})["y"], np.maximum(x, 0))


def test_if_known_at_run_time_selects_between_both_branches(tmp_path):
    path = str(tmp_path / "if.onnx")
    _if_model(path, [])
    x = np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5)
    for cond, expected in ((True, np.maximum(x, 0)), (False, -x)):
        got = interpret(path, {"x": x, "cond": np.array(cond)})
        np.testing.assert_array_equal(got["y"], expected)


def test_if_with_branches_of_two_shapes_needs_its_condition_at_import_time(tmp_path):
    path = str(tmp_path / "if.onnx")
    _if_model(path, [], transposed_else=True)
    assert ("node 'branch' (If): its branches give output 0 as 'tensor<2x5xf32>' and "
            "'tensor<5x2xf32>'; with a condition known only at run time dpc computes both "
            "and selects, which needs one type") in _refused(path)
