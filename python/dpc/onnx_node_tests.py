"""ONNX's own backend tests, from Debian's libonnx-testdata, as .npy cases.

Each test is DIR/model.onnx plus DIR/test_data_set_0/{input,output}_<i>.pb
(serialized TensorProtos, matched to graph inputs/outputs by position).
"real" holds only download URLs; "node" (one op per model) is the useful set.

  python3 -m dpc.onnx_node_tests OUTDIR [--kind node] [--filter REGEX]

writes OUTDIR/<test>.onnx, OUTDIR/<test>.inputs/*.npy, OUTDIR/<test>.ref/*.npy,
the layout of dpc.models, for every test whose inputs and outputs are tensors.
"""

import argparse
import glob
import os
import re
import shutil
import sys
from typing import Dict, List, NamedTuple, Optional

import numpy as np
import onnx
from onnx import numpy_helper

from . import npy_name

ROOT = "/usr/share/libonnx-testdata/data"


class Case(NamedTuple):
    name: str
    model: str
    inputs: Dict[str, np.ndarray]
    outputs: Dict[str, np.ndarray]


def list_tests(kind: str = "node", pattern: Optional[str] = None,
               root: str = ROOT) -> List[str]:
    """Test directories of `kind` whose name matches `pattern` (re.search)."""
    dirs = sorted(glob.glob(os.path.join(root, kind, "test_*", "model.onnx")))
    dirs = [os.path.dirname(d) for d in dirs]
    return [d for d in dirs if not pattern or re.search(pattern, os.path.basename(d))]


def _values(graph_values, files) -> Optional[Dict[str, np.ndarray]]:
    out = {}
    for v, f in zip(graph_values, files):
        if not v.type.HasField("tensor_type"):
            return None  # sequence/optional values are stored as other protos
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        out[v.name] = numpy_helper.to_array(t)
    return out


def load(test_dir: str) -> Optional[Case]:
    """The test's first data set; None if it has non-tensor inputs or outputs."""
    model_path = os.path.join(test_dir, "model.onnx")
    graph = onnx.load(model_path).graph
    inits = {i.name for i in graph.initializer}
    data = os.path.join(test_dir, "test_data_set_0")
    files = lambda kind: sorted(glob.glob(os.path.join(data, kind + "_*.pb")),
                                key=lambda f: int(re.findall(r"(\d+)\.pb$", f)[0]))
    # Inputs that have an initializer are optional overrides with no .pb file.
    graph_ins = [v for v in graph.input if v.name not in inits]
    if (len(graph_ins), len(graph.output)) != (len(files("input")), len(files("output"))):
        raise ValueError("%s: data files do not match the graph's values" % test_dir)
    ins = _values(graph_ins, files("input"))
    outs = _values(graph.output, files("output"))
    if ins is None or outs is None:
        return None
    return Case(os.path.basename(test_dir), model_path, ins, outs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir")
    p.add_argument("--kind", default="node",
                   choices=["node", "pytorch-converted", "pytorch-operator", "simple"])
    p.add_argument("--filter", default=None, help="regular expression on test names")
    args = p.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    written = skipped = 0
    for d in list_tests(args.kind, args.filter):
        case = load(d)
        if case is None:
            skipped += 1
            continue
        base = os.path.join(args.outdir, case.name)
        shutil.copyfile(case.model, base + ".onnx")
        for sub, arrays in (("inputs", case.inputs), ("ref", case.outputs)):
            os.makedirs(base + "." + sub, exist_ok=True)
            for n, a in arrays.items():
                np.save(os.path.join(base + "." + sub, npy_name(n)), a)
        written += 1
    print("%d tests written to %s, %d skipped (non-tensor values)"
          % (written, args.outdir, skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
