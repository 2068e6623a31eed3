"""The CUDA backend checked on one GPU, prepared where dpc is built.

    # here (the build machine: dpc-opt, the CPU backend, nvcc):
    PYTHONPATH=python /usr/bin/python3 bench/gpu_check.py prepare gpu-check
    # on a machine with one NVIDIA GPU, its driver and PyTorch (nothing else):
    python3 bench/gpu_check.py run gpu-check

`prepare` writes into DIR everything the GPU machine needs, under 64 MiB:
  - dpc-run-artifact (dpc-run's training mode, without MLIR) and the shared
    libraries it needs beyond libc and libstdc++ (Gloo's);
  - for each bundled model (mlp, transformer, gpt, resnet18): its AdamW step compiled for one GPU (--emit=cuda,
    sm_80/sm_90 and PTX), initial values and a batch, and the CPU
    backend's result of 3 steps from them (losses and every parameter and
    optimizer slot): the fp32 reference;
  - the gpt step in bf16 (fp32 master weights) compiled likewise, with the
    interpreter's loss curve over 5 steps;
  - a larger GPT (hidden 1024, 8 layers, context 256, vocabulary 8192, 8
    sequences), compiled with the cost model's prediction of its step time
    and memory on an h100-sxm (the closest preset); its weights are drawn
    on the GPU machine (they would not fit the 64 MiB).

`run` trains each on the GPU and prints, for each model, the largest
relative difference (in norm) of any parameter or slot from the CPU
backend and whether it is within the CPU tests' bound (1e-5, or 10x the
fp32 error of one device); the bf16 loss curve against the interpreter's
(rtol 1e-2: cuBLASLt and the CPU sum in other orders before rounding to
bf16); and for the larger GPT, dpc's samples/s beside PyTorch's on the
same GPU (eager, and torch.compile where it works), the ratio, MFU against
the GPU's fp32 peak (dpc's GEMMs are fp32, no TF32), and measured against
predicted step time and memory. It exits non-zero if a numerics check
fails. Meant to run in well under 8 minutes.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["mlp", "transformer", "gpt", "resnet18"]
STEPS = 3
# As in the CPU backend's tests: resnet18 is compared after one step, its
# weights to 1e-3 (Adam's first step moves a weight by the sign of a
# gradient that summation order can flip near zero).
MODEL_STEPS = {"resnet18": 1}
PARAM_BOUND = {"resnet18": 1e-3}
BF16_STEPS = 5
# The larger GPT of the speed check.
LARGE = dict(vocab=8192, block=256, d_model=1024, nhead=16, layers=8)
LARGE_BATCH = 8
WARMUP, TIMED = 3, 10
# The most the larger GPT's dpc run may take, so that PyTorch's runs still
# fit the device call.
LARGE_WALL_SECONDS = 180
# Dense fp32 (no tensor cores) peaks, FLOP/s, by device name.
FP32_PEAK = {"H200": 67e12, "H100": 67e12, "A100": 19.5e12}


def prepare(out, build, emulate=False):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from dpc import models
    from dpc.train import initial_inputs
    from dpc.train import train as interpret_steps

    bin_dir = os.path.join(build, "bin")
    dpc_opt = os.path.join(bin_dir, "dpc-opt")
    dpc_run = os.path.join(bin_dir, "dpc-run")
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)

    # The launcher and its libraries (not libc, libstdc++ and the loader).
    lib = os.path.join(out, "lib")
    os.makedirs(lib, exist_ok=True)
    shutil.copy(os.path.join(bin_dir, "dpc-run-artifact"), out)
    for line in subprocess.run(["ldd", os.path.join(bin_dir, "dpc-run-artifact")],
                               capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and not any(
                parts[0].startswith(p) for p in ("libc.", "libm.", "libstdc++", "libgcc_s",
                                                 "libz.", "ld-linux")):
            shutil.copy(os.path.realpath(parts[2]), os.path.join(lib, parts[0]))

    def opt(*args):
        subprocess.run([dpc_opt, *args], check=True)

    # A rehearsal of this script where there is no GPU (the speed check
    # is then left out).
    emulation = ["--cuda-emulation"] if emulate else []

    for name in SMALL:
        meta_dir = os.path.join(work, name)
        models.export(name, meta_dir)
        onnx = os.path.join(meta_dir, name + ".onnx")
        step = os.path.join(work, name + ".mlir")
        opt(onnx, "--train", "--optimizer=adamw", "--weight-decay=0.01", "-o", step)
        opt(step, "--emit=cuda", *emulation, "-o", os.path.join(out, name + ".dpc"))
        cpu = os.path.join(work, name + ".cpu.dpc")
        opt(step, "--emit=cpu", "-o", cpu)
        inputs, _ = initial_inputs(step, meta_dir, name)
        from dpc import tools
        roles = tools.signature(open(step).read(), function="train_step")
        init = {k: inputs[k] for r in ("param", "state") for k in roles[r]}
        init_path = os.path.join(out, name + ".init.npz")
        if sum(v.nbytes for v in init.values()) > LARGE_FILES:
            # Drawn again on the GPU machine from the same seed.
            init_path = os.path.join(work, name + ".init.npz")
            json.dump(init_recipe(init), open(os.path.join(out, name + ".init.json"), "w"))
        np.savez(init_path, **init)
        np.savez(os.path.join(out, name + ".data.npz"),
                 **{k: inputs[k] for k in roles["input"]})
        reference = os.path.join(out, name + ".reference")
        subprocess.run([dpc_run, cpu, "--steps=%d" % MODEL_STEPS.get(name, STEPS),
                        "--init", init_path,
                        "--data", os.path.join(out, name + ".data.npz"),
                        "--output-dir", reference,
                        "--report-json", reference + ".json"], check=True)
        if dir_bytes(reference) > LARGE_FILES:
            sample_reference(reference)

    # bf16: the interpreter's loss curve.
    step = os.path.join(work, "gpt.bf16.mlir")
    opt(os.path.join(work, "gpt", "gpt.onnx"), "--train", "--optimizer=adamw",
        "--precision=bf16", "-o", step)
    opt(step, "--emit=cuda", *emulation, "-o", os.path.join(out, "gpt-bf16.dpc"))
    inputs, hyper = initial_inputs(step, os.path.join(work, "gpt"), "gpt")
    from dpc import tools
    roles = tools.signature(open(step).read(), function="train_step")
    np.savez(os.path.join(out, "gpt-bf16.init.npz"),
             **{k: inputs[k] for r in ("param", "state") for k in roles[r]})
    np.savez(os.path.join(out, "gpt-bf16.data.npz"), **{k: inputs[k] for k in roles["input"]})
    _, losses = interpret_steps(step, inputs, hyper, BF16_STEPS, "fp32")
    json.dump({"losses": losses}, open(os.path.join(out, "gpt-bf16.reference.json"), "w"))

    if emulate:
        shutil.rmtree(work)
        drop_sources(out)
        return
    # The larger GPT, planned for one device of the h100-sxm preset.
    import torch
    torch.manual_seed(0)
    spec = models.Spec(models.WithLoss(models.TinyGPT(**LARGE)), {
        "tokens": torch.randint(0, LARGE["vocab"], (LARGE_BATCH, LARGE["block"])),
        "target": torch.randint(0, LARGE["vocab"], (LARGE_BATCH, LARGE["block"]))},
        ["loss", "logits"])
    large_dir = os.path.join(work, "gpt-large")
    models.export_spec("gpt-large", spec, large_dir)
    step = os.path.join(work, "gpt-large.mlir")
    opt(os.path.join(large_dir, "gpt-large.onnx"), "--train", "--optimizer=adamw",
        "--weight-decay=0.01", "-o", step)
    opt(step, "--mesh=1", "--cluster=h100-sxm", "--partition", "--emit=cuda",
        "-o", os.path.join(out, "gpt-large.dpc"))
    json.dump(LARGE, open(os.path.join(out, "gpt-large.config.json"), "w"))
    shutil.rmtree(work)
    drop_sources(out)
    total = dir_bytes(out)
    print("gpu-check: prepared %s (%.1f MiB)" % (out, total / 2**20))


# Above this many bytes, initial values are drawn again on the GPU
# machine and the reference is kept as a sample (the carried folder must
# stay under 64 MiB).
LARGE_FILES = 8 << 20
SAMPLES = 4096


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def drop_sources(out):
    """The generated CUDA source is not needed to run an artifact."""
    for artifact in os.listdir(out):
        source = os.path.join(out, artifact, "model.cu")
        if artifact.endswith(".dpc") and os.path.exists(source):
            os.remove(source)


def init_recipe(init):
    """What initial_inputs drew (0.1 N(0, 1) from default_rng(0), in
    signature order), with each array's sum to check the draw against."""
    return {"seed": 0, "scale": 0.1,
            "arrays": [[k, list(v.shape), float(v.astype(np.float64).sum())]
                       for k, v in init.items()]}


