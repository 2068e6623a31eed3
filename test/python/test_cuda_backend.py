"""The CUDA backend (dpc-opt --emit=cuda), tested where there is no GPU.

Its generated program and header-only kernels (runtime/include/dpc/Runtime/
Cuda) are written once and compiled two ways: by nvcc for the GPU, and by
the host compiler under DPC_CUDA_EMULATION, where each kernel's range of
threads is a loop. The emulated artifact is trained by dpc-run over real
ranks talking Gloo, as CPU artifacts are, and must equal the single-device
interpreter as the CPU backend must (test_cpu_backend.py's criterion;
the CNN is resnet18 with SiLU, see `variants`, after one step):
that checks the generated CUDA code's arithmetic, index computations,
fusion and buffer plan on every CI run. The nvcc build of the same
programs is compiled and linked against cuBLASLt and NCCL where the
toolkit is installed. What only a GPU shows (cuBLASLt's products, NCCL,
the streams) is checked by scripts/gpu-check.sh."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import build_steps, compile_artifact_once
from test_cpu_backend import (DPC_OPT, DPC_RUN, LAYOUTS, MODEL_STEPS, STEP_FLAGS, STEPS,
                              assert_equals_one_device, load_outputs, reference, steps,
                              train_artifact, write_inputs)

from dpc import models, tools

assert steps  # the fixture, shared with the CPU backend's tests

NVCC = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
HAS_NVCC = os.path.exists(NVCC)
# The layouts each model is compiled for, emulated: every op family and
# layout at least once (data parallelism inside the mixed layouts, the
# pipeline on the MLP and the GPT), within the suite's time.
MODEL_LAYOUTS = {
    "mlp": ["dp", "tp", "dp-tp-zero1", "pp"],
    "transformer": ["dp-tp-zero1"],
    "gpt": ["tp", "dp-tp-zero1", "dp-pp"],
    "resnet18_silu": ["dp"],
}
CASES = [(name, layout) for name, layouts in MODEL_LAYOUTS.items() for layout in layouts]


@pytest.fixture(scope="module")
def variants(steps, exported, tmp_path_factory):
    """The steps and exports of the bundled models, with resnet18_silu's.

    The CNN is compared as resnet18_silu: resnet18's ReLUs make the
    comparison a coin toss where one of their inputs lies within fp32
    roundoff of zero. The direct convolutions here sum in another order
    than oneDNN and the interpreter; in resnet18's dp step one pre-ReLU
    value (-3.1e-7 in the CPU backend, +3.8e-7 here, of values up to 0.57)
    lands on the other side, its gradient row flips, and a batch norm over
    8 values spreads that to 0.5% of bn1.bias's gradient."""
    out = str(tmp_path_factory.mktemp("variants"))
    name = "resnet18_silu"
    meta = models.export(name, out)
    built = build_steps({name: (out, meta)}, out, *STEP_FLAGS)
    return {**steps, **built}, {**exported, name: (out, meta)}


def compile_cuda(step, flags, path, emulate=True):
    extra = ["--cuda-emulation"] if emulate else []
    code, stderr = compile_artifact_once(
        DPC_OPT, step, [*flags, "--partition", "--emit=cuda", *extra], path)
    assert code == 0, stderr
    return json.load(open(os.path.join(path, "manifest.json")))


@pytest.mark.parametrize("name, layout", CASES)
def test_emulated_cuda_ranks_equal_one_device(variants, tmp_path, name, layout):
    steps, exported = variants
    inputs, *_ = reference(steps, exported, name)
    artifact = str(tmp_path / "model.dpc")
    manifest = compile_cuda(steps[name], LAYOUTS[layout], artifact)
    assert manifest["backend"] == "cuda" and manifest["emulated"] is True
    assert os.path.exists(os.path.join(artifact, "model.cu"))
    init, data = write_inputs(steps[name], inputs, tmp_path)
    out = str(tmp_path / "out")
    r, report = train_artifact(artifact, init, data, out, steps=MODEL_STEPS.get(name, STEPS))
    assert r.returncode == 0, r.stderr
    assert_equals_one_device(steps, exported, name, report, out)


