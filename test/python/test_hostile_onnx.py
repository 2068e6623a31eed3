"""Hostile ONNX files and flags get a clear error, never a crash, a hang or
a read outside the model's folder: external data is checked (location
inside the folder after resolving links, offset and length integers within
the file) and tensor sizes against the data they carry, before anything is
allocated; mesh sizes are checked as they multiply."""

import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BIN = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")), "bin")
DPC_OPT = os.path.join(BIN, "dpc-opt")


def add_model(path, weight):
    """y = x + w for a [4] weight tensor `weight`."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add0")],
                              "g", [x], [y], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def external(location, **fields):
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    w.data_location = TensorProto.EXTERNAL
    for key, value in [("location", location), *fields.items()]:
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return w


def run(path, *flags):
    return subprocess.run([DPC_OPT, str(path), *flags, "-o", os.devnull],
                          capture_output=True, text=True, timeout=60)


def test_external_data_inside_the_folder_is_read(tmp_path):
    np.arange(4, dtype=np.float32).tofile(tmp_path / "w.bin")
    r = run(add_model(tmp_path / "m.onnx", external("w.bin")))
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("location, message", [
    ("/etc/hostname", "has external data at the absolute path '/etc/hostname'"),
    ("../../../../../../etc/hostname", "is outside the model's folder"),
    ("link.bin", "is outside the model's folder"),
    ("missing.bin", "cannot be opened"),
])
def test_external_data_outside_the_folder_is_refused(tmp_path, location, message):
    secret = tmp_path / "secret.bin"
    np.zeros(4, np.float32).tofile(secret)
    folder = tmp_path / "model"
    folder.mkdir()
    os.symlink(secret, folder / "link.bin")  # a link that leaves the folder
    r = run(add_model(folder / "m.onnx", external(location)))
    assert r.returncode != 0
    assert message in r.stderr and "tensor 'w'" in r.stderr, r.stderr


@pytest.mark.parametrize("fields, message", [
    ({"offset": "twelve"}, "offset 'twelve' is not a non-negative integer"),
    ({"length": "-1"}, "length '-1' is not a non-negative integer"),
    ({"offset": "99999999999999999999999"}, "is not a non-negative integer"),
    ({"offset": "8"}, "is too short for tensor 'w' (needs 16 bytes at offset 8)"),
    ({"length": "8"}, "has 8 bytes, its shape needs 16"),
])
def test_bad_external_data_fields(tmp_path, fields, message):
    np.zeros(4, np.float32).tofile(tmp_path / "w.bin")
    r = run(add_model(tmp_path / "m.onnx", external("w.bin", **fields)))
    assert r.returncode != 0
    assert message in r.stderr, r.stderr


def test_a_size_the_data_does_not_have_is_refused_before_allocating(tmp_path):
    """2^40 elements claimed with 16 bytes of data, and dimensions whose
    product overflows: clear errors, no allocation."""
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40])
    huge.raw_data = b"\0" * 16
    r = run(add_model(tmp_path / "huge.onnx", huge))
    assert r.returncode == 1
    assert "tensor 'w' has 16 bytes of raw data, its shape needs 4398046511104" in r.stderr
    wrap = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 33, 1 << 33])
    wrap.raw_data = b"\0" * 16
    r = run(add_model(tmp_path / "wrap.onnx", wrap))
    assert r.returncode == 1
    assert "tensor 'w' has more elements than dpc can hold" in r.stderr, r.stderr
    typed = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40])
    typed.float_data.extend([1.0] * 4)
    r = run(add_model(tmp_path / "typed.onnx", typed))
    assert r.returncode == 1
    assert "tensor 'w' has 4 values, its shape needs 1099511627776" in r.stderr, r.stderr


@pytest.mark.parametrize("mesh", ["3x6148914691236517206", "1000000x1000000",
                                  "9223372036854775807", "2048x1024"])
def test_a_mesh_past_the_device_limit_is_refused_at_once(tmp_path, mesh):
    np.zeros(4, np.float32).tofile(tmp_path / "w.bin")
    model = add_model(tmp_path / "m.onnx", external("w.bin"))
    r = run(model, "--mesh=" + mesh, "--plan-only")
    assert r.returncode != 0
    assert "invalid mesh '%s': more than 1048576 devices" % mesh in r.stderr, r.stderr


@pytest.mark.parametrize("dims, message", [
    ([-3], "input 'x': dimension 0 is -3; sizes must not be negative"),
    ([1 << 30, 1 << 30], "input 'x' has more than 2^48 elements"),
])
def test_an_input_shape_dpc_cannot_hold_is_refused(tmp_path, dims, message):
    """Such a shape once became tensor<-3xf32>, which dpc could not read
    back."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "m.onnx")
    r = run(tmp_path / "m.onnx")
    assert r.returncode == 1
    assert message in r.stderr, r.stderr


