"""npm plumbing shared by the reference runner and the model fetcher.

npm is only a download channel here: nothing runs install scripts, and
everything lands in a cache directory outside the source tree.
"""

import json
import os
import shutil
import subprocess
from typing import List


class NpmUnavailable(RuntimeError):
    pass


def cache_dir() -> str:
    """$DPC_CACHE, else $XDG_CACHE_HOME/dpc, else ~/.cache/dpc."""
    if os.environ.get("DPC_CACHE"):
        return os.environ["DPC_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "dpc")


def tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        raise NpmUnavailable("'%s' is not on PATH" % name)
    return path


def npm(args: List[str], cwd: str, env=None) -> str:
    """Runs npm without scripts and returns its stdout."""
    full_env = dict(os.environ, **(env or {}))
    r = subprocess.run([tool("npm"), *args, "--ignore-scripts", "--no-fund",
                        "--no-audit"], cwd=cwd, env=full_env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("npm %s failed:\n%s" % (" ".join(args), r.stderr))
    return r.stdout


def pack(spec: str, dest: str) -> str:
    """Downloads the tarball of `spec` (NAME@VERSION) into dest; returns its path.

    `npm pack` on a registry spec fetches and checks the published tarball
    (its integrity hash) without installing or running anything.
    """
    os.makedirs(dest, exist_ok=True)
    out = npm(["pack", spec, "--json", "--pack-destination", dest], cwd=dest)
    return os.path.join(dest, json.loads(out)[0]["filename"])
