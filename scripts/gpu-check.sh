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
PYTHONUNBUFFERED=1 python3 "$root/bench/gpu_check.py" run "$dir"
