"""ONNX's own backend tests, from Debian's libonnx-testdata, run through dpc.

Each test is DIR/model.onnx plus DIR/test_data_set_0/{input,output}_<i>.pb
(serialized TensorProtos, matched to graph inputs/outputs by position).
"node" holds one op per model; "pytorch-converted" and "pytorch-operator"
are PyTorch modules and operators as its exporter wrote them (at opset 6, so
dpc reads them through ONNX's version converter); "simple" holds small
hand-made graphs; "real" holds only download URLs. A node test is named by
its folder (test_abs), one of another kind by kind and folder
(pytorch-converted/test_Conv2d).

  python3 -m dpc.onnx_node_tests OUTDIR [--kind KIND] [--filter REGEX]

writes OUTDIR/<test>.onnx, OUTDIR/<test>.inputs/*.npy, OUTDIR/<test>.ref/*.npy,
the layout of dpc.models, for every test whose inputs and outputs are tensors.

  python3 -m dpc.onnx_node_tests --triage [--gaps FILE] [--workdir DIR]

runs every test of every kind through `dpc-run --interpret` (see check()), rewrites
the known-gaps list (default test/python/onnx_node_known_gaps.txt: every
test whose op types the importer supports but that does not pass, with its
reason) and prints the counts and the unsupported op types as Markdown, the
numbers of docs/onnx-node-tests.md. test/python/test_onnx_node_tests.py holds
dpc to that list.
"""

import argparse
import collections
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, Iterable, List, NamedTuple, Optional, Set

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import npy_name, tensor_name, tools

ROOT = "/usr/share/libonnx-testdata/data"
GAPS_FILE = os.path.join(tools.ROOT, "test", "python", "onnx_node_known_gaps.txt")
RTOL, ATOL = 1e-4, 1e-5  # for floats; other element types must match exactly
TIMEOUT_S = 60
KINDS = ("node", "pytorch-converted", "pytorch-operator", "simple")


class Case(NamedTuple):
    name: str
    model: str
    inputs: Dict[str, np.ndarray]
    outputs: Dict[str, np.ndarray]


def list_tests(kind: Optional[str] = None, pattern: Optional[str] = None,
               root: str = ROOT) -> List[str]:
    """Test directories of `kind` (every kind when None) whose name matches
    `pattern` (re.search)."""
    dirs = []
    for k in [kind] if kind else KINDS:
        found = sorted(glob.glob(os.path.join(root, k, "test_*", "model.onnx")))
        dirs += [os.path.dirname(d) for d in found]
    return [d for d in dirs if not pattern or re.search(pattern, test_name(d))]


def test_name(test_dir: str) -> str:
    """test_abs for a node test, KIND/test_X for a test of another kind."""
    kind = os.path.basename(os.path.dirname(test_dir))
    name = os.path.basename(test_dir)
    return name if kind == "node" else kind + "/" + name


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
    return Case(test_name(test_dir), model_path, ins, outs)


def write(case: Case, outdir: str) -> str:
    """Writes `case` in the dpc.models layout; returns OUTDIR/<test>."""
    base = os.path.join(outdir, case.name)
    os.makedirs(os.path.dirname(base), exist_ok=True)
    shutil.copyfile(case.model, base + ".onnx")
    for sub, arrays in (("inputs", case.inputs), ("ref", case.outputs)):
        os.makedirs(base + "." + sub, exist_ok=True)
        for n, a in arrays.items():
            np.save(os.path.join(base + "." + sub, npy_name(n)), a)
    return base


# Op types ----------------------------------------------------------------

