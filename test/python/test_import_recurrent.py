"""ONNX LSTM and GRU nodes dpc does not implement, or that are malformed,
are refused naming the node and what is wrong (the node tests and the
nn.LSTM / nn.GRU models in test_importer_models.py cover what runs)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dpc import tools

T, B, I, H = 3, 2, 4, 5


def _lstm_model(path, attrs=None, extra=None, x_shape=(T, B, I), constants=()):
    """An LSTM node named 'rnn' with W and R as initializers; `extra` maps
    optional input positions (3: B, 4: sequence_lens, 5: initial_h,
    6: initial_c, 7: P) to arrays, initializers or, for the positions in
    `constants`, Constant nodes."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((1, 4 * H, I)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal((1, 4 * H, H)).astype(np.float32), "R")]
    names, nodes = ["x", "W", "R"], []
    for position in range(3, 8):
        if extra and position in extra:
            name = "in%d" % position
            tensor = numpy_helper.from_array(extra[position], name)
            if position in constants:
                nodes.append(helper.make_node("Constant", [], [name], value=tensor))
            else:
                inits.append(tensor)
            names.append(name)
        else:
            names.append("")
    while names[-1] == "":
        names.pop()
    node = helper.make_node("LSTM", names, ["y"], name="rnn", hidden_size=H,
                            **(attrs or {}))
    graph = helper.make_graph(nodes + [node], "lstm",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)


@pytest.mark.parametrize("attrs,extra,message", [
    ({"activations": ["Sigmoid", "Relu", "Tanh"]}, None,
     "activation 'Relu' is not supported (only the default ones)"),
    ({"clip": 3.0}, None, "cell clipping ('clip') is not supported"),
    ({"input_forget": 1}, None,
     "coupled input and forget gates ('input_forget') are not supported"),
    (None, {7: np.ones((1, 3 * H), np.float32)},
     "peephole connections (input 'P') are not supported"),
    (None, {7: np.zeros((1, 3 * H), np.float32)},
     "peephole connections (input 'P') are not supported"),
    (None, {3: np.zeros((1, 4 * H), np.float32)}, "B has shape"),
    (None, {5: np.zeros((1, B + 1, H), np.float32)}, "initial_h has shape"),
    (None, {4: np.array([T, T, T], np.int32)}, "sequence_lens has shape"),
])
def test_unsupported_or_malformed_lstm_is_refused(tmp_path, attrs, extra, message):
    path = str(tmp_path / "lstm.onnx")
    _lstm_model(path, attrs, extra)
    out = tmp_path / "out.mlir"
    r = tools.run("dpc-opt", [path, "-o", str(out)], check=False)
    assert r.returncode == 1
    assert message in r.stderr, r.stderr
    assert "node 'rnn' (LSTM)" in r.stderr or "node name: rnn" in r.stderr, r.stderr
    assert not out.exists()


def test_zero_peepholes_and_full_lengths_are_accepted(tmp_path):
    """What exporters write when they fill every input: constant peepholes
    of zeros and sequence lengths of T fold away. (Peepholes stored as an
    initializer are a parameter, which training would move: refused.)"""
    path = str(tmp_path / "lstm.onnx")
    _lstm_model(path, None, {4: np.full(B, T, np.int32),
                             7: np.zeros((1, 3 * H), np.float32)}, constants=(4, 7))
    text = tools.run("dpc-opt", [path]).stdout
    assert "dpc.lstm" in text and "lengths" not in text
