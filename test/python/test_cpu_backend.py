"""The compiled CPU backend trains what the interpreter trains. Each
bundled model's AdamW step is planned on a small mesh, partitioned,
compiled (dpc-opt --emit=cpu: generated C++, OpenBLAS, the runtime's
kernels) and trained by dpc-run over real processes talking Gloo on
loopback. After 3 steps its losses equal the single-device interpreter's
within rtol 1e-5, and every parameter, running statistic and optimizer slot
is within 1e-5 of the exact (fp64) single-device step, relative in norm, or
no farther from it than ten times the fp32 single-device step is: OpenBLAS
sums in fp32 and the ranks in another order, and Adam magnifies that where
it divides a gradient near zero by its own size (test_partition.py's
criterion). resnet18 is compared after one step: its convolutions sum in
fp32 through GEMM as PyTorch's do, and its gradients are then within 4e-6
of fp64 (PyTorch's fp32 gradients of the same model: 3e-6 to 5e-6), but
Adam's first step moves a weight by the learning rate times the sign of its
gradient, so the few gradient entries near zero whose sign fp32 rounding
flips move their weight the other way; each later step compounds that.
Its optimizer moments (the gradients) and running statistics are held to
1e-5, its weights to 1e-3. Faults end every rank with a message."""

import json
import os
import re
import subprocess

import numpy as np
import pytest
from conftest import build_steps, compile_artifact_once, export_tied_gpt

from dpc import tensor_name, tools
from dpc.train import initial_inputs
from dpc.train import train as run_steps

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BIN = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")), "bin")
DPC_OPT = os.path.join(BIN, "dpc-opt")
DPC_RUN = os.path.join(BIN, "dpc-run")
STEPS = 3
# dpc-opt --train flags of every compared step (with --optimizer=adamw).
STEP_FLAGS = ["--weight-decay=0.01", "--micro-batches=2"]
# name: dpc-opt flags
LAYOUTS = {
    "dp": ["--mesh=2", "--dp=2", "--tp=1", "--pp=1"],
    "tp": ["--mesh=2", "--dp=1", "--tp=2", "--pp=1"],
    "dp-tp-zero1": ["--mesh=2x2", "--dp=2", "--tp=2", "--pp=1", "--zero=1"],
    "dp-inner-tp": ["--mesh=2x2", "--dp=2", "--tp=2", "--pp=1", "--inner-axis=dp"],
    "pp": ["--mesh=2", "--dp=1", "--tp=1", "--pp=2", "--pipeline-schedule=1f1b"],
    "dp-pp": ["--mesh=2x2", "--dp=2", "--tp=1", "--pp=2", "--pipeline-schedule=gpipe"],
    "dp-pp-zero1": ["--mesh=2x2", "--dp=2", "--tp=1", "--pp=2", "--zero=1",
                    "--pipeline-schedule=1f1b"],
    "dp-recompute": ["--mesh=2", "--dp=2", "--tp=1", "--pp=1", "--recompute=on"],
    "tp-recompute-attention": ["--mesh=2", "--dp=1", "--tp=2", "--pp=1",
                               "--recompute=attention"],
    "pp-interleaved": ["--mesh=2", "--dp=1", "--tp=1", "--pp=2",
                       "--pipeline-schedule=interleaved-1f1b", "--pipeline-chunks=2"],
}
# The layouts each model is compiled for (compiling resnet18 takes longest).
MODEL_LAYOUTS = {
    "mlp": ["dp", "tp", "dp-tp-zero1", "dp-inner-tp", "pp", "dp-pp"],
    "transformer": ["dp-tp-zero1", "pp"],
    "gpt": ["dp", "tp", "dp-tp-zero1", "dp-pp", "pp-interleaved", "dp-recompute",
            "tp-recompute-attention"],
    "resnet18": ["dp"],
}
# Steps compared, and the bound on parameters in norm, where not the above.
MODEL_STEPS = {"resnet18": 1, "resnet18_silu": 1}
PARAM_BOUND = {"resnet18": 1e-3, "resnet18_silu": 1e-3}
CASES = [(name, layout) for name, layouts in MODEL_LAYOUTS.items() for layout in layouts]


@pytest.fixture(scope="module")
def steps(exported, tmp_path_factory):
    """AdamW steps over 2 micro-batches (pipelines need them; the others
    accumulate them)."""
    return build_steps(exported, tmp_path_factory.mktemp("steps"), *STEP_FLAGS)


_reference = {}


def stacked_micro_batches(step, inputs):
    """`inputs` with each batch the step takes as 2 micro-batches stacked:
    the exported batch, then it with its last axis rolled by one."""
    wanted = tools.signature(open(step).read(), function="train_step")["input"]
    for key, shape in wanted.items():
        if list(inputs[key].shape) != shape:
            inputs[key] = np.stack([inputs[key], np.roll(inputs[key], 1, axis=-1)])
    return inputs


def reference(steps, exported, name):
    """Initial values, batch, and the single-device steps (fp32, fp64)."""
    if name not in _reference:
        inputs, hyper = initial_inputs(steps[name], exported[name][0], name)
        inputs = stacked_micro_batches(steps[name], inputs)
        count = MODEL_STEPS.get(name, STEPS)
        _reference[name] = (inputs, hyper,
                            run_steps(steps[name], inputs, hyper, count, "fp32"),
                            run_steps(steps[name], inputs, hyper, count, "fp64"))
    return _reference[name]


def compile_artifact(step, flags, path, emit=("--emit=cpu",)):
    code, stderr = compile_artifact_once(DPC_OPT, step, [*flags, "--partition", *emit],
                                         path)
    assert code == 0, stderr
    return json.load(open(os.path.join(path, "manifest.json")))


def write_inputs(step, inputs, tmp_path):
    """--init and --data files; the data as samples, a step's micro-batches
    consecutive (as dpc-run reads them)."""
    text = open(step).read()
    roles = tools.signature(text, function="train_step")
    init = str(tmp_path / "init.npz")
    data = str(tmp_path / "data.npz")
    np.savez(init, **{k: inputs[k] for role in ("param", "state") for k in roles[role]})
    micro = tools.micro_batches(text)
    np.savez(data, **{k: inputs[k].reshape(-1, *inputs[k].shape[2:]) if micro > 1 else inputs[k]
                      for k in roles["input"]})
    return init, data