def relu_graph(path, nodes, inputs=("x",), outputs=("y",)):
    model = helper.make_model(
        helper.make_graph(nodes, "g",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4])
                           for n in inputs],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4])
                           for n in outputs]),
        opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("nodes,outputs,message", [
    ([helper.make_node("Relu", ["ghost"], ["y"], name="relu0")], ["y"],
     "node 'relu0' (Relu) reads 'ghost', which no graph input, initializer or node produces"),
    ([helper.make_node("Relu", ["t"], ["y"], name="second"),
      helper.make_node("Relu", ["x"], ["t"], name="first")], ["y"],
     "node 'second' (Relu) reads 't' before node 'first' (Relu) produces it"),
    ([helper.make_node("Relu", ["x"], ["y"], name="a"),
      helper.make_node("Relu", ["x"], ["y"], name="b")], ["y"],
     "node 'b' (Relu) produces 'y', which node 'a' (Relu) already produces"),
    ([helper.make_node("Relu", ["x"], ["x"], name="a")], ["x"],
     "node 'a' (Relu) produces 'x', which a graph input or initializer already produces"),
    ([helper.make_node("Relu", ["x"], ["y"], name="a")], ["y", "z"],
     "graph output 'z' is produced by no graph input, initializer or node"),
])
def test_a_graph_onnx_would_reject_is_refused_before_shape_inference(
        tmp_path, nodes, outputs, message):
    """ONNX's shape inference trusts the graph's structure (it crashed on
    these before they were checked)."""
    path = relu_graph(tmp_path / "m.onnx", nodes, outputs=outputs)
    r = run(path)
    assert r.returncode == 1, r.stderr
    assert "m.onnx: error: " + message in r.stderr


def test_a_model_that_crashes_onnx_shape_inference_is_refused_naming_the_node(tmp_path):
    """ONNX's LayerNormalization inference reads out of bounds for an axis
    past the input's rank; it runs in a child process, and dpc's own check
    names the node."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [4], [1.0] * 4)
    node = helper.make_node("LayerNormalization", ["x", "scale"], ["y"], name="ln0",
                            axis=-16385)
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [scale]),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    r = run(path)
    assert r.returncode == 1, r.stderr
    assert r.stderr == "%s: error: node 'ln0' (LayerNormalization): axis -16385 is out of " \
                       "range for rank 2\n" % path


@pytest.mark.parametrize("listed", [True, False])
def test_an_ir3_initializer_is_a_parameter_listed_or_not(tmp_path, listed):
    """IR 3 lists every initializer among the graph's inputs; a file that
    does not (shape inference crashed on it once) is read as IR 4 reads it:
    the initializer is a parameter, not an input the caller must feed."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    weight = helper.make_tensor("w", TensorProto.FLOAT, [4, 3], [0.5] * 12)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                              "g", [x, w] if listed else [x], [y], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 3
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    r = subprocess.run([DPC_OPT, str(path), "-o", "-"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert ('%arg1: tensor<4x3xf32> {dpc.param = "w"}' in r.stdout and
            'dpc.input = "w"' not in r.stdout), r.stdout
