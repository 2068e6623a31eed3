"""Runs dpc IR under the reference interpreter (`dpc-run --interpret`).

    outputs = interpret("model.mlir", {"x": x, "fc.weight": w})

passes the arrays in one .npz, runs dpc-run, and returns every result by its
name (its `dpc.output` / `dpc.state` attribute, or `resultN`). A failure
raises InterpreterError with dpc-run's message.
"""

import os
import subprocess
import tempfile
import zipfile
from typing import Dict, Mapping, Optional, Sequence

import numpy as np

from dpc import tensor_name

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class InterpreterError(RuntimeError):
    """dpc-run failed; the message is its stderr."""


def dpc_run() -> str:
    """Path of dpc-run in $DPC_BUILD_DIR (else build/)."""
    build = os.environ.get("DPC_BUILD_DIR", os.path.join(_ROOT, "build"))
    path = os.path.join(build, "bin", "dpc-run")
    if not os.path.exists(path):
        raise FileNotFoundError("dpc-run is not built at %s; run `make build`" % path)
    return path


def _write_npz(path: str, arrays: Mapping[str, np.ndarray], compressed: bool) -> None:
    """np.savez, by hand: np.savez(path, **arrays) would take an array named
    `like` (an ONNX input name) as its own keyword and drop it."""
    mode = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", mode) as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=array.nbytes >= 1 << 31) as f:
                np.lib.format.write_array(f, np.asanyarray(array), allow_pickle=False)


def interpret(mlir: str, inputs: Mapping[str, np.ndarray], function: Optional[str] = None,
              precision: str = "fp32", extra_args: Sequence[str] = (),
              compressed: bool = False) -> Dict[str, np.ndarray]:
    """Runs `function` of the file `mlir` on `inputs`; returns its results."""
    with tempfile.TemporaryDirectory(prefix="dpc-interpret-") as tmp:
        npz = os.path.join(tmp, "inputs.npz")
        _write_npz(npz, inputs, compressed)
        outdir = os.path.join(tmp, "out")
        command = [dpc_run(), "--interpret", mlir, "--inputs-npz", npz,
                   "--precision", precision, "--output-dir", outdir, *extra_args]
        if function:
            command += ["--function", function]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise InterpreterError(result.stderr.strip())
        return {tensor_name(f): np.load(os.path.join(outdir, f))
                for f in sorted(os.listdir(outdir))}
