"""What the partitioned program sends is what the planner charged for it.

For each bundled model and strategy, the step is planned and partitioned
(dpc-opt --partition, with the plan report); -test-dpc-communication-volume
counts, per program (one per pipeline stage), the bytes one rank sends per
step in its collectives and sends, by the mesh axis that carries them, with
the cost model's rule for a collective (bandwidth-optimal: an all-reduce of
S bytes over n ranks sends 2(n-1)/n S, the others (n-1)/n S, a send S). The
plan report's `sent_bytes_per_step` is what the planner charged each stage:
its layout changes (forward, and the dual collective backward) for every
micro-batch, the gradient reduction, ZeRO-3's gathers and the pipeline's
activations and gradients.

They must agree within the scalars the cost model does not charge (the
loss's mean, the label count, the gradient norm: a few dozen bytes) and
0.5%. Where they do not yet, the case is an expected failure naming the
cause, found by reading the program; it turns into a failure as soon as the
two agree, so that the table here is kept true."""

import json
import os
import re
import subprocess

import pytest
from conftest import build_steps

from dpc import models

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DPC_OPT = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")),
                       "bin", "dpc-opt")

# name: (mesh, dp, tp, pp, ZeRO stage); pipelines run steps of 2 micro-batches.
STRATEGIES = {
    "dp": ("2", 2, 1, 1, 0),
    "tp": ("4", 1, 4, 1, 0),
    "dp-tp": ("2x2", 2, 2, 1, 0),
    "zero1-dp": ("2", 2, 1, 1, 1),
    "zero1": ("2x2", 2, 2, 1, 1),
    "zero2": ("2x2", 2, 2, 1, 2),
    "zero3": ("2x2", 2, 2, 1, 3),
    "pp": ("2", 1, 1, 2, 0),
    "tp-pp": ("2x2", 1, 2, 2, 0),
    "dp-pp": ("2x2", 2, 1, 2, 0),
}

# Bytes of the scalar reductions the cost model does not charge.
SCALARS = 256
RTOL = 5e-3

# (model, strategy): why the program sends other bytes than were charged,
# with the cause found.
#
# The MLP's batch of 4 split over tp leaves each rank one sample, and its
# activations are smaller than its weights: the completion makes each
# weight's gradient whole on every rank from the gathered activation and
# output gradients (a few hundred bytes), where the planner prices the
# forward's dual, the weight gradients partial over tp and reduced (a few
# kB). The program sends less than was charged; the planner does not price
# that alternative.
_SMALL_BATCH = ("the program gathers one-sample activation gradients where the plan "
                "charges reducing the weight gradients")
MISMATCHES = {("mlp", strategy): _SMALL_BATCH
              for strategy in ("tp", "dp-tp", "zero1", "zero2", "zero3")}


@pytest.fixture(scope="module")
def steps(exported, tmp_path_factory):
    """Every bundled model's AdamW step, and the step over 2 micro-batches."""
    return (build_steps(exported, tmp_path_factory.mktemp("steps")),
            build_steps(exported, tmp_path_factory.mktemp("micro"), "--micro-batches=2"))


