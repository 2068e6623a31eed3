"""Summarizes ONNX files: opsets, graph inputs/outputs, op types with counts.

Usage: python3 -m dpc.onnx_info [--json] MODEL.onnx...
"""

import argparse
import collections
import json
import os
import sys

import onnx


def _value(v: onnx.ValueInfoProto) -> dict:
    t = v.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in t.shape.dim]
    return {"name": v.name,
            "dtype": onnx.TensorProto.DataType.Name(t.elem_type).lower(),
            "shape": dims}


def op_counts(graph: onnx.GraphProto) -> collections.Counter:
    """Op types of `graph` and of every subgraph (If/Loop bodies)."""
    counts = collections.Counter()
    for node in graph.node:
        counts[node.op_type] += 1
        for attr in node.attribute:
            for g in [attr.g] if attr.HasField("g") else list(attr.graphs):
                counts.update(op_counts(g))
    return counts


def summarize(path: str) -> dict:
    # Weights are not needed and npm models can be large.
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    inits = {i.name for i in g.initializer}
    return {
        "file": os.path.basename(path),
        "bytes": os.path.getsize(path),
        "ir_version": m.ir_version,
        "opsets": {o.domain or "ai.onnx": o.version for o in m.opset_import},
        "producer": ("%s %s" % (m.producer_name, m.producer_version)).strip(),
        "inputs": [_value(v) for v in g.input if v.name not in inits],
        "outputs": [_value(v) for v in g.output],
        "initializers": len(g.initializer),
        "nodes": len(g.node),
        "ops": dict(sorted(op_counts(g).items())),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("models", nargs="+")
    args = p.parse_args(argv)
    infos = [summarize(m) for m in args.models]
    if args.json:
        json.dump(infos, sys.stdout, indent=1)
        print()
        return 0
    for i in infos:
        print("%s: %d bytes, opsets %s, %d nodes, %d initializers" % (
            i["file"], i["bytes"], i["opsets"], i["nodes"], i["initializers"]))
        for kind in ("inputs", "outputs"):
            print("  %s: %s" % (kind, ", ".join(
                "%s %s%s" % (v["name"], v["dtype"], v["shape"]) for v in i[kind])))
        print("  ops: " + ", ".join("%s %d" % kv for kv in i["ops"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
