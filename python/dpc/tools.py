"""Runs dpc's command-line tools from Python and reads what they print.

The build directory is $DPC_BUILD_DIR, else build/ beside python/.
"""

import os
import re
import subprocess
from typing import Dict, List, Optional, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_dir() -> str:
    return os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build"))


def tool(name: str) -> str:
    path = os.path.join(build_dir(), "bin", name)
    if not os.path.exists(path):
        raise FileNotFoundError("%s is not built at %s; run `make build`" % (name, path))
    return path


def run(name: str, args: Sequence[str], check: bool = True) -> subprocess.CompletedProcess:
    """Runs a dpc tool; with `check`, a failure raises with its stderr."""
    result = subprocess.run([tool(name), *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError("%s %s failed (%d):\n%s" % (name, " ".join(args),
                                                       result.returncode, result.stderr))
    return result


_ROLES = ("param", "state", "input", "opt_state", "hyper")
_ARG = re.compile(r"%%arg\d+: tensor<([^>]*)> \{dpc\.(%s) = \"([^\"]*)\""
                  r"(?:, dpc\.sharding = #dpc\.sharding<@(\w+), \[([^\]]*)\][^>]*>)?\}"
                  % "|".join(_ROLES))
_MESH = re.compile(r"dpc\.mesh @(\w+) \[([^\]]*)\]")


def _meshes(ir: str) -> Dict[str, Dict[str, int]]:
    """{mesh: {axis: size}} of the dpc.mesh ops of `ir`."""
    return {name: {axis: int(size) for axis, size in re.findall(r'"(\w+)"=(\d+)', axes)}
            for name, axes in _MESH.findall(ir)}


def _global_shape(shape: List[int], dims: str, axes: Dict[str, int]) -> List[int]:
    """The whole value's shape of a block laid out as `dims` (the body of a
    #dpc.sharding: `dp, *`, `(dp, tp), *`)."""
    entries = re.findall(r"\([^)]*\)|[^,\s]+", dims)
    out = []
    for size, entry in zip(shape, entries):
        for axis in re.findall(r"\w+", entry):
            size *= axes.get(axis, 1)
        out.append(size)
    return out


def _shape(tensor_type: str) -> List[int]:
    parts = tensor_type.split("x")
    return [int(p) for p in parts[:-1]]


def signature(ir: str, function: Optional[str] = None) -> Dict[str, Dict[str, List[int]]]:
    """{role: {name: shape}} of the arguments of `function` (default: the
    first function in `ir`; a pipelined step's stage programs), for each
    role of _ROLES. For a partitioned function, the shapes of the whole
    values."""
    marker = "func.func" + ("" if function is None else " @" + function + "(")
    if function is not None and marker not in ir:
        # A pipelined step: every stage's program takes the same arguments.
        marker = "func.func @" + function + ".stage0("
    header = ir[ir.index(marker):]
    header = header[:header.index(") -> ") if ") -> " in header else header.index("{\n")]
    roles: Dict[str, Dict[str, List[int]]] = {role: {} for role in _ROLES}
    start = ir.index(header)
    partitioned = "dpc.partitioned" in ir[start:ir.find("\n", start)]
    meshes = _meshes(ir) if partitioned else {}
    for tensor_type, role, name, mesh, dims in _ARG.findall(header):
        shape = _shape(tensor_type)
        if partitioned and mesh:
            shape = _global_shape(shape, dims, meshes.get(mesh, {}))
        roles[role][name] = shape
    return roles


def micro_batches(ir: str, function: str = "train_step") -> int:
    """The micro-batches of the training step in `ir` (its
    dpc.micro_batches; a pipelined step's stages carry it too): above 1,
    each batch input is [micro-batches, batch, ...]."""
    for name in (function, function + ".stage0"):
        marker = "func.func @" + name + "("
        if marker in ir:
            start = ir.index(marker)
            header = ir[start:ir.index("{\n", start)]
            found = re.search(r"dpc\.micro_batches = (\d+)", header)
            return int(found.group(1)) if found else 1
    return 1


def numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