def draw_init(recipe):
    rng = np.random.default_rng(recipe["seed"])
    init = {}
    for name, shape, total in recipe["arrays"]:
        v = (recipe["scale"] * rng.standard_normal(shape)).astype(np.float32)
        if not np.isclose(v.astype(np.float64).sum(), total, rtol=1e-6, atol=1e-3):
            raise SystemExit("gpu-check: %s drawn differently here (numpy %s)" % (
                name, np.__version__))
        init[name] = v
    return init


def sample_reference(reference):
    """Replaces each array of REFERENCE by SAMPLES of its elements at
    seeded positions (sample.npz): the relative difference over a few
    thousand uniformly chosen elements estimates the one in norm."""
    rng = np.random.default_rng(1)
    sample = {}
    for f in sorted(os.listdir(reference)):
        v = np.load(os.path.join(reference, f)).ravel()
        index = np.sort(rng.choice(v.size, min(v.size, SAMPLES), replace=False))
        sample[f + ":index"] = index.astype(np.int64)
        sample[f + ":value"] = v[index]
        os.remove(os.path.join(reference, f))
    np.savez(os.path.join(reference, "sample.npz"), **sample)


def reference_arrays(reference, result):
    """(name, GPU values, reference values) for each reference array, or
    the sampled elements of both."""
    sample_path = os.path.join(reference, "sample.npz")
    if not os.path.exists(sample_path):
        for f in sorted(os.listdir(reference)):
            yield f, np.load(os.path.join(result, f)), np.load(os.path.join(reference, f))
        return
    sample = np.load(sample_path)
    for key in sorted(k for k in sample.files if k.endswith(":index")):
        f = key[:-len(":index")]
        yield (f, np.load(os.path.join(result, f)).ravel()[sample[key]],
               sample[f + ":value"])


