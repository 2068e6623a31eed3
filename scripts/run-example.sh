#!/usr/bin/env bash
# The main job on a bundled model: export the MLP of python/dpc/models.py
# as ONNX, import it, build its training step (AdamW), price the step on a
# 2x8 H100 mesh with the cost model, plan it as typed IR (outlined stages,
# checked by -dpc-verify-shardings), partition it for 2x2 (the program each
# rank runs, with bucketed, overlapped collectives) and train 3 steps on 4
# simulated ranks beside one device, then as two pipeline stages; then
# compile it for 2x2 (dpc-opt --emit=cpu: generated C++, OpenBLAS) and
# train it with dpc-run on 4 local ranks over Gloo, printing the report;
# and run the forward under the reference interpreter against PyTorch's
# loss: import -> train step -> plan -> compile -> train.
set -euo pipefail
build_dir=$(cd "${1:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

PYTHONPATH="$root/python" /usr/bin/python3 -m dpc.models mlp "$work"
echo "== training step of mlp.onnx (AdamW, lr 0.01): signature"
"$build_dir/bin/dpc-opt" "$work/mlp.onnx" --train --optimizer=adamw --lr=0.01 \
  -inline -o "$work/step.mlir"
grep 'func.func @train_step' "$work/step.mlir" | sed 's/ -> .*//' |
  grep -o 'dpc\.[a-z_]* = "[^"]*"' | paste -sd ' ' | fold -s -w 100
echo "== cost on a 2x8 mesh of h100-sxm"
"$build_dir/bin/dpc-opt" "$work/step.mlir" \
  -test-dpc-cost-model="mesh=2x8 cluster=h100-sxm" |
  grep -o 'dpc\.\(compute_time_us\|grad_all_reduce[a-z_]*\) = [^,}]*' | sort -u
echo "== plan for a 2x8 mesh of h100-sxm"
"$build_dir/bin/dpc-opt" "$work/step.mlir" --mesh=2x8 --cluster=h100-sxm \
  --plan-only --plan-report="$work/plan.json"
echo "== the plan as typed IR for 2x2 (dp1 tp2 pp2): each stage outlined, checked"
"$build_dir/bin/dpc-opt" "$work/step.mlir" --mesh=2x2 --dp=1 --tp=2 --pp=2 \
  -dpc-outline-stages -dpc-verify-shardings -o "$work/planned.mlir"
grep -o 'dpc.mesh @plan [^\n]*' "$work/planned.mlir"
echo "$(grep -c 'dpc.reshard ' "$work/planned.mlir") reshards," \
  "$(grep -c 'dpc.transfer ' "$work/planned.mlir") transfers between stages," \
  "stage functions: $(grep -o 'func.func private @forward_backward.stage[0-9]*\.[a-z]*' \
    "$work/planned.mlir" | sed 's/.*@//' | paste -sd ' ')"
echo "== partitioned for 2x2 (dp2 tp2, ZeRO-1): the program of each rank"
"$build_dir/bin/dpc-opt" "$work/step.mlir" --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=1 \
  --partition -o "$work/partitioned.mlir"
for op in all_reduce reduce_scatter all_gather all_to_all all_slice; do
  printf '%s %s  ' "$(grep -c "dpc\.$op " "$work/partitioned.mlir")" "$op"
done
echo
echo "== 3 AdamW steps: loss on one device, then on 4 simulated ranks"
PYTHONPATH="$root/python" /usr/bin/python3 -m dpc.train "$work/step.mlir" "$work" mlp 3
PYTHONPATH="$root/python" /usr/bin/python3 -m dpc.train "$work/partitioned.mlir" "$work" mlp 3
echo "== pipelined for 2x2 (tp2 pp2, 1F1B): a program per stage, 3 steps on 4 ranks"
"$build_dir/bin/dpc-opt" "$work/step.mlir" --mesh=2x2 --dp=1 --tp=2 --pp=2 \
  --partition --pipeline-schedule=1f1b -o "$work/pipelined.mlir"
echo "stage programs: $(grep -o 'func.func @train_step\.stage[0-9]*' "$work/pipelined.mlir" |
  sed 's/.*@//' | paste -sd ' '), $(grep -c 'dpc\.send ' "$work/pipelined.mlir") sends"
PYTHONPATH="$root/python" /usr/bin/python3 -m dpc.train "$work/pipelined.mlir" "$work" mlp 3
echo "== compiled for 2x2 (dp2 tp2, ZeRO-1) and trained 20 steps on 4 local ranks"
"$build_dir/bin/dpc-opt" "$work/mlp.onnx" --train --optimizer=adamw --lr=0.01 \
  --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=1 --partition --emit=cpu -o "$work/mlp.dpc"
echo "artifact: $(ls "$work/mlp.dpc" | paste -sd ' ')"
/usr/bin/python3 -c "import numpy as n; d='$work/mlp.inputs/'; \
n.savez('$work/batch.npz', x=n.load(d+'x.npy'), target=n.load(d+'target.npy'))"
"$build_dir/bin/dpc-run" "$work/mlp.dpc" --nproc-per-node 4 --steps 20 \
  --data "$work/batch.npz"
echo "== the same for CUDA (--emit=cuda): built with nvcc where the toolkit is;"
echo "   with no GPU here, its emulated build trained 20 steps on 4 local ranks"
if "$build_dir/bin/dpc-opt" "$work/mlp.onnx" --train --optimizer=adamw --lr=0.01 \
  --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=1 --partition --emit=cuda \
  -o "$work/mlp-cuda.dpc" 2>"$work/nvcc.err"; then
  echo "nvcc built $(du -h "$work/mlp-cuda.dpc/libmodel.so" | cut -f1) libmodel.so"
else
  echo "no GPU build: $(head -1 "$work/nvcc.err")"
fi
"$build_dir/bin/dpc-opt" "$work/mlp.onnx" --train --optimizer=adamw --lr=0.01 \
  --mesh=2x2 --dp=2 --tp=2 --pp=1 --zero=1 --partition --emit=cuda \
  --cuda-emulation -o "$work/mlp-emulated.dpc"
"$build_dir/bin/dpc-run" "$work/mlp-emulated.dpc" --nproc-per-node 4 --steps 20 \
  --data "$work/batch.npz"
echo "== forward under the interpreter (PyTorch's loss: $(
  /usr/bin/python3 -c "import numpy; print(numpy.load('$work/mlp.ref/loss.npy'))"))"
"$build_dir/bin/dpc-run" --interpret "$work/mlp.onnx" \
  --input x="$work/mlp.inputs/x.npy" --input target="$work/mlp.inputs/target.npy" \
  --print | grep '^loss'
