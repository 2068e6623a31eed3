"""Imported models run under the interpreter and match their references.

`dpc-run --interpret MODEL.onnx` imports the model and binds its weights
(and BatchNorm statistics) as the default values of its parameters and
state, so only the graph inputs are passed. PyTorch's outputs are the
reference for dpc's own exports; onnxruntime's for the npm models, which
other exporters wrote.
"""

import os

import numpy as np
import onnx
import pytest

from dpc import fetch_npm_models, models, npy_name
from dpc.interpreter import interpret

RTOL, ATOL = 1e-4, 1e-5


def _load_dir(directory, names):
    return {n: np.load(os.path.join(directory, npy_name(n))) for n in names}


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_exported_model_matches_pytorch(exported, name):
    outdir, meta = exported[name]
    inputs = _load_dir(os.path.join(outdir, name + ".inputs"),
                       [v["name"] for v in meta["inputs"]])
    ref = _load_dir(os.path.join(outdir, name + ".ref"),
                    [v["name"] for v in meta["outputs"]])
    got = interpret(os.path.join(outdir, name + ".onnx"), inputs)
    for output, expected in ref.items():
        assert got[output].shape == expected.shape, output
        np.testing.assert_allclose(got[output], expected, rtol=RTOL, atol=ATOL,
                                   err_msg=output)


def test_resnet18_updates_running_statistics(exported):
    """Training-mode BatchNorm returns its new running statistics as the
    state results; PyTorch's model after the same forward holds them."""
    outdir, meta = exported["resnet18"]
    inputs = _load_dir(os.path.join(outdir, "resnet18.inputs"),
                       [v["name"] for v in meta["inputs"]])
    got = interpret(os.path.join(outdir, "resnet18.onnx"), inputs)
    spec = models.build("resnet18")
    spec.model.train()
    import torch
    with torch.no_grad():
        spec.model(*spec.inputs.values())
    state = spec.model.state_dict()
    stats = [k for k in state if k.endswith(("running_mean", "running_var"))]
    assert len(stats) == 40
    for k in stats:
        np.testing.assert_allclose(got[k], state[k].numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=k)


@pytest.mark.parametrize("name", sorted(fetch_npm_models.MODELS))
def test_npm_model_matches_onnxruntime(npm_models, ort_modules, name):
    dest = fetch_npm_models.default_dir()
    ref_dir = os.path.join(dest, name + ".ref")
    graph = onnx.load(npm_models[name]).graph
    outputs = [o.name for o in graph.output]
    if not all(os.path.exists(os.path.join(ref_dir, npy_name(o))) for o in outputs):
        fetch_npm_models.write_reference(name, dest)
    inputs = fetch_npm_models.inputs(name)
    shapes = ["--input-shape=%s=%s" % (n, "x".join(map(str, a.shape)))
              for n, a in inputs.items()]
    got = interpret(npm_models[name], inputs, extra_args=shapes)
    for output, expected in _load_dir(ref_dir, outputs).items():
        assert got[output].shape == expected.shape, output
        np.testing.assert_allclose(got[output], expected, rtol=RTOL, atol=ATOL,
                                   err_msg=output)
