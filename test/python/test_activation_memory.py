"""Stored activations: dpc's cost model against what PyTorch's autograd keeps.

For each bundled architecture, at a size where activations dominate the
odd small tensor, the bytes the planner counts as stored for the backward
pass (-test-dpc-stored-activations, one device, the whole batch, fp32) must
be within 10% of the bytes PyTorch eager saves for the same model
(saved-tensor hooks, one count per storage, parameters and the batch left
out). dpc's backends have no fused attention kernel, so the matching
PyTorch figure is plain eager; the GeLU and dropout fusions PyTorch eager
has (a GeLU saves its input, dropout a mask) are ones dpc's IR makes too
(-dpc-recompute-pointwise rebuilds pointwise values; dropout's backward
regenerates its mask from the seed).
"""

import os
import re
import subprocess

import pytest
import torch
import torch.nn as nn

from dpc import models
from dpc.saved_tensors import saved_activation_bytes

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DPC_OPT = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")),
                       "bin", "dpc-opt")


def _mlp():
    net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                        nn.Linear(1024, 10))
    inputs = {"x": torch.randn(128, 784), "target": torch.randint(0, 10, (128,))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


def _transformer():
    net = models.TokenEncoder(vocab=512, d_model=128, nhead=4, layers=2, ff=512)
    inputs = {"tokens": torch.randint(0, 512, (8, 64)),
              "target": torch.randint(0, 512, (8, 64))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


def _gpt():
    net = models.TinyGPT(vocab=512, block=128, d_model=128, nhead=4, layers=2)
    inputs = {"tokens": torch.randint(0, 512, (8, 128)),
              "target": torch.randint(0, 512, (8, 128))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


def _resnet18():
    import torchvision
    net = torchvision.models.resnet18(num_classes=10)
    inputs = {"x": torch.randn(4, 3, 64, 64), "target": torch.randint(0, 10, (4,))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


SPECS = {"mlp": _mlp, "transformer": _transformer, "gpt": _gpt, "resnet18": _resnet18}


def _dpc_stored_bytes(name, spec, tmp_path):
    if not os.path.exists(DPC_OPT):
        pytest.skip("dpc-opt is not built at %s" % DPC_OPT)
    models.export_spec(name, spec, str(tmp_path))
    step = str(tmp_path / (name + ".mlir"))
    subprocess.run([DPC_OPT, str(tmp_path / (name + ".onnx")), "--train",
                    "--optimizer=adamw", "-o", step], check=True)
    out = subprocess.run([DPC_OPT, step, "-test-dpc-stored-activations"],
                         capture_output=True, text=True, check=True).stdout
    return int(re.search(r"dpc.stored_activation_bytes = (\d+)", out).group(1))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_stored_activations_match_pytorch(name, tmp_path):
    torch.manual_seed(0)
    spec = SPECS[name]()
    # On a copy: a training-mode forward moves BatchNorm's statistics.
    import copy
    torch_bytes = saved_activation_bytes(copy.deepcopy(spec.model),
                                         spec.inputs.values())["bytes"]
    dpc_bytes = _dpc_stored_bytes(name, spec, tmp_path)
    assert dpc_bytes == pytest.approx(torch_bytes, rel=0.10), \
        "%s: dpc stores %d bytes, PyTorch %d (%.3fx)" % (
            name, dpc_bytes, torch_bytes, dpc_bytes / torch_bytes)
