"""dpc.models: exports are training graphs, deterministic, and self-consistent."""

import collections
import copy
import json
import os

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import numpy_helper

from dpc import models, npy_name

NAMES = sorted(models.MODELS)


def _load(outdir, name):
    return onnx.load(os.path.join(outdir, name + ".onnx"))


def _arrays(outdir, name, sub, values):
    return {v["name"]: np.load(os.path.join(outdir, "%s.%s" % (name, sub),
                                            npy_name(v["name"])))
            for v in values}


@pytest.mark.parametrize("name", NAMES)
def test_layout_and_metadata(exported, name):
    outdir, meta = exported[name]
    with open(os.path.join(outdir, name + ".json")) as f:
        assert json.load(f) == meta
    m = _load(outdir, name)
    onnx.checker.check_model(m)
    assert [o.version for o in m.opset_import] == [models.OPSET]
    inits = {i.name for i in m.graph.initializer}
    assert [v["name"] for v in meta["inputs"]] == \
        [i.name for i in m.graph.input if i.name not in inits]
    assert [v["name"] for v in meta["outputs"]] == [o.name for o in m.graph.output]
    model = models.build(name).model
    assert meta["param_count"] == sum(p.numel() for p in model.parameters())
    assert sum(numpy_helper.to_array(i).size for i in m.graph.initializer
               if i.name in meta["params"]) == meta["param_count"]
    for kind, sub in (("inputs", "inputs"), ("outputs", "ref")):
        for v, a in zip(meta[kind], _arrays(outdir, name, sub, meta[kind]).values()):
            assert (list(a.shape), str(a.dtype)) == (v["shape"], v["dtype"])


@pytest.mark.parametrize("name", NAMES)
def test_initializers_hold_initial_state(exported, name):
    # Tracing a training-mode forward updates BatchNorm running stats; the
    # file must still hold the state before the step.
    outdir, meta = exported[name]
    state = models.build(name).model.state_dict()
    inits = {i.name: numpy_helper.to_array(i) for i in _load(outdir, name).graph.initializer}
    assert set(meta["params"]) <= set(inits)
    for k, v in inits.items():
        np.testing.assert_array_equal(v, state[k].numpy(), err_msg=k)


def test_training_mode_ops(exported):
    """The properties of PyTorch's exports that ARCHITECTURE.md section 6 states."""
    ops = {n: collections.Counter(x.op_type for x in _load(exported[n][0], n).graph.node)
           for n in NAMES}
    for n in NAMES:
        assert ops[n]["SoftmaxCrossEntropyLoss"] == 1, n
    bns = [x for x in _load(exported["resnet18"][0], "resnet18").graph.node
           if x.op_type == "BatchNormalization"]
    assert len(bns) == 20
    for bn in bns:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in bn.attribute}
        assert attrs["training_mode"] == 1 and len(bn.output) == 3
    assert ops["transformer"]["Dropout"] == 6
    assert ops["transformer"]["LayerNormalization"] == 4
    for op in ("Trilu", "Not", "Where", "Erf", "Split", "LayerNormalization"):
        assert ops["gpt"][op] > 0, op


def test_deterministic(tmp_path):
    a = models.export("mlp", str(tmp_path / "a"), seed=3)
    models.export("mlp", str(tmp_path / "b"), seed=3)
    models.export("mlp", str(tmp_path / "c"), seed=4)
    for sub, values in (("inputs", a["inputs"]), ("ref", a["outputs"])):
        x = _arrays(str(tmp_path / "a"), "mlp", sub, values)
        y = _arrays(str(tmp_path / "b"), "mlp", sub, values)
        z = _arrays(str(tmp_path / "c"), "mlp", sub, values)
        for k in x:
            np.testing.assert_array_equal(x[k], y[k])
            assert not np.array_equal(x[k], z[k])


@pytest.mark.parametrize("name", NAMES)
def test_reference_is_consistent(exported, name):
    outdir, meta = exported[name]
    inputs = _arrays(outdir, name, "inputs", meta["inputs"])
    ref = _arrays(outdir, name, "ref", meta["outputs"])
    # The loss is the mean cross-entropy of the logits.
    logits = torch.from_numpy(ref["logits"])
    target = torch.from_numpy(inputs["target"])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
    np.testing.assert_allclose(ref["loss"], loss.numpy(), rtol=1e-6)
    # fp32 is close to fp64: a badly conditioned model (BatchNorm over a
    # handful of values) would make every fp32 comparison flaky.
    spec = models.build(name)
    model = copy.deepcopy(spec.model).double().train()
    with torch.no_grad():
        outs = model(*[t.double() if t.is_floating_point() else t
                       for t in spec.inputs.values()])
    for n, t in zip(spec.outputs, outs):
        np.testing.assert_allclose(ref[n], t.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)


def test_cli(tmp_path):
    assert models.main(["gpt", str(tmp_path), "--seed", "1"]) == 0
    assert os.path.exists(tmp_path / "gpt.onnx")
    assert os.path.exists(tmp_path / "gpt.ref" / "loss.npy")
