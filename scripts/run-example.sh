#!/usr/bin/env bash
# The main job on the bundled model. Today: verify the MLP's dpc IR and
# print it with each op's cost and sharding rule, the inputs the planner
# reads. It grows into import -> train step -> plan -> compile -> train.
set -euo pipefail
build_dir=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
"$build_dir/bin/dpc-opt" "$root/examples/mlp.mlir" \
  -test-dpc-op-cost -test-dpc-sharding-rules