def train_artifact(artifact, init, data, out, *extra, steps=STEPS):
    report = out + ".json"
    r = subprocess.run([DPC_RUN, artifact, "--steps=%d" % steps, "--init", init,
                        "--data", data, "--output-dir", out, "--report-json", report,
                        "--timeout=30", *extra],
                       capture_output=True, text=True, timeout=300)
    return r, (json.load(open(report)) if r.returncode == 0 else None)


def cpu_shares(ranks):
    """The CPUs dpc-run binds each of `ranks` local ranks to: contiguous
    shares of those this process may use, the first ones larger; none where
    there are fewer CPUs than ranks."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < ranks:
        return None
    base, larger = divmod(len(cpus), ranks)
    shares, begin = [], 0
    for rank in range(ranks):
        size = base + (rank < larger)
        shares.append(cpus[begin:begin + size])
        begin += size
    return shares


def test_ranks_bound_to_their_cpus_unless_asked_not_to(steps, exported, tmp_path):
    """Each rank forked here runs on its own share of the CPUs (the
    report says which), so that two ranks' compute threads do not share a
    core until the scheduler moves one; --bind-cores=none leaves them to
    the scheduler. The numbers are the same either way."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: nothing to bind two ranks to")
    inputs, *_ = reference(steps, exported, "mlp")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    bound = str(tmp_path / "bound")
    r, report = train_artifact(artifact, init, data, bound)
    assert r.returncode == 0, r.stderr
    assert report["local_rank_cpus"] == cpu_shares(2)
    free = str(tmp_path / "free")
    r, unbound = train_artifact(artifact, init, data, free, "--bind-cores=none")
    assert r.returncode == 0, r.stderr
    assert "local_rank_cpus" not in unbound
    assert unbound["losses"] == report["losses"]
    for name, value in load_outputs(bound).items():
        np.testing.assert_array_equal(load_outputs(free)[name], value, err_msg=name)


def test_each_kernel_library_gets_the_ranks_share_of_threads(steps, exported, tmp_path):
    """Each rank runs OpenBLAS and oneDNN's OpenMP on its share of the cores
    unless that library's own variable says otherwise: setting
    OPENBLAS_NUM_THREADS alone once left OpenMP a thread per core in every
    rank (resnet18 over two unbound ranks: 650-690 ms a step, not 186-202).
    The report gives the counts the libraries report."""
    inputs, *_ = reference(steps, exported, "resnet18")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["resnet18"], LAYOUTS["dp"], artifact)
    init, data = write_inputs(steps["resnet18"], inputs, tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env["OPENBLAS_NUM_THREADS"] = "1"
    report = str(tmp_path / "report.json")
    r = subprocess.run([DPC_RUN, artifact, "--steps=1", "--init", init, "--data", data,
                        "--bind-cores=none", "--report-json", report, "--timeout=30"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    share = max(1, (os.cpu_count() or 1) // 2)
    assert json.load(open(report))["kernel_threads"] == {"openmp": share, "openblas": 1}


def load_outputs(out):
    return {tensor_name(f): np.load(os.path.join(out, f)) for f in os.listdir(out)}


@pytest.mark.parametrize("name, layout", CASES)
def test_compiled_ranks_equal_one_device(steps, exported, tmp_path, name, layout):
    inputs, *_ = reference(steps, exported, name)
    artifact = str(tmp_path / "model.dpc")
    manifest = compile_artifact(steps[name], LAYOUTS[layout], artifact)
    assert manifest["world_size"] == (4 if "x" in LAYOUTS[layout][0] else 2)
    if "--inner-axis=dp" in LAYOUTS[layout]:
        # Data-parallel peers are neighbouring ranks, tensor-parallel ones
        # two apart.
        groups = {tuple(group["axes"]): group["members"] for group in manifest["groups"]}
        assert groups[("dp",)] == [[0, 1], [2, 3]], groups
        assert groups[("tp",)] == [[0, 2], [1, 3]], groups
    init, data = write_inputs(steps[name], inputs, tmp_path)
    out = str(tmp_path / "out")
    r, report = train_artifact(artifact, init, data, out,
                               steps=MODEL_STEPS.get(name, STEPS))
    assert r.returncode == 0, r.stderr
    assert_equals_one_device(steps, exported, name, report, out)
    assert report.get("local_rank_cpus") == cpu_shares(manifest["world_size"])
    if name in ("gpt", "resnet18"):
        # A step this size is cut into parts compiled as separate units,
        # and the programs call them in turn (the numbers above are theirs).
        units = [f for f in os.listdir(artifact) if f.startswith("model.") and f.endswith(".cpp")]
        assert len(units) >= 2, units
        source = open(os.path.join(artifact, "model.cpp")).read()
        assert re.search(r"dpc_program_\d+_part1\(host, args, results, arena, dpc_tickets\)",
                         source)
    # Samples per step: the 2 micro-batches' (the report counted the
    # micro-batches as samples, and so its samples/s, before).
    first = inputs[next(iter(tools.signature(open(steps[name]).read(),
                                             function="train_step")["input"]))]
    assert report["batch_size"] == first.shape[0] * first.shape[1]


def test_weight_tied_across_stages_is_updated_on_both(tmp_path):
    """GPT-2 style tied embedding and head over two pipeline stages, compiled
    and run over their ranks: the first stage keeps the table, updates it,
    and sends it to the second as each step begins. (Each stage took the
    table as its own argument before, and the second's copy was never
    updated: the losses left one device's from step 2 on.)"""
    export_tied_gpt(tmp_path)
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, str(tmp_path / "tied_gpt.onnx"), "--train", "--optimizer=adamw",
                    *STEP_FLAGS, "-o", step], check=True)
    inputs, hyper = initial_inputs(step, str(tmp_path), "tied_gpt")
    inputs = stacked_micro_batches(step, inputs)
    assert_compiled_steps_near_exact(step, inputs, hyper, LAYOUTS["pp"], tmp_path)


def assert_compiled_steps_near_exact(step, inputs, hyper, layout, tmp_path,
                                     emit=("--emit=cpu",)):
    """`step` compiled for `layout` (dpc-opt flags) by the backend `emit`
    names and trained STEPS steps by dpc-run: its losses are the
    interpreter's single-device fp32 ones (rtol 1e-5), its tensors near the
    exact fp64 step (assert_near_exact)."""
    expected, losses = run_steps(step, inputs, hyper, STEPS, "fp32")
    exact, _ = run_steps(step, inputs, hyper, STEPS, "fp64")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(step, layout, artifact, emit)
    init, data = write_inputs(step, inputs, tmp_path)
    out = str(tmp_path / "out")
    r, report = train_artifact(artifact, init, data, out, steps=STEPS)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(report["losses"], losses, rtol=1e-5)
    assert_near_exact(load_outputs(out), expected, exact)


def assert_near_exact(actual, expected, exact, bound=lambda key: 1e-5):
    """Each tensor of `actual` (the ranks') is within `bound(key)` of the
    exact (fp64) single-device step, relative in norm, or no farther from
    it than ten times the fp32 single-device step (`expected`) is."""
    for key in expected:
        if key not in actual:
            continue
        scale = np.linalg.norm(exact[key].ravel()) + 1e-30
        one = np.linalg.norm((expected[key] - exact[key]).ravel()) / scale
        ranks = np.linalg.norm((actual[key] - exact[key]).ravel()) / scale
        assert ranks <= max(10 * one, bound(key)), (key, ranks, one)


def assert_equals_one_device(steps, exported, name, report, out):
    """The ranks' losses and outputs (in `out`) against the single-device
    interpreter, by the criterion above."""
    _, _, (expected, losses), (exact, _) = reference(steps, exported, name)
    np.testing.assert_allclose(report["losses"], losses, rtol=1e-5)
    actual = load_outputs(out)
    roles = tools.signature(open(steps[name]).read(), function="train_step")
    assert_near_exact(actual, expected, exact,
                      lambda key: PARAM_BOUND.get(name, 1e-5)
                      if key in roles["param"] else 1e-5)
    # Every parameter, state and optimizer slot came back.
    assert set(actual) == {k for role in ("param", "state", "opt_state") for k in roles[role]}


def test_a_dead_rank_ends_the_others(steps, exported, tmp_path):
    """Rank 1 of 4 exits at step 2: the launcher stops the others at once and
    names the rank; nothing waits for the 30 s timeout."""
    inputs, *_ = reference(steps, exported, "mlp")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp-tp-zero1"], artifact)
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "out"), "--fail-rank=1",
                          "--fail-step=2")
    assert r.returncode != 0
    assert "rank 1 exited with status 3" in r.stderr, r.stderr


