#!/usr/bin/env bash
# The CUDA backend on one GPU (bench/gpu_check.py says what is checked).
#
#   scripts/gpu-check.sh prepare   # here: build, compile the artifacts and
#                                  # references into gpu-check/ (git-ignored)
#   scripts/gpu-check.sh           # on the GPU machine, with gpu-check/
#                                  # carried: train and compare
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/gpu-check"
if [ "${1:-run}" = prepare ]; then
  make -C "$root" build >/dev/null
  rm -rf "$dir"
  PYTHONPATH="$root/python" /usr/bin/python3 "$root/bench/gpu_check.py" prepare "$dir"
  exit 0
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# The CUDA libraries the artifacts link (cudart, cuBLASLt, NCCL) where this
# machine keeps them: the toolkit, or the Python packages of PyTorch.
for lib in $(ldd "$dir"/mlp.dpc/libmodel.so | awk '/not found/ {print $1}' | sort -u); do
  found=$(find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)
  if [ -z "$found" ]; then
    echo "gpu-check: $lib not found on this machine" >&2
    exit 1
  fi
  LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH
PYTHONUNBUFFERED=1 python3 "$root/bench/gpu_check.py" run "$dir"