def op_types(model_path: str) -> List[str]:
    """Op types of the model's nodes and of the nodes of their subgraphs
    (If, Loop and Scan bodies), all of which the importer checks. Outside
    the default domain the name is 'domain.Op'."""
    names = set()

    def visit(graph):
        for node in graph.node:
            default = node.domain in ("", "ai.onnx")
            names.add(node.op_type if default else node.domain + "." + node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    visit(attr.g)
                for sub in attr.graphs:
                    visit(sub)

    visit(onnx.load(model_path).graph)
    return sorted(names)


_UNSUPPORTED = re.compile(r"'([^']+)' \(node '[^']*', domain '([^']+)'")


def unsupported_op_types(ops: Iterable[str]) -> Set[str]:
    """The op types among `ops` (as op_types() names them) that dpc's
    importer has no converter for.

    Asks the importer rather than reading its sources: dpc-opt, given one
    model with a node of every type, checks support before anything else
    and names every unsupported type in one "unsupported ONNX op" error.
    (The tests that run then fail loudly should dpc-opt itself be broken.)
    """
    nodes, domains = [], set()
    for op in sorted(set(ops)):
        domain, _, op_type = op.rpartition(".")
        nodes.append(helper.make_node(op_type, [], [], domain=domain))
        domains.add(domain)
    opsets = [helper.make_opsetid("", 17)] + [helper.make_opsetid(d, 1)
                                              for d in sorted(domains - {""})]
    model = helper.make_model(helper.make_graph(nodes, "probe", [], []),
                              opset_imports=opsets)
    with tempfile.TemporaryDirectory(prefix="dpc-ops-") as tmp:
        path = os.path.join(tmp, "probe.onnx")
        onnx.save(model, path)
        result = tools.run("dpc-opt", [path, "-o", os.devnull], check=False)
    # With every op type supported the probe fails later, on its empty nodes.
    if result.returncode == 0 or "unsupported ONNX op" not in result.stderr:
        return set()
    return {op if domain == "ai.onnx" else domain + "." + op
            for op, domain in _UNSUPPORTED.findall(result.stderr)}


# Running one test ----------------------------------------------------------

class Result(NamedTuple):
    name: str
    reason: Optional[str]  # None: dpc matches the reference
    command: List[str]     # the dpc-run command line that was run, if any


def _command(base: str, outdir: str) -> List[str]:
    command = [tools.tool("dpc-run"), "--interpret", base + ".onnx"]
    for f in sorted(os.listdir(base + ".inputs")):
        command += ["--input", "%s=%s" % (tensor_name(f), os.path.join(base + ".inputs", f))]
    return command + ["--output-dir", outdir]


def _describe(a: np.ndarray) -> str:
    return "%s%s" % (a.dtype, list(a.shape))


def compare(outputs: Dict[str, np.ndarray], refs: Dict[str, np.ndarray]) -> Optional[str]:
    """Why `outputs` do not match `refs` (first failing output), or None."""
    for name, ref in refs.items():
        if name not in outputs:
            return "missing output '%s' (got %s)" % (name, sorted(outputs))
        out = outputs[name]
        if (out.dtype, out.shape) != (ref.dtype, ref.shape):
            return "output '%s' is %s, expected %s" % (name, _describe(out), _describe(ref))
        if ref.dtype.kind in "fc":
            bad = ~np.isclose(out, ref, rtol=RTOL, atol=ATOL, equal_nan=True)
            if bad.any():
                with np.errstate(invalid="ignore"):  # inf - inf
                    err = np.abs(out[bad].astype(np.complex128) - ref[bad]).max()
                return "mismatch: max abs err %.3g (output '%s')" % (err, name)
        elif not np.array_equal(out, ref):
            return "mismatch: %d of %d elements differ (output '%s')" % (
                np.count_nonzero(out != ref), ref.size, name)
    return None


def check(test_dir: str, workdir: str) -> Result:
    """Runs one test: writes it under `workdir`, runs

      dpc-run --interpret W/<test>.onnx --input NAME=W/<test>.inputs/NAME.npy ...
              --output-dir W/<test>.out

    and compares every output with the reference. A failure's reason is the
    first line of dpc-run's error or the mismatch, with `workdir` taken out so
    that the known-gaps file does not change from run to run."""
    name = test_name(test_dir)
    case = load(test_dir)
    if case is None:
        return Result(name, "sequence or optional inputs/outputs (this harness "
                      "passes tensors only)", [])
    base = write(case, workdir)
    outdir = base + ".out"
    shutil.rmtree(outdir, ignore_errors=True)
    command = _command(base, outdir)
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Result(name, "dpc-run timed out after %d s" % TIMEOUT_S, command)
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines() or ["dpc-run exited %d" % run.returncode]
        return Result(name, lines[0].replace(workdir + os.sep, ""), command)
    outputs = {tensor_name(f): np.load(os.path.join(outdir, f))
               for f in os.listdir(outdir)}
    return Result(name, compare(outputs, case.outputs), command)


def shell(command: List[str]) -> str:
    """`command` as one line to paste into a shell."""
    return " ".join(shlex.quote(c) for c in command)


# The known-gaps list -------------------------------------------------------

_GAPS_HEADER = """\
# ONNX backend tests (libonnx-testdata) whose op types dpc's importer supports
# but that do not pass: one line per test, its name and why it fails.
# test/python/test_onnx_node_tests.py expects each of these to fail and every
# other supported test to pass. Regenerate (see docs/onnx-node-tests.md):
#   PYTHONPATH=python /usr/bin/python3 -m dpc.onnx_node_tests --triage
"""


def read_gaps(path: str = GAPS_FILE) -> Dict[str, str]:
    """{test name: reason} from a known-gaps file."""
    gaps = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            if name in gaps:
                raise ValueError("%s: %s is listed twice" % (path, name))
            gaps[name] = reason.strip()
    return gaps


def write_gaps(gaps: Dict[str, str], path: str = GAPS_FILE) -> None:
    width = max((len(n) for n in gaps), default=0)
    with open(path, "w") as f:
        f.write(_GAPS_HEADER + "\n")
        for name in sorted(gaps):
            f.write("%-*s  %s\n" % (width, name, gaps[name]))


def summary_line(passed: int, gaps: int, unsupported: int, failed: int = 0,
                 label: str = "onnx backend tests") -> str:
    """The count line that pytest and --triage print."""
    total = passed + gaps + unsupported + failed
    line = "%s: %d passed, %d known gaps, %d unsupported op types (of %d)" % (
        label, passed, gaps, unsupported, total)
    return line + (", %d failed" % failed if failed else "")


# Triage --------------------------------------------------------------------

def triage(workdir: str, gaps_path: str = GAPS_FILE) -> str:
    """Runs every test, rewrites `gaps_path`, returns the Markdown report."""
    tests = list_tests()
    ops = {d: op_types(os.path.join(d, "model.onnx")) for d in tests}
    missing = unsupported_op_types(op for o in ops.values() for op in o)
    blocked = collections.Counter()
    gaps = {}
    counts = {kind: collections.Counter() for kind in KINDS}  # per outcome
    for d in tests:
        kind = os.path.basename(os.path.dirname(d))
        lacking = [o for o in ops[d] if o in missing]
        if lacking:
            counts[kind]["unsupported"] += 1
            blocked.update(lacking)
            continue
        result = check(d, workdir)
        if result.reason is None:
            counts[kind]["passed"] += 1
        else:
            counts[kind]["gaps"] += 1
            gaps[result.name] = result.reason
    write_gaps(gaps, gaps_path)
    total = sum(counts.values(), collections.Counter())
    lines = [summary_line(total["passed"], total["gaps"], total["unsupported"]), "",
             "| kind | passed | known gaps | unsupported op types | tests |",
             "|---|---|---|---|---|"]
    lines += ["| %s | %d | %d | %d | %d |" % (kind, c["passed"], c["gaps"], c["unsupported"],
                                              sum(c.values()))
              for kind, c in counts.items()]
    lines += ["", "%d known gaps written to %s" % (len(gaps), gaps_path), "",
              "| unsupported op type | tests it blocks |", "|---|---|"]
    lines += ["| %s | %d |" % (op, n)
              for op, n in sorted(blocked.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir", nargs="?", help="where to write the cases")
    p.add_argument("--kind", default=None, choices=KINDS, help="default: every kind")
    p.add_argument("--filter", default=None, help="regular expression on test names")
    p.add_argument("--triage", action="store_true",
                   help="run every test and rewrite the known-gaps file")
    p.add_argument("--gaps", default=GAPS_FILE, help="known-gaps file for --triage")
    p.add_argument("--workdir", default=None,
                   help="keep --triage's cases and outputs here (default: a temporary one)")
    args = p.parse_args(argv)
    if args.triage:
        if args.workdir:
            os.makedirs(args.workdir, exist_ok=True)
            print(triage(os.path.abspath(args.workdir), args.gaps))
        else:
            with tempfile.TemporaryDirectory(prefix="dpc-node-tests-") as tmp:
                print(triage(tmp, args.gaps))
        return 0
    if not args.outdir:
        p.error("pass OUTDIR, or --triage")
    os.makedirs(args.outdir, exist_ok=True)
    written = skipped = 0
    for d in list_tests(args.kind, args.filter):
        case = load(d)
        if case is None:
            skipped += 1
            continue
        write(case, args.outdir)
        written += 1
    print("%d tests written to %s, %d skipped (non-tensor values)"
          % (written, args.outdir, skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
