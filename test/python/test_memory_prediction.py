"""What a rank of the CPU backend holds against what its plan predicts.

A plan's peak memory per device (model state, stored activations and
temporaries: docs/cost-model.md) is what the planner fits plans into, so a
rank must hold what it says: a plan that fits on paper and not on the
device is a bug. Each rank's tensors (arguments, results and arena,
dpc-run's tensor_memory_bytes) are held within 15% of the plan's
peak_memory_bytes for the bench models (REFERENCE.md's MLP
784-1024-1024-10 at batch 256, and the bench GPT) data-parallel over 2
ranks with momentum SGD: without ZeRO, under ZeRO-1 and ZeRO-2 (the
updated shards gathered in a bucket after the update; under ZeRO-2 each
weight's gradient made whole before it is reduce-scattered) and ZeRO-3
(parameters gathered in buckets). The tiny test models are not used: they hold
1.2-2x their plans' figures (the MLP of test_cpu_backend 17 KiB against
11), much of it scalars and small buffers that the CPU backend's arena
aligns to 64 bytes and the plan does not count.
"""

import json
import subprocess

import numpy as np
import pytest
import torch
from torch import nn

from dpc import models, tools

LAYOUT = ["--mesh=2", "--dp=2", "--tp=1", "--pp=1"]