def test_a_kernel_fault_names_its_op(steps, exported, tmp_path):
    """A NaN weight under --check-finite: the device records the first op
    whose result holds it, and the step's end reports that op by name."""
    inputs, *_ = reference(steps, exported, "mlp")
    inputs = dict(inputs)
    inputs["net.2.weight"] = inputs["net.2.weight"].copy()
    inputs["net.2.weight"][0, 0] = np.nan
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_cuda(steps["mlp"], LAYOUTS["dp"], artifact)
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "b"), "--check-finite")
    assert r.returncode != 0
    # The weight's transpose is read by the GEMM: the product is the first
    # result to hold the NaN.
    assert "step 1: dpc.matmul at" in r.stderr and "holds NaN or Inf" in r.stderr, r.stderr


def test_an_out_of_range_label_names_its_op(exported, tmp_path):
    """A label outside the classes is a fault the loss kernel records; the
    step fails naming the loss op and the label, on every rank."""
    onnx = os.path.join(exported["mlp"][0], "mlp.onnx")
    step = str(tmp_path / "step.mlir")
    subprocess.run([DPC_OPT, onnx, "--train", "-o", step], check=True)
    signature = tools.signature(open(step).read(), function="train_step")
    artifact = str(tmp_path / "model.dpc")
    compile_cuda(onnx, ["--train", *LAYOUTS["dp"]], artifact)  # with its weights
    data = str(tmp_path / "data.npz")
    batch = {}
    for key, shape in signature["input"].items():
        if "label" in key or "target" in key:
            batch[key] = np.full(shape, 1000, dtype=np.int64)
        else:
            batch[key] = np.zeros(shape, dtype=np.float32)
    np.savez(data, **batch)
    r = subprocess.run([DPC_RUN, artifact, "--steps=1", "--data", data, "--timeout=30"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "dpc.softmax_cross_entropy at" in r.stderr, r.stderr
    assert "label 1000" in r.stderr, r.stderr


@pytest.mark.skipif(not HAS_NVCC, reason="no CUDA toolkit (nvcc) on this machine")
@pytest.mark.parametrize("name, layout, archs", [("mlp", "dp-tp-zero1", None),
                                                 ("gpt", "dp-pp", "90")])
def test_nvcc_builds_the_artifact(steps, name, layout, archs, tmp_path):
    """The same program compiles with nvcc for sm_80 and sm_90 (plus PTX),
    or the architectures --cuda-arch names, and links cuBLASLt, NCCL and
    the CUDA runtime; the library exports the ABI version and every
    stage's program."""
    artifact = str(tmp_path / "model.dpc")
    flags = LAYOUTS[layout] + (["--cuda-arch=" + archs] if archs else [])
    manifest = compile_cuda(steps[name], flags, artifact, emulate=False)
    assert manifest["backend"] == "cuda" and "emulated" not in manifest
    library = os.path.join(artifact, "libmodel.so")
    needed = subprocess.run(["readelf", "-d", library], capture_output=True, text=True,
                            check=True).stdout
    for lib in ("libcublasLt.so", "libnccl.so", "libcudart.so"):
        assert lib in needed, needed
    symbols = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True,
                             text=True, check=True).stdout
    assert "dpc_program_abi_version" in symbols
    for program in manifest["programs"]:
        assert program["symbol"] in symbols
    # The fatbin names each architecture's machine code it holds.
    binary = open(library, "rb").read()
    assert b"sm_90" in binary
    assert (b"sm_80" in binary) == (archs is None)


def test_a_bad_cuda_arch_is_a_clear_error(steps, tmp_path):
    r = subprocess.run([DPC_OPT, steps["mlp"], *LAYOUTS["dp"], "--partition", "--emit=cuda",
                        "--cuda-arch=sm_90", "-o", str(tmp_path / "m.dpc")],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "--cuda-arch='sm_90' is not a list of compute capabilities" in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "m.dpc")


def test_a_missing_nvcc_is_a_clear_error(steps, tmp_path):
    env = dict(os.environ, NVCC=str(tmp_path / "no-such-nvcc"))
    r = subprocess.run([DPC_OPT, steps["mlp"], *LAYOUTS["dp"], "--partition", "--emit=cuda",
                        "-o", str(tmp_path / "m.dpc")], capture_output=True, text=True,
                       env=env)
    assert r.returncode != 0
    assert "cannot find nvcc" in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "m.dpc")


