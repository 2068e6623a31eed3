"""onnxruntime as a reference executor, through npm's onnxruntime-node.

There is no onnxruntime for Debian's Python and no PyPI here, but the npm
package ships the CPU library (bin/napi-v6/linux/x64/libonnxruntime.so.1) in
its tarball; only its optional postinstall downloads (CUDA) need the network,
so it installs with scripts off.

  python3 -m dpc.ort MODEL.onnx INPUT_DIR OUTPUT_DIR

reads INPUT_DIR/<input>.npy and writes OUTPUT_DIR/<output>.npy (see
dpc.npy_name for how tensor names become file names).
"""

import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, Optional

import numpy as np

from . import npm, npy_name, tensor_name

VERSION = "1.30.0"
_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "ort_reference.js")


def install(root: Optional[str] = None) -> str:
    """Installs onnxruntime-node once; returns its node_modules directory."""
    root = root or os.path.join(npm.cache_dir(), "onnxruntime-node-" + VERSION)
    modules = os.path.join(root, "node_modules")
    pkg = os.path.join(modules, "onnxruntime-node", "package.json")
    if os.path.exists(pkg):
        with open(pkg) as f:
            if json.load(f)["version"] == VERSION:
                return modules
    os.makedirs(root, exist_ok=True)
    # Our own package.json, so npm does not walk up into an enclosing project.
    with open(os.path.join(root, "package.json"), "w") as f:
        json.dump({"name": "dpc-ort", "private": True}, f)
    npm.npm(["install", "onnxruntime-node@" + VERSION], cwd=root,
            env={"ONNXRUNTIME_NODE_INSTALL": "skip"})
    return modules


def run_dirs(model: str, input_dir: str, output_dir: str, threads: int = 1,
             modules: Optional[str] = None) -> None:
    """Runs `model` on INPUT_DIR/*.npy, writing every output to output_dir."""
    env = dict(os.environ, NODE_PATH=modules or install())
    r = subprocess.run([npm.tool("node"), _SCRIPT, model, input_dir, output_dir,
                        "--threads", str(threads)],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("onnxruntime-node failed on %s:\n%s" % (model, r.stderr))


def run(model: str, inputs: Dict[str, np.ndarray], **kwargs) -> Dict[str, np.ndarray]:
    """Runs `model` on in-memory inputs; returns {output name: array}."""
    with tempfile.TemporaryDirectory(prefix="dpc-ort-") as tmp:
        ind, outd = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(ind)
        for name, a in inputs.items():
            # C order: the JS reader rejects fortran_order files. (Not
            # np.ascontiguousarray, which turns a 0-d array into shape (1,).)
            np.save(os.path.join(ind, npy_name(name)), np.asarray(a, order="C"))
        run_dirs(model, ind, outd, **kwargs)
        return {tensor_name(f): np.load(os.path.join(outd, f))
                for f in sorted(os.listdir(outd))}


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("input_dir")
    p.add_argument("output_dir")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    run_dirs(args.model, args.input_dir, args.output_dir, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