def test_resume_equals_an_uninterrupted_run(steps, exported, tmp_path):
    """2 steps, a checkpoint, then 1 more step from it on another mesh (DP
    instead of DP x TP) give the parameters and optimizer state of 3 steps
    in one run."""
    inputs, *_ = reference(steps, exported, "gpt")
    init, data = write_inputs(steps["gpt"], inputs, tmp_path)
    first = str(tmp_path / "first.dpc")
    second = str(tmp_path / "second.dpc")
    compile_artifact(steps["gpt"], LAYOUTS["dp-tp-zero1"], first)
    compile_artifact(steps["gpt"], LAYOUTS["dp"], second)
    whole = str(tmp_path / "whole")
    r, _ = train_artifact(first, init, data, whole)
    assert r.returncode == 0, r.stderr
    saved = str(tmp_path / "ckpt")
    r, _ = train_artifact(first, init, data, str(tmp_path / "part"), "--save", saved,
                          steps=2)
    assert r.returncode == 0, r.stderr
    resumed = str(tmp_path / "resumed")
    r, report = train_artifact(second, init, data, resumed, "--resume", saved, steps=1)
    assert r.returncode == 0, r.stderr
    a, b = load_outputs(whole), load_outputs(resumed)
    assert sorted(a) == sorted(b)
    for key in a:
        # The meshes sum in different orders: equal to rounding, in norm.
        scale = np.linalg.norm(a[key].ravel()) + 1e-30
        assert np.linalg.norm((b[key] - a[key]).ravel()) / scale <= 1e-5, key