def test_a_checkpoint_of_the_device_resumes(steps, exported, tmp_path):
    """A CUDA artifact's parameters live in device buffers between steps;
    its checkpoint after 2 steps (downloaded from the emulated device),
    resumed for 1 more step, equals 3 steps in one run to the bit, and
    resumed by the CPU backend on another mesh, to rounding."""
    from test_cpu_backend import compile_artifact
    inputs, *_ = reference(steps, exported, "gpt")
    init, data = write_inputs(steps["gpt"], inputs, tmp_path)
    cuda = str(tmp_path / "cuda.dpc")
    cpu = str(tmp_path / "cpu.dpc")
    compile_cuda(steps["gpt"], LAYOUTS["dp-tp-zero1"], cuda)
    compile_artifact(steps["gpt"], LAYOUTS["dp"], cpu)
    whole = str(tmp_path / "whole")
    r, _ = train_artifact(cuda, init, data, whole)
    assert r.returncode == 0, r.stderr
    saved = str(tmp_path / "ckpt")
    r, _ = train_artifact(cuda, init, data, str(tmp_path / "part"), "--save", saved, steps=2)
    assert r.returncode == 0, r.stderr
    for artifact, bound in ((cuda, 0.0), (cpu, 1e-4)):
        resumed = str(tmp_path / ("resumed-" + os.path.basename(artifact)))
        r, _ = train_artifact(artifact, init, data, resumed, "--resume", saved, steps=1)
        assert r.returncode == 0, r.stderr
        a, b = load_outputs(whole), load_outputs(resumed)
        assert sorted(a) == sorted(b)
        for key in a:
            scale = np.linalg.norm(a[key].ravel()) + 1e-30
            assert np.linalg.norm((b[key] - a[key]).ravel()) / scale <= bound, (key, artifact)


def test_check_sync_reads_the_device_copies(steps, exported, tmp_path):
    """A bit flipped in one rank's device copy of a replicated parameter is
    found by --check-sync after the step, as on the CPU."""
    inputs, *_ = reference(steps, exported, "mlp")
    init, data = write_inputs(steps["mlp"], inputs, tmp_path)
    artifact = str(tmp_path / "model.dpc")
    compile_cuda(steps["mlp"], LAYOUTS["dp"], artifact)
    r, _ = train_artifact(artifact, init, data, str(tmp_path / "a"), "--perturb-rank=1",
                          "--check-sync")
    assert r.returncode != 0
    assert "--check-sync: ranks 0 and 1 hold different values for the same block of " \
           "param 'net.0.weight'" in r.stderr and "(after step 1)" in r.stderr, r.stderr


@pytest.mark.skipif(not HAS_NVCC or os.path.exists("/dev/nvidia0"),
                    reason="needs the CUDA toolkit and no GPU")
def test_without_a_gpu_a_cuda_artifact_is_refused(steps, tmp_path):
    # The layout test_nvcc_builds_the_artifact built: its artifact is reused.
    artifact = str(tmp_path / "model.dpc")
    compile_cuda(steps["mlp"], LAYOUTS["dp-tp-zero1"], artifact, emulate=False)
    r = subprocess.run([DPC_RUN, artifact, "--steps=1", "--timeout=30"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0
    assert "no CUDA device is visible" in r.stderr, r.stderr
