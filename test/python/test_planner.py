"""The planner through dpc-opt: --mesh, --plan-only, --plan-report, the
--dp/--tp/--pp constraints, memory errors and the plan in the IR, on GPT
graphs small enough to build in a second."""

import json
import os
import re
import subprocess

import pytest

from dpc import gpt_onnx

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DPC_OPT = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")),
                       "bin", "dpc-opt")
SMALL = dict(hidden=128, heads=4, sequence=64, vocab=256, batch=16)


def _step(tmp_path, layers):
    """The bf16 AdamW training step of a small GPT, as IR."""
    if not os.path.exists(DPC_OPT):
        pytest.skip("dpc-opt is not built at %s" % DPC_OPT)
    onnx_path = str(tmp_path / ("gpt%d.onnx" % layers))
    gpt_onnx.write(gpt_onnx.GptConfig(layers=layers, **SMALL), onnx_path)
    step = str(tmp_path / ("gpt%d.mlir" % layers))
    subprocess.run([DPC_OPT, onnx_path, "--train", "--loss-output=loss", "--optimizer=adamw",
                    "--precision=bf16", "-mlir-print-debuginfo", "-o", step], check=True)
    return step


def _plan(step, tmp_path, *flags, name="plan"):
    report = str(tmp_path / (name + ".json"))
    r = subprocess.run([DPC_OPT, step, "--mesh=2x8", "--cluster=h100-sxm", "--plan-only",
                        "--plan-report=" + report, *flags], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(report) as f:
        return json.load(f), r.stdout


@pytest.fixture(scope="module")
def gpt4(tmp_path_factory):
    return _step(tmp_path_factory.mktemp("gpt"), 4)


def test_report_is_consistent(gpt4, tmp_path):
    plan, table = _plan(gpt4, tmp_path)
    dp, tp, pp = plan["dp"], plan["tp"], plan["pp"]
    assert dp * tp * pp == plan["devices"] == 16
    assert len(plan["stages"]) == pp
    # Each stage runs `chunks` contiguous ranges; by pipeline position
    # (chunk * pp + stage) they cover every segment in order.
    chunks = plan["chunks"] if plan["schedule"] == "interleaved-1f1b" else 1
    assert all(len(s["segment_ranges"]) == chunks for s in plan["stages"])
    ends = [plan["stages"][k % pp]["segment_ranges"][k // pp] for k in range(pp * chunks)]
    assert ends[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ends, ends[1:]))
    assert ends[-1][1] == plan["layer_groups"][-1]["end_segment"]
    totals = plan["totals"]
    assert totals["peak_memory_bytes"] <= totals["memory_limit_bytes"]
    assert totals["samples_per_s"] == pytest.approx(SMALL["batch"] / totals["step_time_s"])
    assert totals["tflops_per_device"] == pytest.approx(
        totals["model_flops"] / totals["step_time_s"] / 16 / 1e12)
    # Model FLOPs: 3x the forward, which holds Megatron-LM's matmul count
    # and a few percent of pointwise work.
    B, s, L, h, V = SMALL["batch"], SMALL["sequence"], 4, SMALL["hidden"], SMALL["vocab"]
    matmuls = 3 * (24 * B * s * L * h * h + 4 * B * s * s * L * h + 2 * B * s * h * V)
    assert matmuls <= totals["model_flops"] <= 1.1 * matmuls
    assert plan["micro_batch_size"] * plan["micro_batches"] * dp == SMALL["batch"]
    assert plan["planning"]["all_optimal"]
    assert "predicted step time" in table and "plan for 16 devices" in table
    # Bytes sent per step (test_communication_volume holds them against the
    # program): the busiest stage's, in the table.
    sent = [s["sent_bytes_per_step"] for s in plan["stages"]]
    busiest = max(sum(s.values()) for s in sent)
    line = re.search(r"sent per device per step ([0-9.e+]+) MB", table)
    assert float(line.group(1)) == pytest.approx(busiest / 1e6, rel=1e-3)
    if dp > 1:
        assert all(s["dp"] > 0 for s in sent)
    # The layer groups account for the stages: their repeats' compute and
    # model state add up to the stages' (repeats past the second cost what
    # the second does; the first may differ by where its input comes from).
    groups = plan["layer_groups"]
    compute = sum(g["repeats"] * g["repeat_compute_s"] for g in groups)
    assert compute == pytest.approx(sum(s["compute_s"] for s in plan["stages"]), rel=0.02)
    state = sum(g["repeats"] * g["repeat_model_state_bytes"] for g in groups)
    memory = [s["memory_bytes"] for s in plan["stages"]]
    assert state == pytest.approx(
        sum(m["parameters"] + m["gradients"] + m["optimizer_state"] for m in memory), rel=1e-9)
    assert all(g["devices"] == dp * tp for g in groups)


@pytest.mark.parametrize("zero", [0, 1, 3])
def test_model_state_per_parameter(gpt4, tmp_path, zero):
    """Mixed-precision AdamW holds 18 bytes per parameter before ZeRO: the
    fp32 parameter (the master), its bf16 cast (made once per step and read
    by every micro-batch), the fp32 gradient and Adam's two fp32 moments.
    The layer norms compute in fp32: their weights and biases (two per
    norm, two norms per layer and a final one) have no bf16 copy. ZeRO-1
    shards the moments, and in a step of one micro-batch the masters of the
    bf16 copies too (Megatron-LM's distributed optimizer); ZeRO-3
    everything."""
    plan, _ = _plan(gpt4, tmp_path, "--dp=16", "--tp=1", "--pp=1", "--zero=%d" % zero,
                    name="zero%d" % zero)
    (stage,) = plan["stages"]
    n, memory = stage["parameters"], stage["memory_bytes"]
    norms = 2 * (2 * 4 + 1) * SMALL["hidden"]
    shards = {0: (1, 1, 1), 1: (1, 1, 16), 3: (16, 16, 16)}[zero]
    copies = n - norms
    parameters = (n * 4 + copies * 2) / shards[0]
    if zero == 1 and plan["micro_batches"] == 1:
        parameters = norms * 4 + copies * (2 + 4 / 16)
    assert memory["parameters"] == pytest.approx(parameters, rel=1e-9)
    assert memory["gradients"] == pytest.approx(n * 4 / shards[1], rel=1e-9)
    assert memory["optimizer_state"] == pytest.approx(n * 8 / shards[2], rel=1e-9)


def test_constraints_are_honoured_and_cost_time(gpt4, tmp_path):
    free, _ = _plan(gpt4, tmp_path, name="free")
    fixed, _ = _plan(gpt4, tmp_path, "--tp=2", "--pp=2", name="fixed")
    assert (fixed["dp"], fixed["tp"], fixed["pp"]) == (4, 2, 2)
    assert fixed["totals"]["step_time_s"] >= free["totals"]["step_time_s"] * (1 - 1e-12)


def test_repeated_layers_are_planned_once(tmp_path):
    short, _ = _plan(_step(tmp_path, 2), tmp_path, "--tp=2", "--pp=1", name="short")
    deep, _ = _plan(_step(tmp_path, 8), tmp_path, "--tp=2", "--pp=1", name="deep")
    assert short["planning"]["integer_programs"] == deep["planning"]["integer_programs"]
    repeats = max(g["repeats"] for g in deep["layer_groups"])
    assert repeats == 8
    # Eight layers take longer than two, and at most four times as long
    # (the embedding, the head and per-step costs do not grow).
    ratio = deep["totals"]["step_time_s"] / short["totals"]["step_time_s"]
    assert 1.0 < ratio < 4.0


def test_no_plan_fits(gpt4, tmp_path):
    report = tmp_path / "never.json"
    r = subprocess.run([DPC_OPT, gpt4, "--mesh=2x8", "--memory-limit=0.0001",
                        "--plan-only", "--plan-report=%s" % report],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert re.search(r"no plan fits in 0\.00 GiB per device: the leanest \(.*\) needs "
                     r"[0-9.]+ GiB on stage \d+, [0-9.]+ GiB short \(parameters", r.stderr), r.stderr
    assert not report.exists()


@pytest.mark.parametrize("limit, gib", [
    ("80GB", 80e9 / 2**30), ("75GiB", 75.0), ("75", 75.0), ("512MiB", 0.5),
    ("1.5TB", 1.5e12 / 2**30)])
def test_memory_limit_units(gpt4, tmp_path, limit, gib):
    plan, _ = _plan(gpt4, tmp_path, "--memory-limit=" + limit)
    assert plan["totals"]["memory_limit_bytes"] == pytest.approx(gib * 2**30, rel=1e-12)


@pytest.mark.parametrize("flags, message", [
    (["--mesh=2x8", "--tp=3"], "--dp/--tp/--pp ask for 3 devices"),
    (["--mesh=16x8", "--pp=32"], "--pp=32 is more stages than the model has layer segments"),
    (["--mesh=2x8", "--dp=16", "--tp=1", "--pp=1", "--cluster=nope"], "nope"),
    (["--plan-only"], "--plan-only and --plan-report need --mesh"),
    (["--mesh=2xq"], "2xq"),
    (["--mesh=2x8", "--memory-limit=80XB"], "'80XB' has an unknown unit 'XB'"),
    (["--mesh=2x8", "--memory-limit=-3"], "'-3' is not a positive size"),
])
def test_bad_requests(gpt4, flags, message):
    r = subprocess.run([DPC_OPT, gpt4, *flags], capture_output=True, text=True)
    assert r.returncode == 1
    assert message in r.stderr
    assert "see current operation" not in r.stderr


def _planned(gpt4, tmp_path, *flags):
    """The planned step, checked by -dpc-verify-shardings: every value has
    a sharding, every layout change is an explicit reshard, and every
    result follows from its operands by its op's sharding rule."""
    out = str(tmp_path / "planned.mlir")
    r = subprocess.run([DPC_OPT, gpt4, "--mesh=2x8", *flags, "-dpc-verify-shardings",
                        "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return open(out).read()


# A value's layout as printed inside #dpc.sharding<@plan, ...>.
SHARDING = r"#dpc\.sharding<@plan, ([^>]*)>"


def test_plan_is_in_the_ir(gpt4, tmp_path):
    text = _planned(gpt4, tmp_path, "--tp=2", "--pp=1")
    plan = re.search(r"dpc\.plan = \{([^}]*)\}", text).group(1)
    assert "dp = 8 : i64" in plan and "tp = 2 : i64" in plan and "pp = 1 : i64" in plan
    # With --tp fixed, either axis may be the innermost (the cheaper).
    assert ('dpc.mesh @plan ["pp"=1, "dp"=8, "tp"=2]' in text or
            'dpc.mesh @plan ["pp"=1, "tp"=2, "dp"=8]' in text)
    body = text[text.index("func.func @forward_backward"):]
    forward = body[:body.index("softmax_cross_entropy")]
    # The tensor axis splits something in every layer (weights for large
    # models, the batch or sequence for a model this small).
    assert re.search(r"dpc\.matmul [^\n]*dpc\.sharding = \[#dpc\.sharding<@plan, \[[^>]*tp", forward)
    # Changes of layout are explicit, and the strategies' operand layouts
    # are consumed by them.
    assert "dpc.reshard" in forward
    assert "dpc.operand_shardings" not in text


def test_a_built_plan_keeps_the_steps_micro_batching(gpt4, tmp_path):
    """The partition runs the step's own micro-batches (here one: the
    model's 16 samples), so a plan written onto the IR prices exactly that;
    only --plan-only may advise another micro-batching, and says how to
    build it. (A built plan used to price the free micro-batching: dpc-run
    then measured 4.8-7.7 times the memory predicted.)"""
    flags = ("--dp=2", "--tp=1", "--pp=8")
    free, table = _plan(gpt4, tmp_path, *flags)
    assert free["step_micro_batches"] == 1
    assert free["micro_batches"] > 1, "the free plan no longer micro-batches: pick another"
    assert ("to build this plan, export the model with a batch of %d and build the step "
            "with --micro-batches=%d" % (2 * free["micro_batch_size"],
                                         free["micro_batches"])) in table
    report = str(tmp_path / "built.json")
    text = _planned(gpt4, tmp_path, *flags, "--plan-report=" + report)
    built = json.load(open(report))
    assert (built["micro_batches"], built["micro_batch_size"]) == (1, 8)
    assert "micro_batch_size = 8 : i64, micro_batches = 1 : i64" in text
    assert built["totals"]["step_time_s"] > free["totals"]["step_time_s"]


def _function(text, name):
    """(header, body) of func.func @name in printed IR."""
    start = text.index("func.func @" + name)
    end = text.index("\n  }\n", start)
    header, body = text[start:end].split("\n", 1)
    return header, body


@pytest.mark.parametrize("dp, tp, pp", [(2, 4, 2), (1, 4, 4), (4, 1, 4)])
def test_every_value_of_the_step_is_sharded(gpt4, tmp_path, dp, tp, pp):
    text = _planned(gpt4, tmp_path, "--dp=%d" % dp, "--tp=%d" % tp, "--pp=%d" % pp)
    for name in ("forward_backward", "train_step"):
        _, body = _function(text, name)
        for line in body.splitlines():
            stage = re.search(r"dpc\.stage = (\d+)", line)
            assert not stage or int(stage.group(1)) < pp, line

    header, body = _function(text, "forward_backward")
    args = dict(re.findall(r'dpc\.param = "([^"]+)", dpc\.sharding = ' + SHARDING, header))
    grads = dict(re.findall(r'dpc\.grad = "([^"]+)", dpc\.sharding = ' + SHARDING, header))
    assert args and set(grads) == set(args)
    zero = int(re.search(r"zero_stage = (\d+)", text).group(1))
    for param, sharding in args.items():
        # A gradient leaves laid out like its parameter, a partial sum
        # (accumulated over micro-batches) or reduced; under ZeRO reduced into the shard its replica updates: the first
        # whole dimension the data axis divides split over it.
        layouts = [re.escape(sharding)]
        if zero >= 1:
            dims = sharding[1:-1].split(", ")
            for i, d in enumerate(dims):
                if d == "*":
                    layouts.append(re.escape("[" + ", ".join(dims[:i] + ["dp"] + dims[i + 1:])
                                             + "]"))
        assert re.fullmatch("(" + "|".join(layouts) + ")" +
                            r"(, partial = \[(dp : sum|tp : sum|dp : sum, tp : sum)\])?",
                            grads[param]), (param, sharding, grads[param])
    # Accumulated over micro-batches, gradients leave with their sums over
    # dp pending (reduced once, after the last); otherwise they are reduced
    # inside @forward_backward, where that overlaps the backward pass.
    calls = _function(text, "train_step")[1].count("call @forward_backward")
    accumulated = calls > 1 and zero <= 1
    assert dp == 1 or accumulated == any("partial = [dp : sum" in g for g in grads.values())

    # Each gradient is made on its parameter's stage.
    returned = [v.strip() for v in re.search(r"return ([^:]*):", body).group(1).split(",")]
    grad_names = re.findall(r'tensor<[^>]*> \{(?:dpc\.grad = "([^"]+)"|[^}]*)', header.split(") -> (")[1])
    stage_of = {}
    for line in body.splitlines():
        m = re.match(r"\s*(%[\w#:]+) = .*dpc\.stage = (\d+)", line)
        if m:
            stage_of[m.group(1).split(":")[0]] = int(m.group(2))
    assert set(stage_of.values()) == set(range(pp))
    first_use = {}
    arg_names = re.findall(r'(%arg\d+): [^{]*\{[^}]*?dpc\.param = "([^"]+)"', header)
    for arg, param in arg_names:
        for line in body.splitlines():
            if re.search(re.escape(arg) + r"\b", line) and "dpc.stage" in line:
                first_use[param] = int(re.search(r"dpc\.stage = (\d+)", line).group(1))
                break
    for value, param in zip(returned, grad_names):
        if param:
            assert stage_of[value] == first_use[param], (param, value)

    # The optimizer returns each parameter as the next step expects it.
    header, _ = _function(text, "train_step")
    inputs, outputs = header.split(") -> (")
    param_in = dict(re.findall(r'dpc\.param = "([^"]+)", dpc\.sharding = ' + SHARDING, inputs))
    param_out = dict(re.findall(r'dpc\.param = "([^"]+)", dpc\.sharding = ' + SHARDING, outputs))
    assert param_in == args and param_out == args
    # ZeRO-1 and up keep each replica's share of the optimizer state: split
    # over the data axis on top of the parameter's own layout.
    zero = int(re.search(r"zero_stage = (\d)", text).group(1))
    assert zero >= 1 or dp == 1
    if zero == 0:
        return
    state = re.findall(r'dpc\.opt_state = "([^":]+):\w+", dpc\.sharding = ' + SHARDING, inputs)
    assert state
    for param, sharding in state:
        assert "dp" in sharding, (param, sharding)
        # A parameter the plan splits over dp itself (an embedding table by
        # rows) has its state split alike.
        if "dp" in args[param]:
            assert sharding == args[param], (param, sharding)
            continue
        assert sharding.replace("(dp, tp)", "tp").replace("dp", "*") == args[param], \
            (param, sharding, args[param])


def test_mesh_shape_is_the_topology(gpt4, tmp_path):
    """--mesh=AxB is A nodes of B devices (B at most the preset's 8): one
    node of 8 plans alike however it is written, while 2 nodes of 4 and 4
    nodes of 2 cross the slower inter-node links and plan differently."""
    plans = {}
    for mesh in ("8", "1x8", "2x4", "4x2"):
        report = str(tmp_path / (mesh + ".json"))
        r = subprocess.run([DPC_OPT, gpt4, "--mesh=" + mesh, "--cluster=h100-sxm", "--plan-only",
                            "--plan-report=" + report], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(report) as f:
            plans[mesh] = json.load(f)
    assert [plans[m]["devices_per_node"] for m in ("8", "1x8", "2x4", "4x2")] == [8, 8, 4, 2]
    layout = lambda p: (p["dp"], p["tp"], p["pp"], p["totals"]["step_time_s"])
    assert layout(plans["8"]) == layout(plans["1x8"])
    assert plans["2x4"]["totals"]["step_time_s"] > plans["8"]["totals"]["step_time_s"]
    assert plans["4x2"]["totals"]["step_time_s"] > plans["2x4"]["totals"]["step_time_s"]


def _exposed_sync(step, tmp_path, name, *flags, cluster="h100-sxm"):
    """(gradient reduction, its exposed part) of the one stage of a plan
    built (not --plan-only) over 2 devices of data parallelism."""
    report = str(tmp_path / (name + ".json"))
    r = subprocess.run([DPC_OPT, step, "--mesh=2", "--dp=2", "--tp=1", "--pp=1",
                        "--cluster=" + cluster, "--plan-report=" + report, *flags,
                        "-o", os.devnull], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (stage,) = json.load(open(report))["stages"]
    return stage["gradient_sync_s"], stage["exposed_gradient_sync_s"]


def test_exposed_gradient_reduction_is_what_the_program_leaves(gpt4, tmp_path):
    """The gradient reduction is priced as the partitioned program runs it:
    in buckets inside the backward pass of a step of one micro-batch, the
    last bucket (made as the pass ends) never hidden; after the optimizer
    step, ZeRO-1's gather of the updated shards. (The plan used to hide it
    all behind the backward pass: the GPT's one 3.5 MB bucket measured 7.8
    ms of waits on a CPU host where 0 was predicted.) Over several
    micro-batches the same, behind the last micro-batch's backward pass
    (-dpc-reduce-in-last-micro-batch), unless the cluster names a runtime
    that hides it behind all of them, as Megatron-LM's published throughput
    is calibrated: exposed only beyond them."""
    sync, exposed = _exposed_sync(gpt4, tmp_path, "one-bucket")
    assert sync > 0 and exposed == pytest.approx(sync, rel=1e-9)
    sync, exposed = _exposed_sync(gpt4, tmp_path, "buckets", "--bucket-cap-mb=0.05")
    assert 0 < exposed < sync
    sync, exposed = _exposed_sync(gpt4, tmp_path, "zero1", "--zero=1")
    assert exposed == pytest.approx(sync, rel=1e-9)
    sync, exposed = _exposed_sync(gpt4, tmp_path, "zero1-buckets", "--zero=1",
                                  "--bucket-cap-mb=0.05")
    assert sync / 2 < exposed < sync
    onnx_path = str(tmp_path / "gpt.onnx")
    gpt_onnx.write(gpt_onnx.GptConfig(layers=4, **SMALL), onnx_path)
    accumulated = str(tmp_path / "accumulated.mlir")
    subprocess.run([DPC_OPT, onnx_path, "--train", "--loss-output=loss", "--optimizer=adamw",
                    "--precision=bf16", "--micro-batches=2", "-o", accumulated], check=True)
    sync, exposed = _exposed_sync(accumulated, tmp_path, "accumulated-one-bucket")
    assert sync > 0 and exposed == pytest.approx(sync, rel=1e-9)
    # On a link slow enough that the backward pass cannot hide the
    # reduction: over two micro-batches (each the model's batch, as one
    # micro-batch is) the reduction hides behind the last one's backward
    # pass only, as over one; a runtime hiding it behind every
    # micro-batch's backward pass hides twice as much.
    peaks = dict.fromkeys(("f64", "f32"), 67) | dict.fromkeys(("bf16", "f16"), 989)
    slow = {"name": "h100-sxm-slow-links", "devices_per_node": 8,
            "device": {"peak_tflops": peaks, "memory_gb": 80,
                       "memory_bandwidth_gb_per_s": 3350},
            "intra_node": {"bandwidth_gb_per_s": 0.05, "latency_us": 3},
            "inter_node": {"bandwidth_gb_per_s": 0.05, "latency_us": 10},
            "efficiency": {"compute": 0.54, "memory": 0.8, "communication": 0.8}}
    clusters = {}
    for name, extra in (("dpc", {}), ("megatron", {"gradient_sync_behind_all_micro_batches": True})):
        clusters[name] = str(tmp_path / (name + ".json"))
        with open(clusters[name], "w") as f:
            json.dump(dict(slow, **extra), f)
    sync1, exposed1 = _exposed_sync(gpt4, tmp_path, "slow-one", "--bucket-cap-mb=0.05",
                                    cluster=clusters["dpc"])
    sync2, exposed2 = _exposed_sync(accumulated, tmp_path, "slow-two", "--bucket-cap-mb=0.05",
                                    cluster=clusters["dpc"])
    # (The sum of two micro-batches is reduced once, in fp32: twice the bf16
    # bytes one micro-batch reduces, less the norms' parameters, reduced in
    # fp32 either way.)
    assert 1.99 * sync1 < sync2 < 2 * sync1
    assert 0 < exposed1 < sync1
    assert exposed2 - exposed1 == pytest.approx(sync2 - sync1, rel=1e-9)
    sync, behind_all = _exposed_sync(accumulated, tmp_path, "slow-behind-all",
                                     "--bucket-cap-mb=0.05", cluster=clusters["megatron"])
    assert sync == pytest.approx(sync2, rel=1e-9)
    assert sync - behind_all == pytest.approx(2 * (sync1 - exposed1), rel=1e-6)


def _contended_cluster(tmp_path, overlap):
    """A node of 8 devices whose links are fast for their compute (so that
    tensor parallelism pays on a small model) as a cluster file, its
    collectives hiding `overlap` of what the schedule overlaps with
    compute."""
    peaks = dict.fromkeys(("f64", "f32", "bf16", "f16"), 1)
    cluster = {"name": "overlap-%g" % overlap, "devices_per_node": 8,
               "device": {"peak_tflops": peaks, "memory_gb": 80,
                          "memory_bandwidth_gb_per_s": 3350},
               "intra_node": {"bandwidth_gb_per_s": 450, "latency_us": 3},
               "inter_node": {"bandwidth_gb_per_s": 50, "latency_us": 10},
               "efficiency": {"compute": 0.54, "memory": 0.8, "communication": 0.8,
                              "overlap": overlap}}
    path = str(tmp_path / (cluster["name"] + ".json"))
    with open(path, "w") as f:
        json.dump(cluster, f)
    return path


def _stage_on_clusters(step, tmp_path, clusters, *flags):
    """The report of the one stage of the plan built for `step` (with
    `flags`) on the first of `clusters`, priced on each of them
    (-dpc-plan-report of the planned IR with its cluster replaced)."""
    planned = str(tmp_path / "planned.mlir")
    r = subprocess.run([DPC_OPT, step, "--cluster=" + clusters[0], *flags, "-o", planned],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stages = []
    for cluster in clusters:
        moved, report = str(tmp_path / "moved.mlir"), str(tmp_path / "moved.json")
        with open(moved, "w") as f:
            f.write(open(planned).read().replace('cluster = "%s"' % clusters[0],
                                                 'cluster = "%s"' % cluster))
        r = subprocess.run([DPC_OPT, moved, "-dpc-plan-report=report=%s print-table=false"
                            % report, "-o", os.devnull], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        (stage,) = json.load(open(report))["stages"]
        stages.append(stage)
    return stages


def test_contention_leaves_overlapped_communication_exposed(gpt4, tmp_path):
    """Where collectives take the cores that compute (Gloo with a core per
    rank: `dpc-run --calibrate` measured 0-35% hidden), what the schedule
    overlaps with compute hides only as far as the cluster's
    `efficiency.overlap` says: the rest of it is exposed. (On the CPU host
    the bench GPT's ZeRO-3 plan was predicted 34 ms with its parameter
    gathers hidden and measured 60, 13 ms of it waiting on them; plain
    data parallelism, predicted slower, measured 50.)"""
    overlaps = (1, 0.25, 0)
    clusters = [_contended_cluster(tmp_path, overlap) for overlap in overlaps]
    stages = _stage_on_clusters(gpt4, tmp_path, clusters, "--mesh=2", "--dp=2", "--tp=1",
                                "--pp=1", "--zero=0", "--bucket-cap-mb=0.05")
    sync, scheduled = stages[0]["gradient_sync_s"], stages[0]["exposed_gradient_sync_s"]
    assert 0 < scheduled < sync
    for overlap, stage in zip(overlaps, stages):
        assert stage["gradient_sync_s"] == pytest.approx(sync, rel=1e-9)
        assert stage["exposed_gradient_sync_s"] == pytest.approx(
            scheduled + (1 - overlap) * (sync - scheduled), rel=1e-9)
    # Tensor-parallel collectives: half overlapped with the contraction
    # next to them (`exposed-tp-comm`), and that half hidden as far as the
    # cores allow. (One sequence: tp cannot split the batch instead.)
    onnx_path, single = str(tmp_path / "single.onnx"), str(tmp_path / "single.mlir")
    gpt_onnx.write(gpt_onnx.GptConfig(layers=2, **dict(SMALL, batch=1)), onnx_path)
    subprocess.run([DPC_OPT, onnx_path, "--train", "--loss-output=loss", "--optimizer=adamw",
                    "-o", single], check=True)
    hiding, contended = _stage_on_clusters(single, tmp_path, [clusters[0], clusters[2]],
                                           "--mesh=2", "--dp=1", "--tp=2", "--pp=1")
    assert hiding["exposed_communication_s"] > 0
    assert contended["exposed_communication_s"] == pytest.approx(
        2 * hiding["exposed_communication_s"], rel=1e-6)


def test_synchronized_ranks_wait_for_the_slowest(gpt4, tmp_path):
    """Every collective waits for the rank that the host's noise slowed
    most since the last one: a plan over more than one device pays the
    cluster's `rank_skew` of its compute (`dpc-run --calibrate` measures
    it: 2.5-3% on this project's VMs), and one device none."""
    totals = {}
    for skew in (0, 0.1):
        path = _contended_cluster(tmp_path, 1)
        cluster = json.load(open(path))
        cluster["rank_skew"] = skew
        with open(path, "w") as f:
            json.dump(cluster, f)
        for mesh, flags in (("2", ["--dp=2", "--tp=1", "--pp=1", "--zero=0"]), ("1", [])):
            report = str(tmp_path / ("skew-%g-%s.json" % (skew, mesh)))
            r = subprocess.run([DPC_OPT, gpt4, "--mesh=" + mesh, *flags, "--cluster=" + path,
                                "--plan-only", "--plan-report=" + report],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            plan = json.load(open(report))
            totals[skew, mesh] = plan["totals"]
            if skew and mesh == "2":
                (stage,) = plan["stages"]
                assert plan["micro_batches"] == 1
                assert plan["totals"]["rank_skew_s"] == pytest.approx(0.1 * stage["compute_s"],
                                                                    rel=1e-9)
                assert "rank skew" in r.stdout
    assert totals[0, "2"]["rank_skew_s"] == totals[0.1, "1"]["rank_skew_s"] == 0
    assert totals[0.1, "2"]["step_time_s"] - totals[0, "2"]["step_time_s"] == pytest.approx(
        totals[0.1, "2"]["rank_skew_s"], rel=1e-6)
    assert totals[0.1, "1"]["step_time_s"] == totals[0, "1"]["step_time_s"]


def _fp32_step(tmp_path):
    """The fp32 AdamW training step of the small GPT, as IR."""
    if not os.path.exists(DPC_OPT):
        pytest.skip("dpc-opt is not built at %s" % DPC_OPT)
    onnx_path, step = str(tmp_path / "gpt.onnx"), str(tmp_path / "gpt.mlir")
    gpt_onnx.write(gpt_onnx.GptConfig(layers=4, **SMALL), onnx_path)
    subprocess.run([DPC_OPT, onnx_path, "--train", "--loss-output=loss", "--optimizer=adamw",
                    "-o", step], check=True)
    return step


@pytest.mark.parametrize("flags, auto", [([], "none"), (["--dp=16"], "bf16")])
def test_planner_chooses_compression_when_allowed(tmp_path, flags, auto):
    """--grad-compression=auto lets the planner send the gradients in bf16
    where that makes the step at least 1% faster than sending them whole,
    and a list lets it choose among the compressions listed: the plan it
    picks is the fastest of the plans searched under each one alone, so
    weighed. The fp32 GPT on 16 devices of two nodes on 25 Gb/s links:
    free, bf16 is slower (0.8842 against 0.8826 ms) and not taken; over
    dp16 it is taken (0.9354 against 1.579 ms); a list with top-k takes
    top-k (0.53 and 0.62 ms). Before, auto was refused as not a
    compression."""
    step = _fp32_step(tmp_path)

    def plan(compression):
        report = str(tmp_path / (compression.replace(":", "-").replace(",", "_") + ".json"))
        r = subprocess.run([DPC_OPT, step, "--mesh=2x8", "--cluster=v100-16gb-25gbps",
                            "--plan-only", "--grad-compression=" + compression,
                            "--plan-report=" + report] + flags,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return json.load(open(report))

    alone = {c: plan(c) for c in ("none", "bf16", "topk:0.01")}
    step_time = lambda p: p["totals"]["step_time_s"]

    def expected(choices):
        # A compressed plan must beat the uncompressed one by 1%.
        weighed = {c: step_time(alone[c]) / (1.0 if c == "none" else 0.99) for c in choices}
        return min(choices, key=lambda c: weighed[c])

    for text, choices in (("auto", ["none", "bf16"]),
                          ("none,bf16,topk:0.01", ["none", "bf16", "topk:0.01"]),
                          ("bf16,topk:0.01", ["bf16", "topk:0.01"])):
        chosen = plan(text)
        assert chosen["grad_compression_choices"] == choices
        best = expected(choices)
        assert chosen["grad_compression"] == best, text
        assert step_time(chosen) == pytest.approx(step_time(alone[best]), rel=1e-9)
    # The cases the docstring names: bf16 saves 0.2% of the free plan's
    # step and 41% of dp16's; top-k (all-reduces under ZeRO-0) the most.
    assert expected(["none", "bf16"]) == auto
    assert expected(["none", "bf16", "topk:0.01"]) == "topk:0.01"


def test_compressed_gradients_are_priced(tmp_path):
    """--grad-compression is the user's choice (it changes the numerics),
    priced and recorded: the fp32 GPT data-parallel over 16 devices of two
    nodes on 25 Gb/s links sends half the bytes over dp in bf16 and a
    fraction under top-k (1% of the entries, with their i64 indices), and
    its gradient reduction takes accordingly less time. Before, every plan
    was priced as if the gradients were sent whole."""
    step = _fp32_step(tmp_path)
    plans = {}
    for compression in ("none", "bf16", "topk:0.01"):
        report = str(tmp_path / (compression.replace(":", "-") + ".json"))
        r = subprocess.run([DPC_OPT, step, "--mesh=2x8", "--cluster=v100-16gb-25gbps",
                            "--dp=16", "--tp=1", "--pp=1", "--zero=0", "--plan-only",
                            "--grad-compression=" + compression, "--plan-report=" + report],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        plans[compression] = json.load(open(report))
        assert plans[compression]["grad_compression"] == compression
    (none,), (bf16,), (topk,) = (plans[c]["stages"] for c in ("none", "bf16", "topk:0.01"))
    sent = lambda stage: stage["sent_bytes_per_step"]["dp"]
    assert sent(bf16) == pytest.approx(sent(none) / 2, rel=0.01)
    # An all-reduce sends 2(n-1)/n of the gradient, the two all-gathers
    # (n-1)/n of 16 ranks' entries of 4 + 8 bytes.
    assert sent(topk) == pytest.approx(sent(none) * 0.01 * 12 / 4 * 16 / 2, rel=0.02)
    assert topk["gradient_sync_s"] < bf16["gradient_sync_s"] < none["gradient_sync_s"]
    # Each rank keeps its residual: one fp32 element per parameter.
    residual = topk["memory_bytes"]["optimizer_state"] - none["memory_bytes"]["optimizer_state"]
    assert residual == pytest.approx(4 * none["parameters"], rel=1e-6)