def train(out, artifact, *args, wall_seconds=None):
    """dpc-run-artifact on `artifact`; a run over `wall_seconds` is killed
    and reported as a failure (the first GPU run's 40 s steps overran the
    device call)."""
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(out, "lib") + ":" +
               os.environ.get("LD_LIBRARY_PATH", ""))
    command = [os.path.join(out, "dpc-run-artifact"), os.path.join(out, artifact),
               "--timeout=120", *args]
    try:
        return subprocess.run(command, capture_output=True, text=True, env=env,
                              timeout=wall_seconds)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(
            command, 124, "", "killed after %d s (too slow)" % wall_seconds)


def relative(a, b):
    return float(np.linalg.norm((a - b).ravel()) / (np.linalg.norm(b.ravel()) + 1e-30))


def run(out):
    failures = 0
    for name in SMALL:
        result = os.path.join(out, name + ".gpu")
        init_path = os.path.join(out, name + ".init.npz")
        if os.path.exists(os.path.join(out, name + ".init.json")):
            np.savez(init_path, **draw_init(json.load(open(
                os.path.join(out, name + ".init.json")))))
        r = train(out, name + ".dpc", "--steps=%d" % MODEL_STEPS.get(name, STEPS),
                  "--init", init_path,
                  "--data", os.path.join(out, name + ".data.npz"),
                  "--output-dir", result, "--report-json", result + ".json")
        if r.returncode != 0:
            print("FAIL %s: dpc-run-artifact failed:\n%s" % (name, r.stderr[-3000:]))
            failures += 1
            continue
        gpu = json.load(open(result + ".json"))["losses"]
        cpu = json.load(open(os.path.join(out, name + ".reference.json")))["losses"]
        reference = os.path.join(out, name + ".reference")
        worst, worst_key = 0.0, ""
        for f, a, b in reference_arrays(reference, result):
            if relative(a, b) >= worst:
                worst, worst_key = relative(a, b), f
        loss_ok = np.allclose(gpu, cpu, rtol=1e-5)
        ok = loss_ok and worst <= PARAM_BOUND.get(name, 1e-4)
        failures += not ok
        print("%s %-11s losses %s vs CPU %s; worst parameter/slot %s at %.2e" % (
            "PASS" if ok else "FAIL", name, np.round(gpu, 6).tolist(),
            np.round(cpu, 6).tolist(), worst_key, worst))

    r = train(out, "gpt-bf16.dpc", "--steps=%d" % BF16_STEPS,
              "--init", os.path.join(out, "gpt-bf16.init.npz"),
              "--data", os.path.join(out, "gpt-bf16.data.npz"),
              "--report-json", os.path.join(out, "gpt-bf16.gpu.json"))
    if r.returncode != 0:
        print("FAIL gpt-bf16: dpc-run-artifact failed:\n%s" % r.stderr[-3000:])
        failures += 1
    else:
        gpu = json.load(open(os.path.join(out, "gpt-bf16.gpu.json")))["losses"]
        ref = json.load(open(os.path.join(out, "gpt-bf16.reference.json")))["losses"]
        ok = np.allclose(gpu, ref, rtol=1e-2)
        failures += not ok
        print("%s gpt-bf16    loss curve %s vs interpreter %s" % (
            "PASS" if ok else "FAIL", np.round(gpu, 4).tolist(), np.round(ref, 4).tolist()))

    if os.path.exists(os.path.join(out, "gpt-large.dpc")):
        speed(out)
    return 1 if failures else 0


