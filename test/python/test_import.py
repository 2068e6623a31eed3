"""The importer on real exports: every weight becomes a parameter, state
stays state, and the parameter count equals PyTorch's."""

import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from dpc import models, tools
from dpc.fetch_npm_models import MODELS as NPM_MODELS


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_parameter_count_equals_pytorch(exported, name):
    outdir, meta = exported[name]
    ir = tools.run("dpc-opt", [os.path.join(outdir, name + ".onnx")]).stdout
    roles = tools.signature(ir)
    assert sum(tools.numel(s) for s in roles["param"].values()) == meta["param_count"]
    assert sorted(roles["param"]) == sorted(meta["params"])
    assert sorted(roles["input"]) == sorted(v["name"] for v in meta["inputs"])
    # Shape chains are folded: no value of the IR has a dynamic size.
    assert "?" not in ir


def test_batchnorm_statistics_are_state(exported):
    outdir, _ = exported["resnet18"]
    ir = tools.run("dpc-opt", [os.path.join(outdir, "resnet18.onnx")]).stdout
    state = tools.signature(ir)["state"]
    assert len(state) == 40
    assert all(n.endswith(("running_mean", "running_var")) for n in state)
    assert ir.count("training}") == 20  # every batch_norm in training mode


def _float_constant_elements(model):
    """Elements of float Constant-node tensors with more than one element,
    except those read only as Resize's scales (attributes, not weights)."""
    scales = {i for n in model.graph.node if n.op_type in ("Resize", "Upsample")
              for i in n.input[1:]}
    data = {i for n in model.graph.node if n.op_type not in ("Resize", "Upsample")
            for i in n.input} | {n.input[0] for n in model.graph.node
                                 if n.op_type in ("Resize", "Upsample")}
    total = 0
    for node in model.graph.node:
        if node.op_type != "Constant" or (node.output[0] in scales and
                                          node.output[0] not in data):
            continue
        for attr in node.attribute:
            if attr.name == "value":
                array = numpy_helper.to_array(attr.t)
                if array.dtype.kind == "f" and array.size > 1:
                    total += array.size
    return total


@pytest.mark.parametrize("name", [n for n in sorted(NPM_MODELS)])
def test_npm_models_import_every_weight(npm_models, name):
    path = npm_models[name]
    x = np.load(os.path.join(os.path.dirname(path), name + ".inputs",
                             os.listdir(os.path.join(os.path.dirname(path),
                                                     name + ".inputs"))[0]))
    input_name = onnx.load(path, load_external_data=False).graph.input[0].name
    shape = "x".join(str(d) for d in x.shape)
    ir = tools.run("dpc-opt", [path, "--input-shape", "%s=%s" % (input_name, shape)]).stdout
    roles = tools.signature(ir)
    model = onnx.load(path)
    weights = sum(numpy_helper.to_array(i).size for i in model.graph.initializer
                  if numpy_helper.to_array(i).dtype.kind == "f")
    weights += _float_constant_elements(model)
    imported = sum(tools.numel(s) for r in ("param", "state") for s in roles[r].values())
    assert imported == weights
