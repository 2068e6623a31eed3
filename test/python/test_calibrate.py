"""dpc-run --calibrate: it measures this host over real Gloo ranks, writes a
cluster file the cost model prices with, and fails cleanly (a named rank, no
half-written file, a bounded time) when a rank or the output path is bad."""

import json
import os
import re
import subprocess

import pytest

from dpc.tools import tool

# Seconds a calibration may take before the test calls it hung; a quick run
# takes 2-3 s and the tool's own deadline is 60 s.
HANG = 120

LAYER = """
func.func @layer(%x: tensor<256x256xf32>,
                 %w: tensor<256x256xf32> {dpc.param = "w"}) -> tensor<256x256xf32> {
  %0 = dpc.matmul %x, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
"""


def _calibrate(*flags):
    return subprocess.run([tool("dpc-run"), *flags], capture_output=True, text=True,
                          timeout=HANG)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    path = tmp_path_factory.mktemp("calibrate") / "host.json"
    r = _calibrate("--calibrate=" + str(path), "--calibrate-quick")
    assert r.returncode == 0, r.stderr
    with open(path) as f:
        return str(path), json.load(f), r.stderr


def test_figures_are_those_of_a_cpu_core(calibrated):
    _, cluster, summary = calibrated
    device = cluster["device"]
    peak = device["peak_tflops"]
    # One core of a server CPU multiplies at 1-500 GFLOP/s; f64 at about
    # half the f32 rate (half the SIMD lanes; the margin absorbs a noisy
    # neighbour slowing the f32 probe), and bf16/f16 run as f32.
    assert 1e-3 < peak["f32"] < 0.5, peak
    assert 1e-3 < peak["f64"] <= 1.5 * peak["f32"], peak
    assert peak["bf16"] == peak["f16"] == peak["f32"]
    assert 0.5 < device["memory_bandwidth_gb_per_s"] < 500
    link = cluster["intra_node"]
    assert 0.01 < link["bandwidth_gb_per_s"] < 100
    assert 1 <= link["latency_us"] < 10000
    assert cluster["devices_per_node"] == 2
    assert cluster["name"] == "cpu-host-calibrated"
    # The summary says the same numbers the file holds.
    gflops = float(re.search(r"f32 ([\d.]+) GFLOP/s", summary).group(1))
    assert gflops == pytest.approx(peak["f32"] * 1e3, rel=2e-3)
    # A training step's GEMMs (tall, transposed operands in the backward)
    # reach a fraction of the best square one: the compute efficiency;
    # memory and links are priced at the rates measured.
    efficiency = cluster["efficiency"]
    assert 0.2 < efficiency["compute"] <= 1, efficiency
    assert efficiency["memory"] == efficiency["communication"] == 1
    # The part of a bulk all-reduce's time that hides behind GEMMs on the
    # ranks' own cores: a fraction, said alike in the summary.
    assert 0 <= efficiency["overlap"] <= 1, efficiency
    hidden = float(re.search(r"overlap: +(\d+)% of a bulk all-reduce", summary).group(1))
    assert hidden == pytest.approx(100 * efficiency["overlap"], abs=0.51)
    # The slowest rank's lag over the same GEMMs: a few percent on a quiet
    # host, a fraction of a stretch in any case.
    assert 0 <= cluster["rank_skew"] < 1, cluster
    lag = float(re.search(r"the slowest rank ([\d.]+)% behind", summary).group(1))
    assert lag == pytest.approx(100 * cluster["rank_skew"], abs=0.051)
    share = float(re.search(r"a training step's GEMMs (\d+)% of f32's", summary).group(1))
    assert share == pytest.approx(100 * efficiency["compute"], abs=0.51)


def test_cost_model_prices_with_the_calibrated_file(calibrated, tmp_path):
    path, cluster, _ = calibrated
    layer = tmp_path / "layer.mlir"
    layer.write_text(LAYER)
    r = subprocess.run([tool("dpc-opt"), str(layer),
                        "-test-dpc-cost-model=mesh=2 cluster=" + path],
                       capture_output=True, text=True, check=True)
    # The matmul at the measured f32 rate times the calibrated efficiency,
    # or its bytes at the measured bandwidth, whichever is slower.
    flops, bytes_ = 2 * 256 ** 3, 3 * 256 * 256 * 4
    rate = cluster["device"]["peak_tflops"]["f32"] * 1e12 * cluster["efficiency"]["compute"]
    expected = max(flops / rate,
                   bytes_ / (cluster["device"]["memory_bandwidth_gb_per_s"] * 1e9))
    time_us = float(re.search(r"dpc.matmul .*dpc.time_us = ([\d.e+-]+)", r.stdout).group(1))
    assert time_us == pytest.approx(expected * 1e6, rel=2e-3)
    # The gradient all-reduce over the two ranks: the cheapest algorithm on
    # the measured link, which for two ranks costs 2 alpha + S beta.
    grad_us = float(re.search(r"dpc.grad_all_reduce_us = ([\d.e+-]+)", r.stdout).group(1))
    link = cluster["intra_node"]
    ring = 2 * link["latency_us"] + 256 * 256 * 4 / (link["bandwidth_gb_per_s"] * 1e3)
    assert grad_us == pytest.approx(ring, rel=2e-3)