def speed(out):
    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from dpc import models
    manifest = json.load(open(os.path.join(out, "gpt-large.dpc", "manifest.json")))
    rng = np.random.default_rng(0)
    init = {}
    for spec in manifest["arguments"]:
        if spec["role"] in ("param", "state"):
            init[spec["name"]] = (0.02 * rng.standard_normal(spec["shape"])).astype(np.float32)
    init_path = os.path.join(out, "gpt-large.init.npz")
    np.savez(init_path, **init)
    report = os.path.join(out, "gpt-large.gpu.json")
    r = train(out, "gpt-large.dpc", "--steps=%d" % (WARMUP + TIMED), "--init", init_path,
              "--report-json", report, wall_seconds=LARGE_WALL_SECONDS)
    if r.returncode != 0:
        print("FAIL gpt-large: dpc-run-artifact failed:\n%s" % r.stderr[-3000:])
        return
    rep = json.load(open(report))
    seconds = float(np.median(rep["step_seconds"][WARMUP:]))
    c = json.load(open(os.path.join(out, "gpt-large.config.json")))
    b, s, h, layers, v = LARGE_BATCH, c["block"], c["d_model"], c["layers"], c["vocab"]
    # Megatron's count without recomputation: 72 B s L h^2 (1 + s/6h + V/12hL).
    flops = 72 * b * s * layers * h * h * (1 + s / (6 * h) + v / (12 * h * layers))
    device = torch.cuda.get_device_name()
    peak = next((p for k, p in FP32_PEAK.items() if k in device), 67e12)
    print("gpt-large on %s: dpc %.1f samples/s (%.2f ms/step), MFU %.1f%% of fp32 peak; "
          "predicted %.2f ms/step (measured/predicted %.2f), memory predicted %.2f GiB" % (
              device, b / seconds, seconds * 1e3, 100 * flops / seconds / peak,
              rep["predicted_step_seconds"] * 1e3,
              seconds / max(rep["predicted_step_seconds"], 1e-12),
              rep["predicted_peak_memory_bytes"] / 2**30))
    torch.cuda.reset_peak_memory_stats()
    for mode in ("eager", "compile"):
        torch.manual_seed(0)
        model = models.WithLoss(models.TinyGPT(**LARGE)).cuda()
        step_model = model
        if mode == "compile":
            try:
                step_model = torch.compile(model)
            except Exception as error:  # noqa: BLE001 - report and go on
                print("torch.compile unavailable: %s" % error)
                continue
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
        tokens = torch.randint(0, v, (b, s), device="cuda")
        target = torch.randint(0, v, (b, s), device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = False
        times = []
        try:
            for i in range(WARMUP + TIMED):
                torch.cuda.synchronize()
                start = time.perf_counter()
                optimizer.zero_grad(set_to_none=True)
                loss, _ = step_model(tokens, target)
                loss.backward()
                optimizer.step()
                torch.cuda.synchronize()
                times.append(time.perf_counter() - start)
        except Exception as error:  # noqa: BLE001 - report and go on
            print("PyTorch %s failed: %s" % (mode, error))
            continue
        t = float(np.median(times[WARMUP:]))
        print("gpt-large PyTorch %-7s %.1f samples/s (%.2f ms/step), fp32; dpc/PyTorch %.2fx" % (
            mode, b / t, t * 1e3, t / seconds))
    print("PyTorch peak memory %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["prepare", "run"])
    p.add_argument("dir")
    p.add_argument("--build", default=os.environ.get("DPC_BUILD_DIR",
                                                     os.path.join(ROOT, "build")))
    p.add_argument("--emulate", action="store_true",
                   help="prepare: compile with --cuda-emulation, to rehearse the run "
                        "stage here (numerics only)")
    args = p.parse_args(argv)
    if args.command == "prepare":
        prepare(os.path.abspath(args.dir), args.build, args.emulate)
        return 0
    return run(os.path.abspath(args.dir))


if __name__ == "__main__":
    sys.exit(main())