def test_checkpoints_are_shards_published_whole(steps, exported, tmp_path):
    """Each rank writes its shard; the step's directory appears, and
    `latest` names it, only once every shard is written. Rank 0 killed while
    saving step 2 leaves step 1 published, and resuming from it gives the
    parameters of an uninterrupted run. A shard whose bytes changed is
    refused, named."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp-tp-zero1"], artifact)
    whole = str(tmp_path / "whole")
    r, _ = train_artifact(artifact, init, data, whole)
    assert r.returncode == 0, r.stderr
    saved = tmp_path / "ckpt"
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "a"), "--save", str(saved),
                          "--save-every=1", "--fail-rank=0", "--fail-step=-2")
    assert r.returncode != 0 and "stops while saving step 2" in r.stderr, r.stderr
    assert open(saved / "latest").read() == "step-1\n"
    assert sorted(os.listdir(saved / "step-1")) == ["meta.json"] + [
        "rank%d.npz" % i for i in range(4)]
    assert (saved / "step-2.partial").is_dir() and not (saved / "step-2").exists()
    resumed = str(tmp_path / "resumed")
    r, _ = train_artifact(artifact, init, data, resumed, "--resume", str(saved), steps=2)
    assert r.returncode == 0, r.stderr
    a, b = load_outputs(whole), load_outputs(resumed)
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(b[key], a[key], err_msg=key)

    shard = saved / "step-1" / "rank2.npz"
    blob = bytearray(shard.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    shard.write_bytes(bytes(blob))
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "b"), "--resume", str(saved),
                          steps=1)
    assert r.returncode != 0
    assert "rank2.npz: the checkpoint shard is corrupt" in r.stderr, r.stderr


def test_not_an_artifact(tmp_path):
    r = subprocess.run([DPC_RUN, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode != 0
    assert "not a dpc artifact" in r.stderr


def read_tensorboard(path):
    """The scalars of a TensorBoard event file, {tag: [(step, value)]},
    read against the format: TFRecord framing with masked CRC-32C, and the
    protobuf fields of Event and Summary."""
    def crc32c(data):
        crc = 0xFFFFFFFF
        for byte in data:
            crc ^= byte
            for _ in range(8):
                crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        return crc ^ 0xFFFFFFFF

    def masked(data):
        crc = crc32c(data)
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            field, wire = key >> 3, key & 7
            if wire == 0:
                value, i = varint(buf, i)
            elif wire == 1:
                value, i = buf[i:i + 8], i + 8
            elif wire == 5:
                value, i = buf[i:i + 4], i + 4
            else:
                size, i = varint(buf, i)
                value, i = buf[i:i + size], i + size
            yield field, value

    def varint(buf, i):
        value = shift = 0
        while True:
            byte = buf[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value, i

    blob = open(path, "rb").read()
    scalars, versions, i = {}, [], 0
    while i < len(blob):
        header = blob[i:i + 8]
        (length,) = np.frombuffer(header, "<u8")
        assert int(np.frombuffer(blob[i + 8:i + 12], "<u4")[0]) == masked(header)
        data = blob[i + 12:i + 12 + int(length)]
        assert int(np.frombuffer(blob[i + 12 + int(length):i + 16 + int(length)],
                                 "<u4")[0]) == masked(data)
        i += 16 + int(length)
        event = dict(fields(data))
        if 3 in event:
            versions.append(event[3].decode())
        if 5 in event:
            for field, value in fields(event[5]):
                entry = dict(fields(value))
                tag = entry[1].decode()
                scalars.setdefault(tag, []).append(
                    (event[2], float(np.frombuffer(entry[2], "<f4")[0])))
    assert versions == ["brain.Event:2"]
    return scalars


def test_tensorboard_trace_and_sync(steps, exported, tmp_path):
    """--tensorboard writes the loss, throughput and communication share of
    every step, read back here against the format; --trace has every rank's
    steps and communication waits; --check-sync finds the replicas equal."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp-tp-zero1"], artifact)
    board = tmp_path / "board"
    trace = str(tmp_path / "trace.json")
    r, report = train_artifact(artifact, init, data, str(tmp_path / "out"), "--tensorboard",
                               str(board), "--trace", trace, "--check-sync")
    assert r.returncode == 0, r.stderr
    (events,) = os.listdir(board)
    scalars = read_tensorboard(str(board / events))
    assert [s for s, _ in scalars["loss"]] == [1, 2, 3]
    np.testing.assert_allclose([v for _, v in scalars["loss"]], report["losses"], rtol=1e-6)
    assert all(v > 0 for _, v in scalars["samples_per_second"])
    assert all(0 <= v <= 1 for _, v in scalars["communication_share"])
    events = json.load(open(trace))["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {0, 1, 2, 3}
    assert {e["name"] for e in spans if e["cat"] == "compute"} == {"step 1", "step 2", "step 3"}
    assert {e["name"] for e in spans if e["cat"] == "communication"} >= {"dpc.all_reduce"}


def test_profile_sets_every_op_beside_its_prediction(steps, exported, tmp_path):
    """--profile times every op each rank's program marks and writes it with
    the work the cost model sees in it: a rank of the data-parallel MLP
    multiplies 2 * (local batch) * (16*32 + 32*10) in its forward GEMMs, as
    much for the weight gradients, and 2 * (local batch) * 32*10 for the one
    input gradient that is not the batch's; each op's prediction is the
    roofline of its work on the plan's cluster (h100-sxm: f32 at 67
    TFLOP/s x 0.54, 3.35 TB/s x 0.8)."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    manifest = compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    profile = str(tmp_path / "profile.json")
    r, report = train_artifact(artifact, init, data, str(tmp_path / "out"), "--profile",
                               profile)
    assert r.returncode == 0, r.stderr
    assert "dpc-run: profile of rank 0 over %d steps" % (STEPS - 1) in r.stdout, r.stdout
    assert re.search(r"dpc\.matmul +\d+ +[0-9.]+ +[0-9.]+ +[0-9.]+", r.stdout), r.stdout
    written = json.load(open(profile))
    assert written["steps"] == STEPS - 1
    assert [rank["rank"] for rank in written["ranks"]] == [0, 1]
    (x,) = [a for a in manifest["arguments"] if a["name"] == "x"]
    # A rank's samples per step: x is [micro-batches, batch, 16].
    local_batch = int(np.prod(x["local_shape"][:-1]))
    peak, bandwidth = 67e12 * 0.54, 3.35e12 * 0.8
    for rank in written["ranks"]:
        (program,) = [p for p in manifest["programs"] if p["symbol"] == rank["program"]]
        assert len(rank["ops"]) == len(program["ops"])
        assert sum(op["measured_s"] for op in rank["ops"]) <= rank["step_s"] * 1.001
        gemms = [op for op in rank["ops"] if op["op"] == "dpc.matmul"]
        assert sum(op["flops"] for op in gemms) == 2 * local_batch * (2 * (16 * 32 + 32 * 10) +
                                                                      32 * 10)
        for op in rank["ops"]:
            assert op["measured_s"] >= 0 and "at" in op
            assert op["predicted_s"] == pytest.approx(
                max(op["flops"] / peak, op["bytes"] / bandwidth), rel=1e-3) or \
                op.get("collective")


def test_last_micro_batch_reduces_inside_its_backward_pass(steps, tmp_path):
    """Over the step's 2 micro-batches each gradient's sum is reduced as soon
    as the last micro-batch has made it: with a bucket per gradient, the
    program (its ops in the order it runs them, as the manifest lists them
    for --profile) starts reducing the head's gradients before the last
    micro-batch's last GEMM (the first layer's weight gradient), and the
    first layer's after it. Before -dpc-reduce-in-last-micro-batch, all four
    followed the last GEMM."""
    flags = [*LAYOUTS["dp"], "--zero=0", "--bucket-cap-mb=0.001"]
    manifest = compile_artifact(steps["mlp"], flags, str(tmp_path / "model.dpc"))
    for program in manifest["programs"]:
        ops = program["ops"]
        gradients = [i for i, op in enumerate(ops)
                     if op["op"] == "dpc.all_reduce" and op["bytes"] > 64]
        last_gemm = max(i for i, op in enumerate(ops) if op["op"] == "dpc.matmul")
        assert len(gradients) == 4, [op["op"] for op in ops]
        assert gradients[0] < last_gemm < gradients[-1]


def test_a_bad_data_file_is_refused(steps, exported, tmp_path):
    """--data must hold every input of the step, in whole step batches: a
    missing array, and one of the model's own batch where the step takes
    two micro-batches of it, end before launch naming the array and both
    shapes, no output written."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    x, target = np.load(data)["x"], np.load(data)["target"]
    missing, half = str(tmp_path / "missing.npz"), str(tmp_path / "half.npz")
    np.savez(missing, x=x)
    np.savez(half, x=x[:x.shape[0] // 2], target=target[:x.shape[0] // 2])
    for bad, message in (
            (missing, "%s: has no array 'target', an input of the step" % missing),
            (half, "%s: array 'x' of shape %dx%d is not a whole number of the step's "
                   "batches of shape %dx%d" % (half, x.shape[0] // 2, x.shape[1], *x.shape))):
        out = str(tmp_path / "out")
        r, _ = train_artifact(artifact, init, bad, out)
        assert r.returncode != 0 and message in r.stderr, r.stderr
        assert not os.path.exists(out)
    # A parameter of another shape in --init, named with both shapes.
    params = dict(np.load(init))
    name = next(k for k, v in params.items() if v.ndim == 2 and v.shape[0] != v.shape[1])
    rows, cols = params[name].shape
    params[name] = params[name].T.copy()
    transposed = str(tmp_path / "transposed.npz")
    np.savez(transposed, **params)
    r, _ = train_artifact(artifact, transposed, data, str(tmp_path / "out"))
    assert r.returncode != 0, r.stderr
    assert "param '%s' has shape %dx%d, the step takes %dx%d" % (name, cols, rows, rows,
                                                                 cols) in r.stderr, r.stderr


def test_profile_refuses_an_artifact_without_marks(steps, exported, tmp_path):
    """An artifact whose programs mark no ops (CUDA's, an older dpc-opt's)
    cannot be profiled: refused before launch, no file written."""
    def drop_ops(manifest):
        for program in manifest["programs"]:
            del program["ops"]
    profile = str(tmp_path / "p.json")
    r = train_with_edited_manifest(steps, exported, tmp_path, drop_ops, "--profile", profile)
    assert r.returncode != 0
    assert "--profile: %s lists no ops to time" % (tmp_path / "model.dpc") in r.stderr, r.stderr
    assert not os.path.exists(profile)


def test_check_sync_finds_a_diverged_replica(steps, exported, tmp_path):
    """Rank 1 flips a bit of its copy of a replicated parameter after step
    1: --check-sync stops the run there, naming the parameter, the ranks
    and the step; without it the run goes on."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "a"), "--perturb-rank=1",
                          "--check-sync")
    assert r.returncode != 0
    assert "--check-sync: ranks 0 and 1 hold different values for the same block of " \
           "param 'net.0.weight'" in r.stderr and "(after step 1)" in r.stderr, r.stderr
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "b"), "--perturb-rank=1")
    assert r.returncode == 0, r.stderr


def test_nan_is_found_where_it_starts(steps, exported, tmp_path):
    """A NaN weight makes the loss NaN: the run stops at step 1 and says so;
    with --check-finite it names the first op whose result holds the NaN."""
    inputs, *_ = reference(steps, exported, "mlp")
    inputs = dict(inputs)
    inputs["net.2.weight"] = inputs["net.2.weight"].copy()
    inputs["net.2.weight"][0, 0] = np.nan
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "a"))
    assert r.returncode != 0
    assert "step 1: the loss is nan; rerun with --check-finite" in r.stderr, r.stderr
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "b"), "--check-finite")
    assert r.returncode != 0
    # The weight's transpose is read by the GEMM: the product is the first
    # result to hold the NaN.
    assert "step 1: dpc.matmul at" in r.stderr and "holds NaN or Inf" in r.stderr, r.stderr


def test_two_nodes_and_their_token(steps, exported, tmp_path):
    """Two launchers on this host as two nodes of 2 ranks each meet at node
    0's rendezvous and train as one 4-rank job; a node with another token is
    refused, and node 0 gives up on it within the timeout."""
    import socket
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp-tp-zero1"], artifact)
    single, single_report = train_artifact(artifact, init, data, str(tmp_path / "one"))
    assert single.returncode == 0, single.stderr

    def launch(node, token, port, out):
        env = dict(os.environ, DPC_JOB_TOKEN=token)
        return subprocess.Popen(
            [DPC_RUN, artifact, "--steps=%d" % STEPS, "--init", init, "--data", data,
             "--nnodes=2", "--node-rank=%d" % node, "--nproc-per-node=2",
             "--master-addr=127.0.0.1:%d" % port, "--timeout=5", "--output-dir", out,
             "--report-json", out + ".json"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    port = free_port()
    out = str(tmp_path / "two")
    nodes = [launch(0, "secret", port, out), launch(1, "secret", port, str(tmp_path / "n1"))]
    results = [n.communicate(timeout=120) for n in nodes]
    assert [n.returncode for n in nodes] == [0, 0], results
    np.testing.assert_allclose(json.load(open(out + ".json"))["losses"],
                               single_report["losses"], rtol=1e-6)

    port = free_port()
    nodes = [launch(0, "secret", port, str(tmp_path / "c")),
             launch(1, "wrong", port, str(tmp_path / "d"))]
    results = [n.communicate(timeout=120) for n in nodes]
    assert nodes[0].returncode != 0 and nodes[1].returncode != 0
    assert "refused a rendezvous connection" in results[0][1], results[0][1]
    assert "token" in results[1][1], results[1][1]


def test_a_plan_that_does_not_fit_is_refused(steps, exported, tmp_path):
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "a"), "--memory-limit=4KiB")
    assert r.returncode != 0
    assert "the 2 ranks of this node need" in r.stderr and "but only 0.004 MiB" in r.stderr, \
        r.stderr


def test_a_hung_rank_times_out_the_others(steps, exported, tmp_path):
    """Rank 1 of 4 hangs at step 2 without dying: its peers give up after
    --timeout, naming the collective they were waiting in, and the launcher
    stops everyone."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp-tp-zero1"], artifact)
    r = subprocess.run([DPC_RUN, artifact, "--steps=3", "--init", init, "--data", data,
                        "--timeout=3", "--fail-rank=1", "--fail-step=2", "--fail-hangs"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "rank 1 hangs at step 2" in r.stderr, r.stderr
    assert "failed: Timed out" in r.stderr and "dpc.all_" in r.stderr, r.stderr


def test_scaling_against_one_rank(steps, exported, tmp_path):
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact, one = str(tmp_path / "model.dpc"), str(tmp_path / "one.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    r = subprocess.run([DPC_OPT, steps["mlp"], "--emit=cpu", "-o", one],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r, report = train_artifact(artifact, init, data, str(tmp_path / "out"), "--scaling", one)
    assert r.returncode == 0, r.stderr
    assert "dpc-run: scaling:" in r.stdout and "efficiency" in r.stdout
    assert report["scaling_efficiency"] == pytest.approx(
        report["samples_per_second"] / (2 * report["one_rank_samples_per_second"]))


@pytest.mark.parametrize("model, layout, micro_batches", [
    ("gpt", "dp", 1), ("gpt", "dp-tp-zero1", 1), ("gpt", "dp", 2), ("gpt", "dp-tp-zero1", 2),
    ("gpt", "dp-pp-zero1", 2), ("tied_gpt", "pp", 2)])
def test_bf16_loss_curve(exported, tmp_path, model, layout, micro_batches):
    """Mixed precision (bf16 compute, fp32 master weights) compiled for two
    data-parallel ranks, and for dp2 x tp2 under ZeRO-1 (each rank keeps
    its block of the masters and gathers bf16 copies), follows the
    interpreter's bf16 loss curve: every f16/bf16 result is rounded to its
    type, in loops and after kernels, as the interpreter rounds after every
    op. The GEMMs sum in another order before rounding, so the curves agree
    to 1e-4, not to the bit. Over 2 micro-batches each rank's fp32
    gradient terms accumulate with their sums pending and are reduced once
    (ZeRO-1: reduce-scattered over tp and dp); over two pipeline stages the
    tied table's bf16 copy crosses once a step for both micro-batches, and
    under ZeRO-1 each stage gathers its masters' bf16 copies once a step."""
    if model == "gpt":
        onnx_path, data_dir = os.path.join(exported["gpt"][0], "gpt.onnx"), exported["gpt"][0]
    else:
        export_tied_gpt(tmp_path)
        onnx_path, data_dir = str(tmp_path / "tied_gpt.onnx"), str(tmp_path)
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, onnx_path, "--train", "--optimizer=adamw", "--precision=bf16",
                    "--micro-batches=%d" % micro_batches, "-o", step], check=True)
    inputs, hyper = initial_inputs(step, data_dir, model)
    if micro_batches > 1:
        inputs = stacked_micro_batches(step, inputs)
    _, losses = run_steps(step, inputs, hyper, 5, "fp32")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(step, LAYOUTS[layout], artifact)
    init, data = write_inputs(step, inputs, tmp_path)
    r, report = train_artifact(artifact, init, data, str(tmp_path / "out"), steps=5)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(report["losses"], losses, rtol=1e-4)


def test_the_steps_learning_rate_is_the_default(exported, tmp_path):
    """A step built with --lr=0.05 trains at 0.05 under dpc-run unless --lr
    says otherwise: its losses are the interpreter's at 0.05, not at 0.01."""
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, os.path.join(exported["mlp"][0], "mlp.onnx"), "--train",
                    "--optimizer=adamw", "--lr=0.05", "-o", step], check=True)
    inputs, hyper = initial_inputs(step, exported["mlp"][0], "mlp")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(step, LAYOUTS["dp"], artifact)
    assert json.load(open(os.path.join(artifact, "manifest.json")))["default_lr"] == 0.05
    init, data = write_inputs(step, inputs, tmp_path)
    r, report = train_artifact(artifact, init, data, str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    _, at_step_lr = run_steps(step, inputs, hyper, STEPS, "fp32", lr=0.05)
    _, at_default = run_steps(step, inputs, hyper, STEPS, "fp32", lr=0.01)
    np.testing.assert_allclose(report["losses"], at_step_lr, rtol=1e-5)
    assert abs(report["losses"][-1] - at_default[-1]) > 1e-3


@pytest.mark.parametrize("layout", ["dp-tp-zero1", "dp-pp"])
def test_the_memory_check_predicts_what_the_ranks_hold(steps, exported, tmp_path, layout):
    """The launcher's figure for the tensors this node's ranks will hold
    (from the manifest, before any rank starts) is what the ranks then
    allocate (arguments, results and arena, measured by each rank)."""
    inputs, *_ = reference(steps, exported, "gpt")
    init, data = write_inputs(steps["gpt"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["gpt"], LAYOUTS[layout], artifact)
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "a"), "--memory-limit=1B")
    assert r.returncode != 0
    import re
    needed = float(re.search(r"need ([0-9.]+) MiB", r.stderr).group(1))
    r, report = train_artifact(artifact, init, data, str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    measured = sum(report["tensor_memory_bytes"]) / 2**20
    assert needed == pytest.approx(measured, abs=1e-3), (needed, measured)


def test_a_pipeline_stage_holds_its_own_tensors(steps, exported, tmp_path):
    """Over dp2 x pp2 each rank allocates the arguments its stage's program
    reads (the manifest's "reads"): every parameter and optimizer state is
    held by one stage, whose program updates it, and each rank's measured
    tensors are its stage's arguments, arena and outputs (before, every
    rank held the whole model's parameters and optimizer state, and a
    stage's memory was not its plan's)."""
    inputs, *_ = reference(steps, exported, "gpt")
    init, data = write_inputs(steps["gpt"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    manifest = compile_artifact(steps["gpt"], LAYOUTS["dp-pp"], artifact)
    arguments = manifest["arguments"]
    stages = manifest["programs"]
    assert len(stages) == 2

    def local_bytes(tensor):
        return np.dtype(tensor["dtype"]).itemsize * int(np.prod(tensor["local_shape"]))

    model_state = [i for i, a in enumerate(arguments) if a["role"] in ("param", "opt_state")]
    for i in model_state:
        holders = [p for p in stages if i in p["reads"]]
        assert len(holders) == 1, arguments[i]["name"]
        updated = {(r["role"], r["name"]) for r in holders[0]["results"]}
        assert (arguments[i]["role"], arguments[i]["name"]) in updated
    held = {}
    everything = sum(map(local_bytes, arguments))
    for program in stages:
        read = sum(local_bytes(arguments[i]) for i in program["reads"])
        assert read < everything
        own = [r for r in program["results"] if "updates" not in r]
        size = read + program["arena_bytes"] + sum(map(local_bytes, own))
        held.update({rank: size for rank in program["ranks"]})
    r, report = train_artifact(artifact, init, data, str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert report["tensor_memory_bytes"] == [held[rank] for rank in range(4)]
    # Each tensor comes back from the stage that holds it, as one device's.
    assert_equals_one_device(steps, exported, "gpt", report, str(tmp_path / "out"))


def test_each_rank_holds_its_model_state_once(steps, exported, tmp_path):
    """Every parameter and optimizer state the step updates is written over
    its argument: a rank holds its arguments, its arena and the step's
    outputs, and no second copy of its model state."""
    inputs, *_ = reference(steps, exported, "gpt")
    init, data = write_inputs(steps["gpt"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    manifest = compile_artifact(steps["gpt"], LAYOUTS["dp-tp-zero1"], artifact)
    (program,) = manifest["programs"]
    keys = [(a["role"], a["name"]) for a in manifest["arguments"]]
    updated = [r for r in program["results"] if r["role"] in ("param", "opt_state")]
    assert updated and all(keys[r["updates"]] == (r["role"], r["name"]) for r in updated)

    def local_bytes(tensor):
        return np.dtype(tensor["dtype"]).itemsize * int(np.prod(tensor["local_shape"]))

    outputs = [r for r in program["results"] if "updates" not in r]
    assert {r["role"] for r in outputs} == {"output"}
    held = (sum(map(local_bytes, manifest["arguments"])) + program["arena_bytes"] +
            sum(map(local_bytes, outputs)))
    r, report = train_artifact(artifact, init, data, str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert report["tensor_memory_bytes"] == [held] * 4


def train_with_edited_manifest(steps, exported, tmp_path, edit, *extra):
    """Trains the MLP's data-parallel artifact after `edit` changed its
    manifest (with dpc-run flags `extra`); the finished process."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    path = os.path.join(artifact, "manifest.json")
    manifest = json.load(open(path))
    edit(manifest)
    json.dump(manifest, open(path, "w"))
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "out"), *extra)
    return r


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(world_size=10**9), "world_size is missing or out of [1, 65536]"),
    (lambda m: m.update(abi=999), "it was built for another dpc-run (ABI 999"),
    (lambda m: m["arguments"][0]["blocks"][1].__setitem__(0, 10**6),
     "tensor 'net.0.weight' has a block outside its shape"),
    (lambda m: m["arguments"][0].pop("dtype"), "a tensor lacks role, name or dtype"),
    (lambda m: m.pop("programs"), "it lists no arguments or no programs"),
    (lambda m: m["programs"][0]["results"][0].update(updates=1),
     "result 'net.0.weight' updates no matching argument"),
    (lambda m: m["programs"][0]["results"][1].update(updates=10**6),
     "result 'net.0.bias' updates no matching argument"),
    (lambda m: m["programs"][0]["results"][1].update(updates="net.0.bias"),
     "result 'net.0.bias' has an \"updates\" that is not an argument index"),
    (lambda m: m["cpu"].pop("features"), "its cpu entry lists no features"),
    (lambda m: m["cpu"]["features"].append("quantum"),
     "its library needs the CPU extension 'quantum', which this dpc-run cannot check"),
    (lambda m: m["programs"][0].update(reads=[10**6]),
     "a program's \"reads\" is not a list of argument indices"),
    (lambda m: m["programs"][0].update(reads="x"),
     "a program's \"reads\" is not a list of argument indices"),
    (lambda m: m["plan"].update(stage_memory_bytes=[1.0, 2.0]),
     "its plan's stage_memory_bytes does not give one figure per program"),
    (lambda m: m["plan"].update(stage_memory_bytes=["1"]),
     "its plan's stage_memory_bytes does not give one figure per program"),
    (lambda m: m["programs"][0].update(ops={"op": "dpc.matmul"}),
     "a program's \"ops\" is not a list"),
    (lambda m: m["programs"][0]["ops"][0].pop("flops"),
     "an entry of a program's \"ops\" lacks op, at, flops or bytes"),
    # The step's micro-batches (2 here): the inputs must hold them.
    (lambda m: m.update(micro_batches=0), "micro_batches is not a whole number of at least 1"),
    (lambda m: m.update(micro_batches=2.5), "micro_batches is not a whole number of at least 1"),
    (lambda m: m.update(micro_batches="2"), "micro_batches is not a whole number of at least 1"),
    (lambda m: m.update(micro_batches=10**30),
     "micro_batches is not a whole number of at least 1"),
    (lambda m: m.update(micro_batches=3),
     "input 'x' does not hold the step's 3 micro-batches along its first dimension"),
])
def test_a_bad_manifest_is_refused(steps, exported, tmp_path, edit, message):
    """A manifest edited by hand or cut short is refused before any rank
    starts, with the file and what is wrong."""
    r = train_with_edited_manifest(steps, exported, tmp_path, edit)
    assert r.returncode != 0
    assert "manifest.json: not a valid dpc artifact manifest: " + message in r.stderr, r.stderr


def test_a_library_for_another_cpu_is_refused(steps, exported, tmp_path):
    """The manifest lists the instruction-set extensions the library was
    compiled for (--cpu-arch, by default this machine's); a CPU that lacks
    one is refused before the library is loaded, naming it, instead of
    dying of an illegal instruction mid-step."""
    absent = []

    def edit(manifest):
        assert manifest["cpu"]["arch"] == "native"
        # Intel CPUs lack sse4a, AMD's (to Zen 4) avx512fp16; the compiler
        # listed what this one has.
        absent.extend(f for f in ("sse4a", "avx512fp16")
                      if f not in manifest["cpu"]["features"])
        assert absent, manifest["cpu"]
        manifest["cpu"]["features"].append(absent[0])

    r = train_with_edited_manifest(steps, exported, tmp_path, edit)
    absent = absent[0]
    assert r.returncode != 0
    assert ("its library was compiled for --cpu-arch=native and uses " + absent +
            ", which this CPU lacks") in r.stderr, r.stderr


def test_bad_cpu_arch_is_refused(steps, tmp_path):
    """--cpu-arch must be a name the compiler knows; anything else is
    refused before an artifact is written."""
    for arch, message in [("no-such-cpu", "does not know --cpu-arch=no-such-cpu"),
                          ("native -O0", "is not a CPU name")]:
        out = tmp_path / "model.dpc"
        r = subprocess.run([DPC_OPT, steps["mlp"], "--emit=cpu", "--cpu-arch=" + arch,
                            "-o", str(out)], capture_output=True, text=True)
        assert r.returncode != 0
        assert message in r.stderr, r.stderr
        assert not out.exists()


def test_a_bad_checkpoint_meta_is_refused(steps, exported, tmp_path):
    """meta.json that lost a tensor, or names a shard that is missing, is
    refused with the file and what is wrong."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    saved = tmp_path / "ckpt"
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "a"), "--save", str(saved),
                          steps=1)
    assert r.returncode == 0, r.stderr
    meta_path = saved / "step-1" / "meta.json"
    meta = json.load(open(meta_path))
    lost = dict(meta, tensors=meta["tensors"][1:])
    json.dump(lost, open(meta_path, "w"))
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "b"), "--resume", str(saved),
                          steps=1)
    assert r.returncode != 0 and "belongs to no tensor of meta.json" in r.stderr, r.stderr
    json.dump(meta, open(meta_path, "w"))
    os.remove(saved / "step-1" / "rank1.npz")
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "c"), "--resume", str(saved),
                          steps=1)
    assert r.returncode != 0 and "rank1.npz" in r.stderr, r.stderr


@pytest.mark.parametrize("schedule, warmup, lrs", [
    # Step k of N = 3 at base rate 0.05: 0.05 k/W over the W warm-up steps,
    # then the schedule at progress p = (k - W)/(N - W), 1 at the last step.
    ("cosine", 1, [0.05, 0.05 * (1 + np.cos(np.pi / 2)) / 2, 0.0]),
    ("linear", 0, [0.05 * 2 / 3, 0.05 / 3, 0.0]),
    ("constant", 2, [0.025, 0.05, 0.05]),
])
def test_learning_rate_schedule_sets_each_steps_rate(steps, exported, tmp_path, schedule,
                                                     warmup, lrs):
    """--lr-schedule and --warmup-steps give each step its rate: the ranks'
    3 steps equal the single-device interpreter stepping with those
    rates."""
    from dpc.interpreter import interpret
    from dpc.train import hyperparameters

    inputs, hyper, *_ = reference(steps, exported, "mlp")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    out = str(tmp_path / "out")
    r, report = train_artifact(artifact, init, data, out, "--lr=0.05",
                               "--lr-schedule=" + schedule, "--warmup-steps=%d" % warmup)
    assert r.returncode == 0, r.stderr
    state, losses = dict(inputs), []
    for step, lr in enumerate(lrs, start=1):
        state.update(hyperparameters(hyper, step, lr))
        result = interpret(steps["mlp"], state, function="train_step", precision="fp64")
        losses.append(float(result["loss"]))
        state.update({k: v for k, v in result.items() if k in state})
    np.testing.assert_allclose(report["losses"], losses, rtol=1e-5)
    actual = load_outputs(out)
    for key in tools.signature(open(steps["mlp"]).read(), function="train_step")["param"]:
        np.testing.assert_allclose(actual[key], state[key], rtol=1e-4, atol=1e-6, err_msg=key)


@pytest.mark.parametrize("flag, message", [
    ("--lr-schedule=step", "--lr-schedule=step is not constant, linear or cosine"),
    ("--warmup-steps=-1", "--warmup-steps=-1 is negative; it must be 0 or more"),
    ("--save-every=-2", "--save-every=-2 is negative; it must be 0 or more"),
    ("--timeout=0", "--timeout must be in (0, 86400] seconds"),
    ("--bind-cores=socket", "--bind-cores=socket is not auto or none"),
])
def test_a_bad_schedule_flag_is_refused(steps, exported, tmp_path, flag, message):
    inputs, *_ = reference(steps, exported, "mlp")
    artifact = str(tmp_path / "model.dpc")
    compile_artifact(steps["mlp"], LAYOUTS["dp"], artifact)
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    out = str(tmp_path / "out")
    r = subprocess.run([DPC_RUN, artifact, "--steps=2", "--init", init, "--data", data,
                        "--output-dir", out, flag], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "dpc-run: error: " + message in r.stderr, r.stderr
    assert not os.path.exists(out)