def mlp_spec():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                        nn.Linear(1024, 10))
    inputs = {"x": torch.randn(256, 784), "target": torch.randint(0, 10, (256,))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


def gpt_spec():
    torch.manual_seed(0)
    net = models.TinyGPT(vocab=256, block=64, d_model=128, nhead=4, layers=4)
    inputs = {"tokens": torch.randint(0, 256, (16, 64)),
              "target": torch.randint(0, 256, (16, 64))}
    return models.Spec(models.WithLoss(net), inputs, ["loss", "logits"])


SPECS = {"mlp": mlp_spec, "gpt": gpt_spec}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    try:
        tools.tool("dpc-opt")
    except FileNotFoundError as error:
        pytest.skip(str(error))
    out = tmp_path_factory.mktemp("bench_models")
    paths = {}
    for name, spec in SPECS.items():
        made = spec()
        models.export_spec(name, made, str(out / name))
        data = str(out / (name + ".data.npz"))
        np.savez(data, **{k: v.numpy() for k, v in made.inputs.items()})
        paths[name] = (str(out / name / (name + ".onnx")), data)
    return paths


# Under ZeRO-1/2 the MLP's peak is the optimizer's: after the update it
# gathers the updated shards in one bucket, 7.1 MiB whole beside the 3.6
# MiB of shards concatenated (1.28 and 1.25 before the plan counted it; the
# GPT's backward pass holds more).
#
# The MLP with its gradients sent compressed holds the sums received anew
# beside the buckets sent (a gradient's worth: 0.95 of the plan in bf16),
# and under top-k the residual (optimizer state) and the corrected sum of
# the bucket being coded (0.98; 1.23 and 1.87 before the plan counted
# them).
#
# The GPT also with selective recomputation: no layer's attention core
# stored, one remade at a time (0.97 of the plan; 1.00 without). (Mixed
# precision is left out: the CPU backend holds bf16 values in f32 storage,
# rounded, and so holds 1.46 times the plan's bf16 bytes for the GPT; what
# ZeRO-1's sharded masters save is checked below.)
@pytest.mark.parametrize("name, zero, flags", [
    ("mlp", 0, []), ("mlp", 1, []), ("mlp", 2, []), ("mlp", 3, []),
    ("mlp", 0, ["--grad-compression=bf16"]), ("mlp", 0, ["--grad-compression=topk:0.01"]),
    ("gpt", 0, []), ("gpt", 3, []), ("gpt", 0, ["--recompute=attention"])])
def test_a_rank_holds_what_the_plan_predicts(exported, tmp_path, name, zero, flags):
    held, predicted = held_and_predicted(exported[name], tmp_path, zero, flags)
    print("held / predicted: %.3f (%.2f / %.2f MiB)" % (held / predicted, held / 2**20,
                                                       predicted / 2**20))
    assert 0.85 <= held / predicted <= 1.15, (held / 2**20, predicted / 2**20)


def test_sharded_masters_save_what_the_plan_says(exported, tmp_path):
    """The bf16 GPT under ZeRO-1 keeps its fp32 masters and momenta as
    blocks over dp=2. The backend holds bf16 values in f32 storage, so its
    peak is not the plan's (above); what ZeRO-1 saves against ZeRO-0 is in
    fp32 tensors, and is the plan's saving (3.30 MiB each)."""
    held, predicted = {}, {}
    for zero in (0, 1):
        held[zero], predicted[zero] = held_and_predicted(
            exported["gpt"], tmp_path / str(zero), zero, ["--precision=bf16"])
    saved, charged = held[0] - held[1], predicted[0] - predicted[1]
    assert charged > 2**20
    assert saved == pytest.approx(charged, rel=0.05), (saved / 2**20, charged / 2**20)


def held_and_predicted(model, tmp_path, zero, flags):
    """(the largest tensor memory a rank holds, the plan's peak) for
    `model` (onnx, data) trained one step over LAYOUT under ZeRO `zero`."""
    onnx, data = model
    tmp_path.mkdir(parents=True, exist_ok=True)
    artifact = str(tmp_path / "model.dpc")
    r = subprocess.run([tools.tool("dpc-opt"), onnx, "--train", "--optimizer=momentum",
                        *flags, *LAYOUT, "--zero=%d" % zero, "--partition", "--emit=cpu",
                        "-o", artifact], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    report = str(tmp_path / "report.json")
    r = subprocess.run([tools.tool("dpc-run"), artifact, "--steps=1", "--data", data,
                        "--report-json", report, "--timeout=60"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    result = json.load(open(report))
    return max(result["tensor_memory_bytes"]), result["predicted_peak_memory_bytes"]


def pipelined_held_and_predicted(model, tmp_path, micro_batches):
    """Over two pipeline stages (1F1B, `micro_batches` micro-batches): the
    tensor memory each rank holds, what dpc-run compares it with, and the
    plan report's stage totals."""
    onnx, _ = model
    artifact = str(tmp_path / "model.dpc")
    plan, report = str(tmp_path / "plan.json"), str(tmp_path / "report.json")
    r = subprocess.run([tools.tool("dpc-opt"), onnx, "--train", "--optimizer=momentum",
                        "--micro-batches=%d" % micro_batches, "--mesh=2", "--dp=1", "--tp=1",
                        "--pp=2", "--pipeline-schedule=1f1b", "--plan-report", plan,
                        "--emit=cpu", "-o", artifact], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([tools.tool("dpc-run"), artifact, "--steps=1", "--report-json", report,
                        "--timeout=60"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    result = json.load(open(report))
    stages = [stage["memory_bytes"]["total"] for stage in json.load(open(plan))["stages"]]
    return result["tensor_memory_bytes"], result["predicted_memory_bytes"], stages


@pytest.fixture(scope="module")
def pipelined(exported, tmp_path_factory):
    """pipelined_held_and_predicted for the bench GPT, once per count of
    micro-batches."""
    done = {}

    def run(micro_batches):
        if micro_batches not in done:
            done[micro_batches] = pipelined_held_and_predicted(
                exported["gpt"], tmp_path_factory.mktemp("pp"), micro_batches)
        return done[micro_batches]
    return run


def test_each_pipeline_stage_is_compared_with_its_own_plan(pipelined):
    """The bench GPT over two stages: dpc-run compares each rank with its
    own stage's planned memory (the manifest's plan carries one figure per
    stage), and the two stages hold different amounts (each rank held the
    whole model's arguments before). (A micro-batch's gradient added into
    the running sum is stored, not computed inside the next micro-batch's
    add, which held every micro-batch's terms to the last:
    test-buffer-plan-accumulation.mlir; over eight micro-batches instead of
    four a stage held at most 2% more.)"""
    held, compared, stages = pipelined(4)
    assert compared == pytest.approx(stages, rel=1e-9)
    assert stages[0] != stages[1] and held[0] != held[1]


# The stages held 1.14 and 1.21 times their plans over four micro-batches
# (42.3 / 37.0 and 28.3 / 23.4 MiB) while the backward pass stored the GeLU
# derivative's pieces read by two loops each (`x / sqrt 2`, `1 + erf`),
# which the plan's temporaries do not count: each is now recomputed in the
# loops that read it, where what it is made from is alive anyway (38.3 and
# 24.3 MiB, 1.04 and 1.04).
def test_a_pipeline_stage_holds_what_its_plan_predicts(pipelined):
    held, compared, _ = pipelined(4)
    for rank, predicted in zip(held, compared):
        assert 0.85 <= rank / predicted <= 1.15, (rank / 2**20, predicted / 2**20)
