"""The fuzz regression inputs (test/Fuzz/Inputs) through the tools a user
runs: each is read, or refused with one error that names the file, and
exit status 1; none crashes, hangs or writes an output."""

import glob
import os
import subprocess

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BIN = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")), "bin")
DPC_OPT = os.path.join(BIN, "dpc-opt")
INPUTS = os.path.join(ROOT, "test", "Fuzz", "Inputs")
# The regression inputs a tool reads without complaint (a valid model).
VALID = {"mlp.mlir", "h100-sxm.json", "ir3-initializer-not-an-input.onnx",
         "splat-of-enormous-type.mlir"}


def inputs(kind):
    return sorted(glob.glob(os.path.join(INPUTS, kind, "*")))


def check(result, path, output):
    assert result.returncode in (0, 1), result.stderr[-2000:]
    name = os.path.basename(path)
    if name in VALID:
        assert result.returncode == 0, result.stderr[-2000:]
        return
    assert result.returncode == 1, "accepted: " + name
    assert not os.path.exists(output), "wrote an output for " + name
    assert "error" in result.stderr and name in result.stderr, result.stderr[-2000:]


@pytest.mark.parametrize("path", inputs("onnx-import"), ids=os.path.basename)
def test_onnx(tmp_path, path):
    out = tmp_path / "out.mlir"
    r = subprocess.run([DPC_OPT, path, "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    check(r, path, out)


@pytest.mark.parametrize("path", inputs("ir-train"), ids=os.path.basename)
def test_ir(tmp_path, path):
    out = tmp_path / "out.mlir"
    r = subprocess.run([DPC_OPT, path, "--train", "--optimizer=adamw", "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    check(r, path, out)


@pytest.mark.parametrize("path", inputs("cluster-file"), ids=os.path.basename)
def test_cluster(tmp_path, path):
    out = tmp_path / "out.mlir"
    r = subprocess.run([DPC_OPT, os.path.join(INPUTS, "ir-train", "mlp.mlir"), "--train",
                        "--mesh=2", "--cluster=" + path, "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    check(r, path, out)
