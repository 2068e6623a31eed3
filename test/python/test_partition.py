"""N ranks compute what one device computes. Each bundled model's AdamW
step is planned on a mesh with its degrees and ZeRO stage fixed,
partitioned into the program each rank runs (-dpc-partition), and run with
one simulated rank per device (dpc-run's interpreter: a thread per rank,
collectives between them). After 3 steps, the loss, parameters, running
statistics and optimizer state equal the single-device step's: to rounding
in fp64, and within rtol 1e-5 in fp32."""

import os
import re
import subprocess

import numpy as np
import pytest
from conftest import build_steps, export_tied_gpt

from dpc import models, tools
from dpc.interpreter import interpret
from dpc.train import hyperparameters, initial_inputs
from dpc.train import train as run_steps

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DPC_OPT = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")),
                       "bin", "dpc-opt")
STEPS = 3
# name: (mesh, dp, tp, ZeRO stage)
STRATEGIES = {
    "dp": ("2", 2, 1, 0),
    "tp": ("4", 1, 4, 0),
    "dp-tp": ("2x2", 2, 2, 0),
    "zero1": ("2x2", 2, 2, 1),
    "zero2": ("2x2", 2, 2, 2),
    "zero3": ("2x2", 2, 2, 3),
    "dp-tp-2x4": ("2x4", 2, 4, 1),
    # Data-parallel ranks neighbouring, tensor-parallel ones apart.
    "dp-inner": ("2x2", 2, 2, 1),
}
# dpc-opt flags of a strategy beyond its degrees.
EXTRA_FLAGS = {"dp-inner": ["--inner-axis=dp"]}


@pytest.fixture(scope="module")
def steps(exported, tmp_path_factory):
    """The AdamW step of every bundled model, as IR."""
    return build_steps(exported, tmp_path_factory.mktemp("steps"), "--weight-decay=0.01")


def train(step_mlir, inputs, hyper, precision):
    return run_steps(step_mlir, inputs, hyper, STEPS, precision)


