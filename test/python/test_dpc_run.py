"""dpc-run --interpret as a user drives it: inputs from .npy and .npz files,
names with '/', bf16 arguments, fp64 inputs for gradient checks, and output
directories that hold only complete files."""

import os
import subprocess

import numpy as np
import pytest
import torch

from dpc import npy_name
from dpc.interpreter import InterpreterError, dpc_run, interpret

PROGRAM = """
func.func @main(%x: tensor<2x3xf32> {dpc.input = "data/x"},
                %w: tensor<3xf32> {dpc.param = "layer%0/w"},
                %h: tensor<3xbf16> {dpc.param = "half"})
    -> (tensor<2x3xf32> {dpc.output = "out/y"}, tensor<3xbf16> {dpc.state = "half"}) {
  %y = dpc.mul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %h2 = dpc.add %h, %h : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  return %y, %h2 : tensor<2x3xf32>, tensor<3xbf16>
}
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    return str(path)


def bf16(values):
    return torch.tensor(values, dtype=torch.float32).to(torch.bfloat16).float().numpy()


def test_npz_and_npy_inputs_with_escaped_names(program, tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.array([1.5, -2, 0.25], np.float32)
    h = np.array([1 / 3, 100.3, -7.01], np.float32)
    np.savez_compressed(tmp_path / "params.npz", **{"layer%0/w": w, "half": h})
    np.save(tmp_path / npy_name("data/x"), x)
    out = tmp_path / "out"
    result = subprocess.run([dpc_run(), "--interpret", program, "--inputs-npz",
                             str(tmp_path / "params.npz"), "--input",
                             "data/x=" + str(tmp_path / npy_name("data/x")),
                             "--output-dir", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    # Only complete files: no temporary left behind.
    assert sorted(os.listdir(out)) == sorted([npy_name("out/y"), npy_name("half")])
    np.testing.assert_array_equal(np.load(out / npy_name("out/y")), x * w)
    # A float32 file feeds a bf16 argument (rounded); bf16 comes back as float32.
    half = np.load(out / npy_name("half"))
    assert half.dtype == np.float32
    np.testing.assert_array_equal(half, bf16(bf16(h) * 2))


def test_fp64_keeps_double_inputs_for_f32_arguments(program):
    x = np.full((2, 3), 1 + 1e-12)
    got = interpret(program, {"data/x": x, "layer%0/w": np.ones(3),
                              "half": np.ones(3, np.float32)}, precision="fp64")
    assert got["out/y"].dtype == np.float64
    np.testing.assert_array_equal(got["out/y"], x)


def test_fp32_rejects_double_inputs_for_f32_arguments(program):
    with pytest.raises(InterpreterError) as error:
        interpret(program, {"data/x": np.ones((2, 3)), "layer%0/w": np.ones(3, np.float32),
                            "half": np.ones(3, np.float32)})
    assert ("input 'data/x': expected tensor<2x3xf32>, got tensor<2x3xf64>"
            in str(error.value))


def test_input_given_twice(program, tmp_path):
    np.savez(tmp_path / "a.npz", half=np.ones(3, np.float32))
    np.save(tmp_path / "h.npy", np.ones(3, np.float32))
    result = subprocess.run([dpc_run(), "--interpret", program, "--inputs-npz",
                             str(tmp_path / "a.npz"), "--input", "half=" + str(tmp_path / "h.npy"),
                             "--print"], capture_output=True, text=True)
    assert result.returncode == 1
    assert "input 'half' is given twice" in result.stderr


def test_failed_run_writes_nothing(tmp_path):
    program = tmp_path / "bad.mlir"
    program.write_text("""
func.func @main(%x: tensor<2xf32> {dpc.input = "x"}) -> tensor<2xf32> {
  %i = dpc.constant dense<[0, 5]> : tensor<2xi64>
  %r = dpc.gather %x[%i] {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
""")
    np.save(tmp_path / "x.npy", np.ones(2, np.float32))
    out = tmp_path / "out"
    result = subprocess.run([dpc_run(), "--interpret", str(program), "--input",
                             "x=" + str(tmp_path / "x.npy"), "--output-dir", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "bad.mlir:4:8: error: index 5 (element 1 of the indices) is out of range" in result.stderr
    assert not out.exists()


def test_truncated_npz_is_an_error(program, tmp_path):
    np.savez(tmp_path / "p.npz", half=np.ones(3, np.float32))
    data = (tmp_path / "p.npz").read_bytes()
    (tmp_path / "p.npz").write_bytes(data[:len(data) // 2])
    result = subprocess.run([dpc_run(), "--interpret", program, "--inputs-npz",
                             str(tmp_path / "p.npz"), "--print"], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.startswith("dpc-run: error: " + str(tmp_path / "p.npz") + ": ")
