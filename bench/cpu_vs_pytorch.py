"""dpc's CPU backend side by side with PyTorch on this machine.

    PYTHONPATH=python /usr/bin/python3 bench/cpu_vs_pytorch.py [--steps 30]
        [--models mlp,gpt,resnet18] [--build build]

For each model (REFERENCE.md's peers: an MLP 784-1024-1024-10 at batch 256,
a GPT of 4 layers, d 128, context 64 at 16 sequences, torchvision's
resnet18 at 3x32x32 and batch 32; on request, `--models lstm`, a 2-layer
bidirectional nn.LSTM classifier), all trained by SGD with momentum 0.9:
  - PyTorch, 1 process x 2 threads;
  - PyTorch DDP over gloo, 2 ranks x 1 thread, half the batch each;
  - dpc: the host calibrated once (dpc-run --calibrate), the step
    planned for a mesh of 2 on that cluster file, compiled (--emit=cpu) and
    trained by dpc-run over 2 ranks x 1 thread; once as the planner chose
    ("plan"), once as plain data parallelism ("dp2": --dp=2 --zero=0), which
    separates the backend's speed from the plan's.
Prints the median step time and samples/s of each, dpc's ratio to the
better PyTorch setup, dpc's measured step time and tensor memory against
the plan's predictions, and (dpc-run --profile) the op types whose time
exceeds their prediction the most. Timings are medians after 5 warm-up steps;
the machine is noisy, so quote ratios from one run.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

from dpc import models, tools

WARMUP = 5


def mlp_spec():
    net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                        nn.Linear(1024, 10))
    inputs = {"x": torch.randn(256, 784), "target": torch.randint(0, 10, (256,))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


def gpt_spec():
    net = models.TinyGPT(vocab=256, block=64, d_model=128, nhead=4, layers=4)
    inputs = {"tokens": torch.randint(0, 256, (16, 64)),
              "target": torch.randint(0, 256, (16, 64))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


def resnet18_spec():
    import torchvision
    net = torchvision.models.resnet18(num_classes=10)
    inputs = {"x": torch.randn(32, 3, 32, 32), "target": torch.randint(0, 10, (32,))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


def lstm_spec():
    """A 2-layer bidirectional nn.LSTM classifier (dpc.models'), hidden 256,
    64 sequences of 32 tokens."""
    net = models.RecurrentClassifier("LSTM", vocab=1000, embed=128, hidden=256, classes=10)
    inputs = {"tokens": torch.randint(0, 1000, (64, 32)),
              "target": torch.randint(0, 10, (64,))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


SPECS = {"mlp": mlp_spec, "gpt": gpt_spec, "resnet18": resnet18_spec, "lstm": lstm_spec}


def torch_steps(model, inputs, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    times = []
    for _ in range(WARMUP + steps):
        begin = time.perf_counter()
        opt.zero_grad()
        loss, _ = model(*inputs)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - begin)
    return statistics.median(times[WARMUP:])


def ddp_rank(rank, spec_name, steps, port, out):
    import torch.distributed as dist
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    spec = SPECS[spec_name]()
    model = nn.parallel.DistributedDataParallel(spec.model.train())
    inputs = [t.chunk(2)[rank] for t in spec.inputs.values()]
    seconds = torch_steps(model, inputs, steps)
    if rank == 0:
        json.dump({"seconds": seconds}, open(out, "w"))
    dist.destroy_process_group()


def run_ddp(name, steps, workdir):
    import torch.multiprocessing as mp
    out = os.path.join(workdir, name + ".ddp.json")
    port = 29500 + os.getpid() % 1000
    mp.spawn(ddp_rank, args=(name, steps, port, out), nprocs=2, join=True)
    return json.load(open(out))["seconds"]


def run_dpc(name, spec, steps, workdir, build, cluster, layout):
    bin_dir = os.path.join(build, "bin")
    modeldir = os.path.join(workdir, name)
    if not os.path.isdir(modeldir):
        models.export_spec(name, spec, modeldir)
    artifact = os.path.join(workdir, name + "." + layout + ".dpc")
    fixed = ["--dp=2", "--tp=1", "--pp=1", "--zero=0"] if layout == "dp2" else []
    subprocess.run([os.path.join(bin_dir, "dpc-opt"), os.path.join(modeldir, name + ".onnx"),
                    "--train", "--optimizer=momentum", "--lr=0.01", "--mesh=2", *fixed,
                    "--cluster=" + cluster, "--partition", "--emit=cpu", "-o", artifact],
                   check=True)
    data = os.path.join(workdir, name + ".data.npz")
    np.savez(data, **{k: np.load(os.path.join(modeldir, name + ".inputs", k + ".npy"))
                      for k in spec.inputs})
    report = os.path.join(workdir, name + "." + layout + ".report.json")
    profile = os.path.join(workdir, name + "." + layout + ".profile.json")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    subprocess.run([os.path.join(bin_dir, "dpc-run"), artifact, "--steps=%d" % (WARMUP + steps),
                    "--data", data, "--report-json", report, "--profile", profile],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = json.load(open(report))
    manifest = json.load(open(os.path.join(artifact, "manifest.json")))
    plan = manifest.get("plan", {})
    return {"seconds": statistics.median(r["step_seconds"][WARMUP:]),
            "predicted_seconds": r["predicted_step_seconds"],
            "tensor_bytes": max(r["tensor_memory_bytes"]),
            "predicted_bytes": r["predicted_peak_memory_bytes"],
            "layout": "%s: dp%d tp%d pp%d zero%d mb%d" % (
                layout, plan.get("dp", 1), plan.get("tp", 1), plan.get("pp", 1),
                plan.get("zero_stage", 0), plan.get("micro_batches", 1)),
            "communication_share": r["communication_share"],
            "furthest": furthest_op_types(json.load(open(profile)))}


def furthest_op_types(profile, count=4):
    """Rank 0's op types whose measured time exceeds the cost model's
    prediction the most (ms per step): where the step's prediction is
    wrong. A collective's prediction is its transfer; its wait, unpriced,
    is exposed communication."""
    by_type = {}
    for op in profile["ranks"][0]["ops"]:
        measured, predicted = by_type.get(op["op"], (0.0, 0.0))
        by_type[op["op"]] = (measured + op["measured_s"],
                             predicted + op.get("predicted_s", 0.0))
    ranked = sorted(by_type.items(), key=lambda kv: kv[1][1] - kv[1][0])[:count]
    return ", ".join("%s %.1f/%.1f" % (name.replace("dpc.", ""), m * 1e3, p * 1e3)
                     for name, (m, p) in ranked)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--models", default="mlp,gpt,resnet18")
    p.add_argument("--build", default=os.environ.get("DPC_BUILD_DIR", "build"))
    args = p.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="dpc-bench-")
    cluster = os.path.join(workdir, "host.json")
    # The full calibration: its all-reduces reach 16 MiB, the size of the
    # models' gradient buckets (the quick one stops at 1 MiB).
    subprocess.run([os.path.join(args.build, "bin", "dpc-run"), "--calibrate=" + cluster],
                   check=True, stdout=subprocess.DEVNULL)
    rows = []
    for name in args.models.split(","):
        torch.manual_seed(0)
        spec = SPECS[name]()
        batch = next(iter(spec.inputs.values())).shape[0]
        torch.set_num_threads(2)
        one = torch_steps(spec.model.train(), list(spec.inputs.values()), args.steps)
        ddp = run_ddp(name, args.steps, workdir)
        best = min(one, ddp)
        rows.append(name)
        print("%-9s batch %3d | PyTorch 1x2 threads %7.1f ms %8.0f/s | DDP 2x1 %7.1f ms %8.0f/s"
              % (name, batch, one * 1e3, batch / one, ddp * 1e3, batch / ddp))
        for layout in ("plan", "dp2"):
            torch.manual_seed(0)
            dpc = run_dpc(name, SPECS[name](), args.steps, workdir, args.build, cluster,
                          layout)
            print("%-9s dpc %-30s %7.1f ms %8.0f/s, exposed comm %4.1f%% | "
                  "dpc / best PyTorch %.2fx | measured / predicted: step %.2f "
                  "(%.1f / %.1f ms), tensor memory %.2f (%.1f / %.1f MiB)"
                  % ("", dpc["layout"], dpc["seconds"] * 1e3, batch / dpc["seconds"],
                     100 * dpc["communication_share"], best / dpc["seconds"],
                     dpc["seconds"] / dpc["predicted_seconds"], dpc["seconds"] * 1e3,
                     dpc["predicted_seconds"] * 1e3,
                     dpc["tensor_bytes"] / max(dpc["predicted_bytes"], 1),
                     dpc["tensor_bytes"] / 2**20, dpc["predicted_bytes"] / 2**20))
            print("%-9s     op types furthest over their prediction (measured/predicted ms): %s"
                  % ("", dpc["furthest"]))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