def test_a_failing_rank_ends_the_run_and_writes_nothing(tmp_path):
    path = tmp_path / "host.json"
    r = _calibrate("--calibrate=" + str(path), "--calibrate-quick",
                   "--calibrate-fail-rank=1")
    assert r.returncode != 0
    assert "rank 1: failing on purpose" in r.stderr
    assert "rank 1 exited with status 1" in r.stderr
    assert os.listdir(tmp_path) == []


def test_a_hung_rank_is_stopped_with_its_peers(tmp_path):
    path = tmp_path / "host.json"
    # The run must end by its deadline (3 s); the timeout only keeps a
    # regression from hanging the suite.
    r = subprocess.run([tool("dpc-run"), "--calibrate=" + str(path), "--calibrate-quick",
                        "--calibrate-hang-rank=1", "--calibrate-deadline=3"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    # Rank 1 hangs; rank 0 waits for it to connect.
    assert "ranks 0, 1 did not finish within 3 s; stopped every rank" in r.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("flags, message", [
    (["--calibrate-ranks=1"], "--calibrate-ranks must be at least 2"),
    # Once hundreds of interleaved Gloo errors and a missed deadline.
    (["--calibrate-ranks=1000"], "--calibrate-ranks=1000 is more than this host calibrates: "
                                 "at most "),
    (["--calibrate-fail-rank=5"], "--calibrate-fail-rank=5 is not a rank of 2"),
    (["--interpret=x.mlir"], "--calibrate runs alone"),
    (["--calibrate-hang-rank=2"], "--calibrate-hang-rank=2 is not a rank of 2"),
    (["--calibrate-deadline=-1"], "--calibrate-deadline must be positive, got -1"),
])
def test_bad_flags(tmp_path, flags, message):
    r = _calibrate("--calibrate=" + str(tmp_path / "host.json"), *flags)
    assert r.returncode != 0
    assert message in r.stderr
    assert os.listdir(tmp_path) == []


def test_unwritable_output_fails_before_measuring(tmp_path):
    r = _calibrate("--calibrate=" + str(tmp_path / "missing" / "host.json"))
    assert r.returncode != 0
    assert "cannot write '%s'" % (tmp_path / "missing" / "host.json") in r.stderr
    # Nothing was measured: no summary.
    assert "calibrated this host" not in r.stderr
    r = _calibrate("--calibrate=" + str(tmp_path))
    assert r.returncode != 0
    assert "it is a directory" in r.stderr


def test_planner_plans_on_the_calibrated_host(calibrated, tmp_path):
    path, cluster, _ = calibrated
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    model = os.path.join(root, "test", "Transforms", "Planning", "residual-mlp.mlir")
    step = str(tmp_path / "step.mlir")
    subprocess.run([tool("dpc-opt"), model, "--train", "--optimizer=adam", "-o", step],
                   check=True)
    report = str(tmp_path / "plan.json")
    r = subprocess.run([tool("dpc-opt"), step, "--mesh=1x2", "--cluster=" + path,
                        "--plan-only", "--plan-report=" + report],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(report) as f:
        plan = json.load(f)
    assert plan["cluster"] == "cpu-host-calibrated" and plan["devices"] == 2
    totals = plan["totals"]
    # The memory limit is the measured share of the host, and utilization
    # is counted against the measured f32 GEMM rate.
    assert totals["memory_limit_bytes"] == pytest.approx(cluster["device"]["memory_gb"] * 1e9)
    peak = cluster["device"]["peak_tflops"]["f32"] * 1e12
    mfu = totals["model_flops"] / totals["step_time_s"] / 2 / peak
    assert totals["mfu"] == pytest.approx(mfu, rel=1e-6)