def counted_and_charged(step, tmp_path, mesh, dp, tp, pp, zero, *flags):
    """[(program, counted, charged)]: per program, {axis: bytes} sent per step
    as the IR has it and as the plan report charged it (dpc-opt given
    `flags` as well)."""
    out, report = str(tmp_path / "partitioned.mlir"), str(tmp_path / "plan.json")
    r = subprocess.run([DPC_OPT, step, "--mesh=" + mesh, "--dp=%d" % dp, "--tp=%d" % tp,
                        "--pp=%d" % pp, "--zero=%d" % zero, "--partition", *flags,
                        "--plan-report=" + report, "-test-dpc-communication-volume",
                        "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    plan = json.load(open(report))
    programs = re.findall(r"func\.func @(train_step[\w.]*)\(.*dpc\.sent_bytes = "
                          r"\{dp = (\d+) : i64, pp = (\d+) : i64, tp = (\d+) : i64\}",
                          open(out).read())
    assert len(programs) == pp == len(plan["stages"])
    result = []
    for stage, (name, sent_dp, sent_pp, sent_tp) in enumerate(programs):
        assert name == ("train_step" if pp == 1 else "train_step.stage%d" % stage)
        counted = {"dp": int(sent_dp), "tp": int(sent_tp), "pp": int(sent_pp)}
        result.append((name, counted, plan["stages"][stage]["sent_bytes_per_step"]))
    return result


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_sent_bytes_are_what_the_plan_charged(steps, tmp_path, name, strategy):
    mesh, dp, tp, pp, zero = STRATEGIES[strategy]
    step = (steps[1] if pp > 1 else steps[0])[name]
    mismatches = []
    for program, counted, charged in counted_and_charged(step, tmp_path, mesh, dp, tp, pp,
                                                         zero):
        for axis in ("dp", "tp", "pp"):
            if abs(counted[axis] - charged[axis]) > SCALARS + RTOL * charged[axis]:
                mismatches.append("%s %s: %d sent, %.0f charged" %
                                  (program, axis, counted[axis], charged[axis]))
    if (name, strategy) in MISMATCHES:
        if not mismatches:
            pytest.fail("now sends what was charged: drop it from MISMATCHES")
        pytest.xfail(MISMATCHES[name, strategy] + ": " + "; ".join(mismatches))
    assert not mismatches



# (strategy, compression): data-parallel reductions sent compressed.
COMPRESSED = [(strategy, compression)
              for strategy in ("dp", "dp-tp", "zero1-dp", "zero2", "dp-pp")
              for compression in ("bf16", "topk:0.05")]


@pytest.mark.parametrize("strategy,compression", COMPRESSED)
@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_compressed_reductions_send_what_the_plan_charged(steps, tmp_path, name, strategy,
                                                         compression):
    """--grad-compression is priced: bf16 halves the bytes of each fp32
    gradient reduction over dp (ZeRO's gathers of the updated shards stay
    fp32); top-k sends, of each gradient all-reduce over dp, 5% of the
    entries as values and i64 indices, all-gathered (ZeRO's reduce-scatters
    stay dense). Before, the plan charged every reduction whole (twice
    what bf16 sends), and resnet18's synchronized batch-norm statistics
    were compressed with the gradients (top-k's error feedback carrying
    one step's statistics into the next)."""
    mesh, dp, tp, pp, zero = STRATEGIES[strategy]
    if (name, strategy) in MISMATCHES:
        pytest.skip("uncompressed, it already sends other bytes: " + MISMATCHES[name, strategy])
    step = (steps[1] if pp > 1 else steps[0])[name]
    (tmp_path / "dense").mkdir()
    dense = counted_and_charged(step, tmp_path / "dense", mesh, dp, tp, pp, zero)
    programs = counted_and_charged(step, tmp_path, mesh, dp, tp, pp, zero,
                                   "--grad-compression=" + compression)
    mismatches = ["%s %s: %d sent, %.0f charged" % (program, axis, counted[axis], charged[axis])
                  for program, counted, charged in programs
                  for axis in ("dp", "tp", "pp")
                  if abs(counted[axis] - charged[axis]) > SCALARS + RTOL * charged[axis]]
    assert not mismatches
    sent = sum(counted["dp"] for _, counted, _ in programs)
    whole = sum(counted["dp"] for _, counted, _ in dense)
    if zero == 0:
        assert sent < 0.55 * whole, (sent, whole)
    elif compression == "bf16":
        # The reduce-scatter halved, the gather of the shards whole.
        assert 0.7 * whole < sent < 0.8 * whole, (sent, whole)
    else:
        # Dense but for the odd small all-reduce over dp.
        assert sent == pytest.approx(whole, rel=0.01), (sent, whole)


# Megatron-LM-sized layouts: (mesh, dp, tp, pp, ZeRO stage) -> why the
# program sends other bytes than were charged, or None.
AT_SCALE = {
    ("8", 1, 8, 1, 0): None,
    ("2x4", 2, 4, 1, 0): None,
    ("2x4", 2, 4, 1, 1): None,
    ("2x4", 2, 4, 1, 2): None,
    ("8", 8, 1, 1, 1): None,
    ("8", 8, 1, 1, 3): None,
    ("2x4", 1, 4, 2, 0): None,
    # Over dp as charged; over tp the tied table's bf16 copy, remade for
    # the backward pass, is gathered whole again there (403 MB), where the
    # plan charges one gather: the planner charges a view's layout change
    # again in the backward only where a contracting op reads it directly,
    # and the table reaches the output projection through its transpose.
    ("2x4", 2, 4, 1, 3): "ZeRO-3's backward gathers the tied table again over tp, uncharged",
}


def megatron_sized(tmp, *flags):
    """Two layers of the 1.7B GPT of Megatron-LM's table, its bf16 AdamW
    step (dpc-opt --train *flags) written into `tmp`."""
    import dataclasses
    from dpc import gpt_onnx
    config = dataclasses.replace(gpt_onnx.megatron_config("1.7b", batch=8), layers=2)
    onnx_path, step = str(tmp / "gpt.onnx"), str(tmp / "gpt.mlir")
    gpt_onnx.write(config, onnx_path)
    subprocess.run([DPC_OPT, onnx_path, "--train", "--loss-output=loss", "--optimizer=adamw",
                    "--precision=bf16", *flags, "-o", step], check=True)
    return step


def assert_at_scale_sends_what_was_charged(step, tmp_path, layout, expected_failure):
    """The at-scale `step` partitioned as `layout` sends what its plan
    charged, over every axis of every stage (more than 1 GB in all), or
    fails as `expected_failure` (a reason) says."""
    programs = counted_and_charged(step, tmp_path, *layout)
    mismatches = ["%s %s: %d sent, %.0f charged" % (program, axis, counted[axis], charged[axis])
                  for program, counted, charged in programs
                  for axis in ("dp", "tp", "pp")
                  if abs(counted[axis] - charged[axis]) > SCALARS + RTOL * charged[axis]]
    assert sum(sum(counted.values()) for _, counted, _ in programs) > 1e9
    if expected_failure:
        if not mismatches:
            pytest.fail("now sends what was charged: drop the expected failure")
        pytest.xfail(expected_failure + ": " + "; ".join(mismatches))
    assert not mismatches


@pytest.fixture(scope="module")
def megatron_sized_step(tmp_path_factory):
    return megatron_sized(tmp_path_factory.mktemp("at_scale"))


@pytest.mark.parametrize("layout", list(AT_SCALE))
def test_megatron_sized_layers_send_what_the_plan_charged(megatron_sized_step, tmp_path,
                                                           layout):
    """Two layers of the 1.7B GPT of Megatron-LM's table (hidden 2048,
    sequence 4096, vocabulary 131072, bf16, shape-only weights) planned
    and partitioned with tensor parallelism over 8, and over 4 with data
    parallelism over 2: the program must send what the plan charged, as
    the bundled models' do. At tp=8 the plan splits the batch of 8 over tp
    and gathers the weights (1.5 GB a step); before, the program sent 5.25
    GB where 0.86 GB was charged (the tied table's two gradient terms each
    all-reduced whole, each layer's MLP input gradient contracted over a
    split factor and all-reduced, the weights' second gathers and
    reduce-scatters not charged). At dp=2 the table's two terms, one
    pending over dp and tp, the other over dp, were each all-reduced over
    dp (323 MB where 189 MB is charged): now summed while pending over dp.
    Over two pipeline stages the table is tied across them: stage 1 sent
    the output projection's term whole (537 MB), and none of the exchange
    was charged; now the term is reduce-scattered over tp before it is
    sent, and the plan charges the table's copy forward and its term back.
    Under ZeRO-1 at dp=2 x tp=4 the updated fp32 shards were gathered (357
    MB where 189 MB is charged, for bf16): the masters now stay blocks and
    the bf16 copies are gathered once, and a gradient pending over both
    axes is reduce-scattered over tp before dp, as charged."""
    assert_at_scale_sends_what_was_charged(megatron_sized_step, tmp_path, layout,
                                           AT_SCALE[layout])


@pytest.fixture(scope="module")
def megatron_sized_micro_step(tmp_path_factory):
    """The same two layers, the step over 2 micro-batches."""
    return megatron_sized(tmp_path_factory.mktemp("at_scale_micro"), "--micro-batches=2")


# Two micro-batches of bf16 compute: ZeRO-0/1 accumulate each gradient in
# fp32 with its sum pending and reduce it once, where the optimizer reads
# it, in fp32 (before, each micro-batch's bf16 gradients were all-reduced:
# the cast to the fp32 gradient finished the sum); ZeRO-2/3 reduce-scatter
# each micro-batch's bf16 gradients. The plan charges both as built.
MICRO_AT_SCALE = {
    ("2", 2, 1, 1, 0): None,
    ("2", 2, 1, 1, 1): None,
    ("2", 2, 1, 1, 2): None,
    ("2", 2, 1, 1, 3): None,
    ("2x4", 2, 4, 1, 2): None,
    # The program sends less than charged over tp (12.6 MB a micro-batch,
    # 1%): with sums kept pending, the position table's gradient is made
    # from the batch-split output gradient and reduce-scattered once in
    # the step, where the plan charges the forward's dual per micro-batch
    # (the output gradient moved back by an all-to-all) as well.
    ("2x4", 2, 4, 1, 0): "the position table's gradient skips the dual all-to-all",
    ("2x4", 2, 4, 1, 1): "the position table's gradient skips the dual all-to-all",
    ("2x4", 2, 4, 1, 3): "ZeRO-3's backward gathers the tied table again over tp, uncharged",
    # Over two pipeline stages the tied table's bf16 copy crosses once a
    # step, and each micro-batch's term of its gradient crosses back as a
    # tp block (before: the copy each micro-batch, the term whole).
    ("2x4", 1, 4, 2, 0, "--pipeline-schedule=1f1b"): None,
    # ZeRO-1/2 on pipeline stages keep blocks of the masters and gather
    # each bf16 copy once a step, for both micro-batches.
    ("2x2", 2, 1, 2, 1, "--pipeline-schedule=1f1b"): None,
    ("2x4", 2, 2, 2, 1, "--pipeline-schedule=1f1b"): None,
    ("2x4", 2, 2, 2, 2, "--pipeline-schedule=1f1b"): None,
    ("2x4", 2, 2, 2, 0, "--pipeline-schedule=1f1b"):
        "the first stage gathers the lookup's output gradient over dp and tp and "
        "all-reduces the table's term over dp in each micro-batch",
    # The planner's interleaved plan gives the final layer norm's bf16 cast
    # a model chunk of its own on the other device: the norm's fp32 output
    # goes there and back each micro-batch, where the plan charges each
    # chunk's output once.
    ("2x4", 1, 4, 2, 0): "a model chunk holding only a cast: the norm's output crosses twice",
}


@pytest.mark.parametrize("layout", list(MICRO_AT_SCALE))
def test_megatron_sized_micro_batches_send_what_the_plan_charged(megatron_sized_micro_step,
                                                                  tmp_path, layout):
    """The at-scale layers over two micro-batches: the program must send
    what the plan charged. Over dp=2 under ZeRO-0 it sent 1510 MB where
    755 MB was charged (each micro-batch's bf16 gradients all-reduced, one
    bf16 reduction charged: M x 755 MB over M micro-batches; now one fp32
    reduction, 1510 MB for any M, charged); kept pending through the cast
    but read whole by the micro-batch average, dp2 x tp4's gradients were
    all-reduced whole over dp and tp (2.6 GB over dp)."""
    assert_at_scale_sends_what_was_charged(megatron_sized_micro_step, tmp_path, layout,
                                           MICRO_AT_SCALE[layout])