def partition(step_mlir, path, mesh, dp, tp, zero, *extra):
    r = subprocess.run([DPC_OPT, step_mlir, "--mesh=" + mesh, "--dp=%d" % dp,
                        "--tp=%d" % tp, "--pp=1", "--zero=%d" % zero, "--partition",
                        *extra, "-o", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return open(path).read()


_reference = {}


def reference(steps, exported, name, precision):
    key = (name, precision)
    if key not in _reference:
        inputs, hyper = initial_inputs(steps[name], exported[name][0], name)
        _reference[key] = (inputs, hyper, train(steps[name], inputs, hyper, precision))
    return _reference[key]


def assert_same(expected, actual, rtol, atol, scaled_atol=0.0):
    """Every tensor equal within rtol, or within `atol` and `scaled_atol`
    times the tensor's largest magnitude. The latter is for Adam: a gradient
    element that is zero but for rounding (batch norm subtracts its mean)
    rounds otherwise when the ranks sum in another order, and Adam divides
    it by its own size plus eps, so the update moves it by about
    lr * rounding / eps, a rounding of the tensor's scale, not its own."""
    assert sorted(actual) == sorted(expected)
    for key in expected:
        bound = scaled_atol * float(np.max(np.abs(expected[key]), initial=0.0))
        np.testing.assert_allclose(actual[key], expected[key], rtol=rtol,
                                   atol=max(atol, bound), err_msg=key)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_ranks_equal_one_device_fp64(steps, exported, tmp_path, name, strategy):
    inputs, hyper, (expected, losses) = reference(steps, exported, name, "fp64")
    mesh, dp, tp, zero = STRATEGIES[strategy]
    path = str(tmp_path / "partitioned.mlir")
    text = partition(steps[name], path, mesh, dp, tp, zero, *EXTRA_FLAGS.get(strategy, []))
    assert "dpc.reshard" not in text and "attributes {dpc.partitioned}" in text
    if strategy == "dp-inner":
        assert 'dpc.mesh @plan ["pp"=1, "tp"=2, "dp"=2]' in text
    actual, actual_losses = train(path, inputs, hyper, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert_same(expected, actual, rtol=1e-8, atol=1e-12, scaled_atol=1e-8)


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_ranks_equal_one_device_fp32(steps, exported, tmp_path, name):
    """In fp32 the ranks sum in another order than one device, and Adam
    magnifies that where it divides a gradient near zero by its own size:
    the losses agree within rtol 1e-5, and every tensor of the partitioned
    step is within 1e-5 of the fp64 step (relative, in norm), or no farther
    from it than ten times the single-device fp32 step is. Partial sums
    rounded to fp32 before the ranks add them lose more where the terms
    cancel: resnet18's batch-norm bias gradients, 2.5e-5 against 3.8e-6.
    A wrong partition is off by far more (the fp64 test bounds it to
    1e-8)."""
    inputs, hyper, (expected, losses) = reference(steps, exported, name, "fp32")
    _, _, (exact, _) = reference(steps, exported, name, "fp64")
    path = str(tmp_path / "partitioned.mlir")
    partition(steps[name], path, "2x2", 2, 2, 3)
    actual, actual_losses = train(path, inputs, hyper, "fp32")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-5)
    for key in expected:
        scale = np.linalg.norm(exact[key].ravel()) + 1e-30
        one = np.linalg.norm((expected[key] - exact[key]).ravel()) / scale
        ranks = np.linalg.norm((actual[key] - exact[key]).ravel()) / scale
        assert ranks <= max(10 * one, 1e-5), (key, ranks, one)


def test_a_split_mean_weights_ranks_by_their_kept_samples(steps, exported, tmp_path):
    """Four ranks split the MLP's batch of four; three samples are ignored,
    so one rank holds the only sample counted. The loss is that sample's,
    as on one device, not a quarter of it."""
    inputs, hyper = initial_inputs(steps["mlp"], exported["mlp"][0], "mlp")
    inputs["target"] = np.array([-100, -100, 3, -100], np.int64)
    state = dict(inputs, **hyperparameters(hyper, 1))
    expected = interpret(steps["mlp"], state, function="train_step", precision="fp64")
    path = str(tmp_path / "partitioned.mlir")
    partition(steps["mlp"], path, "4", 4, 1, 0)
    actual = interpret(path, state, function="train_step", precision="fp64")
    assert_same(expected, actual, rtol=1e-10, atol=1e-14)
    assert float(actual["loss"]) > 0


@pytest.mark.parametrize("name, mesh, dp, tp, recompute", [
    ("gpt", "2", 1, 2, "on"), ("transformer", "2", 2, 1, "on"), ("gpt", "2x2", 2, 2, "on"),
    ("gpt", "2", 1, 2, "attention"), ("transformer", "2x2", 2, 2, "attention")])
def test_recomputation_equals_one_device(steps, exported, tmp_path, name, mesh, dp, tp,
                                         recompute):
    """A plan with recomputation is built (-dpc-recompute-layers): the
    backward pass keeps each layer's input and runs the forward's other ops
    again (more contractions in the backward pass than without), or, with
    selective recomputation, keeps each attention's queries and keys and
    runs its scores' contraction and softmax again; after 3 AdamW steps
    everything equals the single-device step (fp64)."""
    inputs, hyper, (expected, losses) = reference(steps, exported, name, "fp64")
    def partitioned(path, recompute):
        r = subprocess.run([DPC_OPT, steps[name], "--mesh=" + mesh, "--dp=%d" % dp,
                            "--tp=%d" % tp, "--pp=1", "--recompute=" + recompute, "--partition",
                            "-o", path], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        text = open(path).read()
        counts = [len(re.findall(r"dpc\.%s [^\n]*phase<backward>" % op, text))
                  for op in ("matmul", "softmax")]
        return counts, text
    on, text = partitioned(str(tmp_path / "on.mlir"), recompute)
    off, _ = partitioned(str(tmp_path / "off.mlir"), "off")
    if recompute == "on":
        assert "dpc.checkpoint" in text and "recompute = true" in text
        assert on[0] > off[0], (on, off)
    else:
        assert "dpc.recompute" in text and "recompute_attention = true" in text
        assert "dpc.checkpoint" not in text
        # One more contraction (the scores) and one softmax per attention.
        assert on[1] > off[1] and on[0] - off[0] == on[1] - off[1], (on, off)
    actual, actual_losses = train(str(tmp_path / "on.mlir"), inputs, hyper, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert_same(expected, actual, rtol=1e-8, atol=1e-12)


def test_gradients_reduce_in_buckets(steps, exported, tmp_path):
    """Data-parallel gradient all-reduces are fused into 25 MiB buckets: the
    GPT's gradients, well under 25 MiB, take one all-reduce, in the
    backward pass of @forward_backward (as against one per parameter with
    --bucket-cap-mb tiny), and the result is the same."""
    def partitioned(path, *flags):
        r = subprocess.run([DPC_OPT, steps["gpt"], "--mesh=2", "--dp=2", "--tp=1", "--pp=1",
                            "--zero=0", "--partition", *flags, "-o", path],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        # Reductions of tensors, not of the scalar loss and sample count.
        return len(re.findall(r"dpc\.all_reduce [^\n]*: tensor<\d", open(path).read()))
    bucketed, apart = str(tmp_path / "bucketed.mlir"), str(tmp_path / "apart.mlir")
    n_bucketed = partitioned(bucketed)
    n_apart = partitioned(apart, "--bucket-cap-mb=0.000001")
    # One per parameter: the token embedding's too, scattered from each
    # rank's own tokens.
    params = len(tools.signature(open(steps["gpt"]).read(), function="train_step")["param"])
    assert n_apart == params
    assert n_bucketed == 1, n_bucketed
    inputs, hyper = initial_inputs(steps["gpt"], exported["gpt"][0], "gpt")
    a, _ = train(bucketed, inputs, hyper, "fp64")
    b, _ = train(apart, inputs, hyper, "fp64")
    assert_same(a, b, rtol=0, atol=0)


def test_zero_parameter_gathers_share_buckets(steps, exported, tmp_path):
    """ZeRO-1's all-gathers of the updated parameter blocks are bucketed
    like the gradients: the GPT's 32 (one per parameter with a tiny cap)
    become 4 (those of tensors gathered along dimension 0 share one; the
    others stay), and the step is the same."""
    def partitioned(path, *flags):
        r = subprocess.run([DPC_OPT, steps["gpt"], "--mesh=2", "--dp=2", "--tp=1", "--pp=1",
                            "--zero=1", "--partition", *flags, "-o", path],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return open(path).read().count("dpc.all_gather ")
    bucketed, apart = str(tmp_path / "bucketed.mlir"), str(tmp_path / "apart.mlir")
    assert partitioned(bucketed) < partitioned(apart, "--bucket-cap-mb=0.000001") // 4
    inputs, hyper = initial_inputs(steps["gpt"], exported["gpt"][0], "gpt")
    a, _ = train(bucketed, inputs, hyper, "fp64")
    b, _ = train(apart, inputs, hyper, "fp64")
    assert_same(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("compression", ["bf16", "fp16", "topk:0.5", "topk:1"])
def test_compressed_gradients_train_like_uncompressed(steps, exported, tmp_path, compression):
    """Data-parallel gradients sent in bf16, fp16, or as their largest half
    with error feedback: 50 AdamW steps (lr 1e-3) on the MLP's batch end
    within 2% of the loss with fp32 gradients, and the reductions really
    are compressed. Sending every entry (topk:1) is the uncompressed step
    exactly. (Sparser top-k trains slower here: topk:0.25 ends 15% higher,
    topk:0.1 35%.)"""
    inputs, hyper = initial_inputs(steps["mlp"], exported["mlp"][0], "mlp")
    losses = {}
    for mode in ("none", compression):
        path = str(tmp_path / (mode.replace(":", "-") + ".mlir"))
        r = subprocess.run([DPC_OPT, steps["mlp"], "--mesh=2", "--dp=2", "--tp=1", "--pp=1",
                            "--zero=0", "--partition", "--grad-compression=" + mode,
                            "-o", path], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        text = open(path).read()
        reduced = [line for line in text.splitlines()
                   if "dpc.all_reduce" in line and "tensor<f32>" not in line]
        if mode == "none":
            assert reduced and all("xf32>" in line for line in reduced), reduced
        elif mode.startswith("topk"):
            assert not reduced, reduced
            assert "dpc.top_k" in text and ":topk_residual" in text
            assert "top-k gradient compression: each rank sends" in r.stderr
        else:
            narrow = {"bf16": "xbf16>", "fp16": "xf16>"}[mode]
            assert reduced and all(narrow in line for line in reduced), reduced
        run_inputs, _ = initial_inputs(path, exported["mlp"][0], "mlp")
        run_inputs.update(inputs)
        _, curve = run_steps(path, run_inputs, hyper, 50, lr=0.001)
        losses[mode] = curve[-1]
    first = curve[0]
    assert losses["none"] < 0.6 * first, (first, losses)
    if compression == "topk:1":
        assert losses[compression] == losses["none"], losses
    assert abs(losses[compression] - losses["none"]) <= 0.02 * losses["none"], losses


HIERARCHICAL = """
module attributes {dpc.plan = {cluster = "h100-sxm"}} {
  dpc.mesh @plan ["pp"=1, "dp"=16, "tp"=1]
  func.func @reduce(%x: tensor<1x3xf32> {dpc.input = "x", dpc.sharding = #dpc.sharding<@plan, [dp, *]>})
      -> (tensor<3xf32> {dpc.output = "sum", dpc.sharding = #dpc.sharding<@plan, [*]>},
          tensor<3xf32> {dpc.output = "max", dpc.sharding = #dpc.sharding<@plan, [*]>})
      attributes {dpc.partitioned} {
    %0 = dpc.reshape %x : tensor<1x3xf32> -> tensor<3xf32>
    %1 = dpc.all_reduce %0 over @plan ["dp"] <sum> : tensor<3xf32>
    %2 = dpc.all_reduce %0 over @plan ["dp"] <max> : tensor<3xf32>
    return %1, %2 : tensor<3xf32>, tensor<3xf32>
  }
}
"""


def test_hierarchical_all_reduce_on_two_nodes(tmp_path):
    """16 ranks on two nodes of 8: the all-reduces, made hierarchical
    (within the node, across nodes, within again, on a mesh whose dp axis
    is split at the node boundary, the data padded to a multiple of 8),
    give what the flat ones give, on 16 simulated ranks."""
    flat = tmp_path / "flat.mlir"
    flat.write_text(HIERARCHICAL)
    lowered = str(tmp_path / "hierarchical.mlir")
    r = subprocess.run([DPC_OPT, str(flat), "-dpc-topology-aware-collectives", "-o", lowered],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = open(lowered).read()
    assert text.count('over @plan_by_node ["dp_local"]') == 4, text
    x = np.random.default_rng(1).standard_normal((16, 3))
    for path in (str(flat), lowered):
        out = interpret(path, {"x": x}, function="reduce", precision="fp64")
        np.testing.assert_allclose(out["sum"], x.sum(0), rtol=1e-12)
        np.testing.assert_array_equal(out["max"], x.max(0))


SPLIT_LOOKUPS = """
dpc.mesh @plan ["dp"=2, "tp"=2]
func.func @lookup(%table: tensor<6x3xf32> {dpc.input = "table", dpc.sharding = #dpc.sharding<@plan, [tp, *]>},
                  %ids: tensor<2x4xi64> {dpc.input = "ids", dpc.sharding = #dpc.sharding<@plan, [dp, *]>},
                  %x: tensor<8x3xf32> {dpc.input = "x", dpc.sharding = #dpc.sharding<@plan, [(dp, tp), *]>},
                  %seed: tensor<i64> {dpc.input = "seed", dpc.sharding = #dpc.sharding<@plan, []>},
                  %offset: tensor<i64> {dpc.input = "offset", dpc.sharding = #dpc.sharding<@plan, []>})
    -> (tensor<2x4x3xf32> {dpc.output = "rows", dpc.sharding = #dpc.sharding<@plan, [dp, *, *]>},
        tensor<8x3xf32> {dpc.output = "dropped", dpc.sharding = #dpc.sharding<@plan, [(dp, tp), *]>}) {
  %0 = dpc.gather %table[%ids] {axis = 0 : i64, dpc.sharding = [#dpc.sharding<@plan, [dp, *, *], partial = [tp : sum]>]} : (tensor<6x3xf32>, tensor<2x4xi64>) -> tensor<2x4x3xf32>
  %1 = dpc.reshard %0 <@plan, [dp, *, *]> : tensor<2x4x3xf32>
  %2 = dpc.dropout %x, %seed, %offset {ratio = 0.5 : f32, stream = 3 : i64, dpc.sharding = [#dpc.sharding<@plan, [(dp, tp), *]>]} : tensor<8x3xf32>
  return %1, %2 : tensor<2x4x3xf32>, tensor<8x3xf32>
}
"""


def test_split_lookup_and_dropout(tmp_path):
    """A vocabulary-parallel lookup (the table's rows split over tp; each
    rank looks up the ids it holds, zeros elsewhere, summed) and a dropout
    whose rows are split over four ranks (each rank's mask drawn at its
    rows' place in the whole tensor) give what one device gives."""
    planned = tmp_path / "planned.mlir"
    planned.write_text(SPLIT_LOOKUPS)
    partitioned = str(tmp_path / "partitioned.mlir")
    r = subprocess.run([DPC_OPT, str(planned), "-dpc-partition", "-o", partitioned],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rng = np.random.default_rng(2)
    inputs = {"table": rng.standard_normal((6, 3)).astype(np.float32),
              "ids": np.array([[5, 0, -1, 3], [2, 2, -6, 4]], np.int64),
              "x": rng.standard_normal((8, 3)).astype(np.float32),
              "seed": np.int64(7), "offset": np.int64(40)}
    one = interpret(str(planned), inputs, function="lookup")
    ranks = interpret(partitioned, inputs, function="lookup")
    np.testing.assert_array_equal(one["rows"], inputs["table"][inputs["ids"]])
    np.testing.assert_array_equal(ranks["rows"], one["rows"])
    np.testing.assert_array_equal(ranks["dropped"], one["dropped"])
    assert 0 < np.count_nonzero(one["dropped"]) < one["dropped"].size


@pytest.fixture(scope="module")
def micro_steps(exported, tmp_path_factory):
    """The AdamW steps accumulated over 2 micro-batches."""
    return build_steps(exported, tmp_path_factory.mktemp("micro"), "--weight-decay=0.01",
                       "--micro-batches=2")


def doubled_batch(step_mlir, inputs):
    """Inputs for a step over 2 micro-batches of the exported batch: the
    batch, then the batch with its last axis rolled by one."""
    wanted = tools.signature(open(step_mlir).read(), function="train_step")["input"]
    out = dict(inputs)
    for name, shape in wanted.items():
        if list(inputs[name].shape) != shape:
            out[name] = np.stack([inputs[name], np.roll(inputs[name], 1, axis=-1)])
    return out


PIPELINES = [("2", 1, 1, 2, "gpipe"), ("2", 1, 1, 2, "1f1b"), ("2x2", 1, 2, 2, "1f1b"),
             ("2x2", 2, 1, 2, "gpipe"), ("2x4", 2, 2, 2, "1f1b"),
             ("2", 1, 1, 2, "interleaved-1f1b"), ("2x2", 2, 1, 2, "interleaved-1f1b")]


@pytest.mark.parametrize("mesh, dp, tp, pp, schedule", PIPELINES)
@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_pipeline_equals_one_device(micro_steps, exported, tmp_path, name, mesh, dp, tp, pp,
                                    schedule):
    """Two pipeline stages (alone, with tensor or data parallelism, or both),
    2 micro-batches under GPipe or 1F1B: each stage runs its own program,
    activations and gradients go between stages by send/recv, and after 3
    AdamW steps everything equals the single-device step accumulating the
    same micro-batches (fp64)."""
    if name == "resnet18" and (mesh != "2" or schedule != "1f1b"):
        pytest.skip("resnet18 runs one pipeline layout (1F1B over two stages); the others "
                    "are the small models'")
    if mesh == "2x4" and name not in ("gpt", "mlp"):
        pytest.skip("dp x tp x pp on 8 ranks: the GPT and the MLP")
    step = micro_steps[name]
    inputs, hyper = initial_inputs(step, exported[name][0], name)
    inputs = doubled_batch(step, inputs)
    expected, losses = run_steps(step, inputs, hyper, STEPS, "fp64")
    path = str(tmp_path / "pipelined.mlir")
    r = subprocess.run([DPC_OPT, step, "--mesh=" + mesh, "--dp=%d" % dp, "--tp=%d" % tp,
                        "--pp=%d" % pp, "--partition", "--pipeline-schedule=" + schedule,
                        "-o", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = open(path).read()
    for stage in range(pp):
        assert "func.func @train_step.stage%d(" % stage in text
    assert "dpc.send" in text and "dpc.recv" in text
    # The squared gradient norm's running sum moves from stage to stage
    # (at most once per pipeline position), not one message per parameter.
    positions = pp * (2 if schedule == "interleaved-1f1b" else 1)
    scalars = [line for line in text.splitlines()
               if "dpc.send" in line and "phase<optimizer>" in line and ": tensor<f32>" in line]
    assert len(scalars) <= positions, scalars
    actual, actual_losses = run_steps(path, inputs, hyper, STEPS, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert_same(expected, actual, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", ["gpt", "mlp"])
def test_pipeline_with_gradient_clipping(exported, tmp_path, name):
    """Clipping by the global gradient norm: the last stage sums the stages'
    squared norms and sends the factor back, received only once the stages
    could have sent their part (a receive placed first would deadlock);
    the result equals one device."""
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, os.path.join(exported[name][0], name + ".onnx"), "--train",
                    "--optimizer=adamw", "--max-grad-norm=0.5", "--micro-batches=2",
                    "-o", step], check=True)
    inputs, hyper = initial_inputs(step, exported[name][0], name)
    inputs = doubled_batch(step, inputs)
    expected, losses = run_steps(step, inputs, hyper, STEPS, "fp64")
    path = str(tmp_path / "pipelined.mlir")
    r = subprocess.run([DPC_OPT, step, "--mesh=2x2", "--dp=2", "--tp=1", "--pp=2",
                        "--partition", "-o", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # Each stage updates its own parameters: between stages the optimizer
    # sends only scalars (the squared norm's partial sum, the total, the
    # clipping factor), never a gradient or a moment.
    sends = [line for line in open(path) if "dpc.send" in line and "phase<optimizer>" in line]
    assert all(line.rstrip().endswith(": tensor<f32>") for line in sends), sends
    assert len(sends) <= 3, sends
    actual, actual_losses = run_steps(path, inputs, hyper, STEPS, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert_same(expected, actual, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_pipeline_with_tied_weights(tmp_path, precision):
    """GPT-2 style tied embedding and head on two stages: the first stage
    looks the tokens up and the last projects onto the same weight. Its
    gradient, summed from both stages' contributions, and its update equal
    one device's. In bf16 the first stage sends the weight's bf16 copy,
    once a step (each of the 2 micro-batches used to cast and send it)."""
    meta = export_tied_gpt(tmp_path)
    assert "net.head.weight" not in meta["params"]
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, str(tmp_path / "tied_gpt.onnx"), "--train", "--optimizer=adamw",
                    "--micro-batches=2", "--precision=" + precision, "-o", step], check=True)
    inputs, hyper = initial_inputs(step, str(tmp_path), "tied_gpt")
    inputs = doubled_batch(step, inputs)
    expected, losses = run_steps(step, inputs, hyper, STEPS, "fp64")
    path = str(tmp_path / "pipelined.mlir")
    r = subprocess.run([DPC_OPT, step, "--mesh=2", "--dp=1", "--tp=1", "--pp=2", "--partition",
                        "-o", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # The first stage keeps the tied weight (its lookup reads it, its update
    # makes it) and sends it (or its bf16 copy) to the last as the step
    # begins, whose head reads what it receives, not a copy of its own.
    text = open(path).read()
    sent = "tensor<50x32x%s>" % ("bf16" if precision == "bf16" else "f32")
    for stage in (0, 1):
        program = text[text.index("func.func @train_step.stage%d(" % stage):]
        program = program[:program.index("\n  }\n")]
        weight = re.search(r'(%arg\d+): tensor<50x32xf32> \{dpc\.param = "net\.tok\.weight"',
                           program).group(1)
        body = program[program.index("{\n"):]
        if stage == 0:
            sends = re.findall(r"dpc\.send (%\w+) over @plan \[\"pp\"\] shift 1 [^\n]*: "
                               + re.escape(sent), body)
            assert len(sends) == 1, sends
            if precision == "fp32":
                assert sends == [weight]
        else:
            assert not re.search(re.escape(weight) + r"\b", body)
            assert len(re.findall(r"dpc\.recv over @plan \[\"pp\"\] shift 1 [^\n]*: "
                                  + re.escape(sent), body)) == 1
    actual, actual_losses = run_steps(path, inputs, hyper, STEPS, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert_same(expected, actual, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("zero", [1, 2])
def test_zero_sharded_masters_train_as_whole_ones(exported, tmp_path, zero):
    """Under mixed precision (bf16 copies of fp32 masters) ZeRO-1/2 keep
    each rank's block of the masters and gather the bf16 copies cast from
    the blocks, where ZeRO-0 keeps whole masters and casts them. A block's
    cast is the whole's cast's block, so after 3 AdamW steps on the GPT over
    dp2 x tp2 the losses, masters and moments are ZeRO-0's."""
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, os.path.join(exported["gpt"][0], "gpt.onnx"), "--train",
                    "--optimizer=adamw", "--precision=bf16", "-o", step], check=True)
    inputs, hyper = initial_inputs(step, exported["gpt"][0], "gpt")
    whole, sharded = str(tmp_path / "zero0.mlir"), str(tmp_path / "sharded.mlir")
    partition(step, whole, "2x2", 2, 2, 0)
    text = partition(step, sharded, "2x2", 2, 2, zero)
    train_step = text[text.index("func.func @train_step"):]
    # Every weight matrix's master arrives as a block over dp.
    masters = re.findall(r'tensor<\d+x\d+xf32> \{dpc\.param = "([^"]+)", '
                         r'dpc\.sharding = #dpc\.sharding<@plan, \[([^]]*)\]', train_step)
    assert masters and all("dp" in layout for _, layout in masters), masters
    expected, losses = train(whole, inputs, hyper, "fp32")
    actual, actual_losses = train(sharded, inputs, hyper, "fp32")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-6)
    assert_same(expected, actual, rtol=1e-5, atol=1e-7)


def bf16_micro_batch_gpt(exported, tmp_path):
    """The GPT's bf16 AdamW step over 2 micro-batches, its inputs, and one
    device's STEPS steps in fp64: (step, inputs, hyper, tensors, losses)."""
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, os.path.join(exported["gpt"][0], "gpt.onnx"), "--train",
                    "--optimizer=adamw", "--precision=bf16", "--micro-batches=2",
                    "-o", step], check=True)
    inputs, hyper = initial_inputs(step, exported["gpt"][0], "gpt")
    inputs = doubled_batch(step, inputs)
    expected, losses = run_steps(step, inputs, hyper, STEPS, "fp64")
    return step, inputs, hyper, expected, losses


@pytest.mark.parametrize("zero", [0, 1])
def test_mixed_precision_micro_batches_reduce_once(exported, tmp_path, zero):
    """Under mixed precision over two micro-batches each rank's bf16 weight
    gradient is cast to fp32 with its sum still pending, the step adds the
    micro-batches' terms and reduces the sum once, where the optimizer
    reads it (before, each micro-batch's bf16 gradients were all-reduced
    inside its pass). No weight gradient is reduced inside the first
    micro-batch's pass, and the GPT over dp2 x tp2 (in fp64, where bf16
    computes as double) equals one device's step over the same
    micro-batches after 3 AdamW steps."""
    step, inputs, hyper, expected, losses = bf16_micro_batch_gpt(exported, tmp_path)
    path = str(tmp_path / "partitioned.mlir")
    text = partition(step, path, "2x2", 2, 2, zero)
    first_pass = text[text.index("func.func @forward_backward"):
                      text.index("func.func @train_step")]
    assert not re.search(r"dpc\.(all_reduce|reduce_scatter) [^\n]*<sum>[^\n]*"
                         r": tensor<\d{2,}", first_pass)
    train_step = text[text.index("func.func @train_step"):]
    assert re.search(r"dpc\.all_reduce [^\n]*over @plan \[\"dp\"\] <sum>[^\n]*"
                     r"phase<optimizer>[^\n]*: tensor<\d{3,}xf32>", train_step) or \
        re.search(r"dpc\.reduce_scatter [^\n]*over @plan \[\"dp\"\] <sum>[^\n]*"
                  r"phase<optimizer>[^\n]*xf32>", train_step)
    actual, actual_losses = run_steps(path, inputs, hyper, STEPS, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert_same(expected, actual, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("zero", [1, 2])
def test_pipelined_zero_shards_masters_over_micro_batches(exported, tmp_path, zero):
    """On pipeline stages ZeRO-1/2 keep blocks of the bf16 copies' fp32
    masters over several micro-batches too: the stages inline their
    micro-batches, and each copy's block is cast and gathered over dp once
    a step, for every micro-batch (the first micro-batch's gather serves
    the others). The GPT over dp2 x pp2, 2 micro-batches, 3 AdamW steps in
    fp64 equals one device's step."""
    step, inputs, hyper, expected, losses = bf16_micro_batch_gpt(exported, tmp_path)
    path = str(tmp_path / "pipelined.mlir")
    r = subprocess.run([DPC_OPT, step, "--mesh=2x2", "--dp=2", "--tp=1", "--pp=2",
                        "--zero=%d" % zero, "--pipeline-schedule=1f1b", "--partition",
                        "-o", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = open(path).read()
    for stage in (0, 1):
        program = text[text.index("func.func @train_step.stage%d(" % stage):]
        program = program[:program.index("\n  }\n")]
        masters = re.findall(r'tensor<\d+x\d+xf32> \{dpc\.param = "[^"]+", '
                             r'dpc\.sharding = #dpc\.sharding<@plan, \[([^]]*)\]', program)
        assert masters and all("dp" in layout for layout in masters), masters
        # Each gathered copy once a step: no bf16 gather repeats its operand.
        gathered = re.findall(r"dpc\.all_gather (%\w+) over @plan \[\"dp\"\][^\n]*xbf16>",
                              program)
        assert gathered and len(gathered) == len(set(gathered)), gathered
        assert len(re.findall(r"dpc\.all_gather [^\n]*over @plan \[\"dp\"\][^\n]*"
                              r"phase<forward>[^\n]*xbf16>", program)) <= len(masters)
    actual, actual_losses = run_steps(path, inputs, hyper, STEPS, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert_same(expected, actual, rtol=1e-8, atol=1e-12)
