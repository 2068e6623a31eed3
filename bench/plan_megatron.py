"""dpc's planner on every row of Megatron-LM's H100 table.

For each row (../shared/REFERENCE.md) it writes the GPT as ONNX with
shape-only weights (dpc.gpt_onnx), builds the bf16 AdamW training step once,
then plans it twice on the row's GPUs (nodes of 8, preset h100-sxm with a
fused attention kernel: Megatron-LM's H100 runs use Transformer Engine's
flash attention, so their scores are never stored; dpc's own backends have
no such kernel and leave the cluster's fused_attention off; likewise
Megatron-LM hides the data-parallel reduction behind every micro-batch's
backward pass, dpc's runtime behind the last one's, so only this bench sets
gradient_sync_behind_all_micro_batches):

  free       dpc chooses everything;
  published  --tp/--pp/--dp fixed to Megatron-LM's, the rest chosen.

and prints, per row, both plans' predicted TFLOP/s per GPU (model FLOPs as
Megatron-LM counts them), their ratio (the planner's plan must be at least
as fast), the published plan's prediction against the published figure
(the cost model must be within 15%), and the planning time of the free
search (the whole dpc-opt run, import excluded).

  PYTHONPATH=python /usr/bin/python3 bench/plan_megatron.py [--build build]
      [--rows 1.7b,177b] [--keep DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from dpc import gpt_onnx

# model: (TP, PP, DP, global batch, published TFLOP/s per GPU)
ROWS = {
    "1.7b": (1, 1, 48, 192, 408.8), "7.1b": (2, 1, 48, 192, 465.9),
    "16b": (4, 1, 48, 192, 489.1), "32b": (8, 1, 48, 192, 459.6),
    "70b": (8, 2, 48, 384, 419.7), "119b": (8, 4, 48, 768, 420.5),
    "177b": (8, 6, 48, 1152, 432.8), "314b": (8, 8, 48, 1536, 474.4),
    "462b": (8, 16, 48, 3072, 459.9),
}


# The h100-sxm preset (docs/cluster.md) with Megatron-LM's runtime: fused
# attention, and the gradient reduction hidden behind every micro-batch's
# backward pass (its published throughput calibrates that window; dpc's
# runtime reduces inside the last micro-batch's).
H100_FLASH = {
    "name": "h100-sxm-flash-attention", "devices_per_node": 8,
    "device": {"peak_tflops": {"f64": 67, "f32": 67, "bf16": 989, "f16": 989},
               "memory_gb": 80, "memory_bandwidth_gb_per_s": 3350},
    "intra_node": {"bandwidth_gb_per_s": 450, "latency_us": 3},
    "inter_node": {"bandwidth_gb_per_s": 50, "latency_us": 10},
    "efficiency": {"compute": 0.54, "memory": 0.8, "communication": 0.8},
    "fused_attention": True,
    "gradient_sync_behind_all_micro_batches": True,
}


def plan(dpc_opt, step, mesh, report, extra=()):
    cluster = os.path.join(os.path.dirname(report), "h100-flash.json")
    if not os.path.exists(cluster):
        with open(cluster, "w") as f:
            json.dump(H100_FLASH, f)
    start = time.monotonic()
    result = subprocess.run([dpc_opt, step, "--mesh=" + mesh, "--cluster=" + cluster,
                             "--plan-only", "--plan-report=" + report, *extra],
                            capture_output=True, text=True)
    wall = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit("dpc-opt failed on %s %s:\n%s" % (step, " ".join(extra),
                                                           result.stderr))
    with open(report) as f:
        return json.load(f), wall


def describe(p):
    text = "dp%d tp%d pp%d b%d m%d %s" % (p["dp"], p["tp"], p["pp"], p["micro_batch_size"],
                                          p["micro_batches"], p["schedule"])
    if p["chunks"] > 1:
        text += "x%d" % p["chunks"]
    if p["recompute"]:
        text += " rc"
    return text + " z%d" % p["zero_stage"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument("--keep", help="keep the generated models here")
    args = parser.parse_args(argv)
    dpc_opt = os.path.join(args.build, "bin", "dpc-opt")
    work = args.keep or tempfile.mkdtemp(prefix="dpc-bench-")
    os.makedirs(work, exist_ok=True)

    header = ("%-6s %5s  %-34s %7s  %-34s %7s %6s  %9s %6s  %8s" %
              ("model", "GPUs", "dpc plan", "TFLOP/s", "published plan", "TFLOP/s",
               "ratio", "published", "model", "plan s"))
    print(header)
    print("-" * len(header))
    failures = 0
    for name in args.rows.split(","):
        tp, pp, dp, batch, published = ROWS[name]
        gpus = tp * pp * dp
        onnx_path = os.path.join(work, name + ".onnx")
        step = os.path.join(work, name + ".mlir")
        if not os.path.exists(step):
            gpt_onnx.write(gpt_onnx.megatron_config(name, batch=batch), onnx_path)
            subprocess.run([dpc_opt, onnx_path, "--train", "--loss-output=loss",
                            "--optimizer=adamw", "--precision=bf16",
                            "-mlir-print-debuginfo", "-o", step], check=True)
        mesh = "%dx8" % (gpus // 8)
        free, wall = plan(dpc_opt, step, mesh, os.path.join(work, name + ".free.json"))
        fixed, _ = plan(dpc_opt, step, mesh, os.path.join(work, name + ".published.json"),
                        ["--tp=%d" % tp, "--pp=%d" % pp, "--dp=%d" % dp])
        ours = free["totals"]["tflops_per_device"]
        theirs = fixed["totals"]["tflops_per_device"]
        ratio = ours / theirs
        accuracy = theirs / published
        ok = ratio >= 1 - 1e-9 and 0.85 <= accuracy <= 1.15
        failures += not ok
        print("%-6s %5d  %-34s %7.1f  %-34s %7.1f %6.3f  %9.1f %6.3f  %8.2f%s" %
              (name, gpus, describe(free), ours, describe(fixed), theirs, ratio,
               published, accuracy, wall, "" if ok else "  <-- check"))
        sys.stdout.flush()
    print("\nratio = dpc plan / published plan, both predicted by dpc's cost model "
          "(must be >= 1);\nmodel = prediction for the published plan / published "
          "TFLOP/s (must be within 0.85-1.15);\nplan s = wall time of the free "
          "search (dpc-opt on the built step, import excluded).")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
