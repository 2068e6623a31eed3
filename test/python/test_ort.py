"""dpc.ort: onnxruntime-node agrees with PyTorch and moves tensors exactly."""

import os

import numpy as np
import onnx
import pytest
from onnx import helper

from dpc import models, npy_name, ort


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_matches_torch(exported, ort_modules, name, tmp_path):
    outdir, meta = exported[name]
    ort.run_dirs(os.path.join(outdir, name + ".onnx"),
                 os.path.join(outdir, name + ".inputs"), str(tmp_path),
                 modules=ort_modules)
    for v in meta["outputs"]:
        got = np.load(os.path.join(str(tmp_path), npy_name(v["name"])))
        want = np.load(os.path.join(outdir, name + ".ref", npy_name(v["name"])))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=v["name"])


def test_npy_round_trip(ort_modules, tmp_path):
    # Identity per dtype, with an exporter-style name containing '/', and a
    # scalar: what the runner must carry bit-exactly.
    values = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
        "f64": np.array([np.pi, -0.0, np.inf]),
        "f16": np.array([[1.5, -2.25]], dtype=np.float16),
        "i64": np.array([-(2 ** 62), 3, -100], dtype=np.int64),
        "i32": np.array([[7]], dtype=np.int32),
        "u8": np.array([0, 255], dtype=np.uint8),
        "b": np.array([[True, False], [False, True]]),
        "/net/s": np.array(2.5, dtype=np.float32),
    }
    type_of = {np.dtype(k): v for k, v in helper.mapping.NP_TYPE_TO_TENSOR_TYPE.items()}
    nodes, ins, outs = [], [], []
    for i, (n, a) in enumerate(values.items()):
        t = type_of[a.dtype]
        ins.append(helper.make_tensor_value_info(n, t, a.shape))
        outs.append(helper.make_tensor_value_info("out%d/%s" % (i, n), t, a.shape))
        nodes.append(helper.make_node("Identity", [n], [outs[-1].name]))
    model = helper.make_model(helper.make_graph(nodes, "id", ins, outs),
                              opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "id.onnx")
    onnx.save(model, path)
    got = ort.run(path, values, modules=ort_modules)
    assert sorted(got) == sorted(o.name for o in outs)
    for o, (n, a) in zip(outs, values.items()):
        assert got[o.name].dtype == a.dtype and got[o.name].shape == a.shape, n
        np.testing.assert_array_equal(got[o.name], a)
