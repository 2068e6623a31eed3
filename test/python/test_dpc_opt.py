"""dpc-opt as a user drives it: help, a pass on a file, a bad file."""

import os
import subprocess

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BUILD = os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build"))
DPC_OPT = os.path.join(BUILD, "bin", "dpc-opt")


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.path.exists(DPC_OPT):
        pytest.fail("dpc-opt is not built at %s; run `make build`" % DPC_OPT)


def run(*args, **kwargs):
    return subprocess.run([DPC_OPT, *args], capture_output=True, text=True,
                          **kwargs)


def test_help_lists_dpc_passes():
    out = run("--help").stdout
    assert "--test-dpc-op-cost" in out
    assert "--test-dpc-sharding-rules" in out


def test_example_costs_match_hand_count():
    out = run(os.path.join(ROOT, "examples", "mlp.mlir"), "-test-dpc-op-cost")
    assert out.returncode == 0, out.stderr
    # 2 * 32 * 256 * 784 and 2 * 32 * 10 * 256 flops for the two layers.
    assert "dpc.flops = 12845056 : i64" in out.stdout
    assert "dpc.flops = 163840 : i64" in out.stdout


def test_bad_input_names_file_line_and_rule(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "func.func @f(%a: tensor<2x4xf32>, %b: tensor<5x2xf32>) {\n"
        "  %0 = dpc.matmul %a, %b : (tensor<2x4xf32>, tensor<5x2xf32>)"
        " -> tensor<2x2xf32>\n"
        "  return\n}\n")
    out = run(str(bad), "-o", str(tmp_path / "out.mlir"))
    assert out.returncode != 0
    assert "bad.mlir:2:" in out.stderr
    assert "contracted dimensions differ" in out.stderr
    assert not (tmp_path / "out.mlir").exists()


def test_missing_file_is_an_error(tmp_path):
    out = run(str(tmp_path / "absent.mlir"))
    assert out.returncode != 0
    assert "absent.mlir" in out.stderr
