"""Real models for the importer's breadth (dpc.models.IMPORTER_MODELS):
torchvision's MobileNetV3-Small (HardSwish, HardSigmoid), DenseNet-121 (Pad
before the average pools), a small Swin Transformer (ScatterND, Mod), and
nn.LSTM and nn.GRU classifiers (LSTM, GRU; bidirectional, two layers), an
Elman RNN written as a TorchScript loop (Loop, unrolled on import), and
learned Fourier features with a sine-activated layer (Sin, Cos, Floor, Mod).

Each is exported as PyTorch exports a training graph; dpc imports it, finds
PyTorch's parameters, builds the training step and plans it for a mesh. The
step's loss, every gradient and the new batch-norm statistics, run by the
interpreter in fp64, equal float64 PyTorch's within rtol 1e-6. The reference
uses the f32 values the ONNX file holds (norm epsilons and momenta, and the
1/6 of HardSwish and HardSigmoid): these are the model the file describes.
"""

import copy
import json
import os

import numpy as np
import pytest
import torch

from dpc import models, tools
from dpc.interpreter import interpret
from dpc.train import initial_inputs, train

NAMES = sorted(models.IMPORTER_MODELS)
# The op types each model is here for.
USES = {
    "mobilenet_v3_small": {"HardSwish", "HardSigmoid"},
    "densenet121": {"Pad", "AveragePool"},
    "swin": {"ScatterND", "Mod"},
    "lstm": {"LSTM"},
    "gru": {"GRU"},
    "loop_rnn": {"Loop"},
    "fourier_features": {"Sin", "Cos", "Floor", "Mod"},
}


@pytest.fixture(scope="module", params=NAMES)
def model(request, tmp_path_factory):
    """(name, spec, onnx path, training step path) of one importer model."""
    name = request.param
    outdir = str(tmp_path_factory.mktemp(name))
    models.export(name, outdir)
    onnx_path = os.path.join(outdir, name + ".onnx")
    step = os.path.join(outdir, "step.mlir")
    tools.run("dpc-opt", [onnx_path, "--train", "-o", step])
    return name, models.build(name), onnx_path, step


def f32(x):
    return float(np.float32(x))


class _HardSigmoid(torch.nn.Module):
    """ONNX HardSigmoid with the f32 slope the file holds."""

    def forward(self, x):
        return torch.clamp(x * f32(1 / 6) + 0.5, 0, 1)


class _HardSwish(_HardSigmoid):
    def forward(self, x):
        return x * super().forward(x)


def _float64_reference(module):
    """A float64 copy of `module`, in training mode, with the f32 constants
    of its export."""
    module = copy.deepcopy(module).double().train()
    for parent in list(module.modules()):
        for child_name, child in parent.named_children():
            if isinstance(child, torch.nn.Hardswish):
                setattr(parent, child_name, _HardSwish())
            elif isinstance(child, torch.nn.Hardsigmoid):
                setattr(parent, child_name, _HardSigmoid())
            elif isinstance(child, torch.nn.BatchNorm2d):
                child.momentum, child.eps = f32(child.momentum), f32(child.eps)
            elif isinstance(child, torch.nn.LayerNorm):
                child.eps = f32(child.eps)
    return module


def test_the_export_uses_the_op_types_it_is_here_for(model):
    import onnx

    name, _, onnx_path, _ = model
    ops = {node.op_type for node in onnx.load(onnx_path).graph.node}
    assert USES[name] <= ops, sorted(ops)


def test_parameters_are_pytorchs(model):
    _, spec, _, step = model
    params = tools.signature(open(step).read(), function="train_step")["param"]
    assert sorted(params) == sorted(k for k, _ in spec.model.named_parameters())


def test_loss_gradients_and_statistics_equal_float64_pytorch(model):
    _, spec, _, step = model
    weights = {k: v.detach().numpy() for k, v in spec.model.state_dict().items()
               if v.is_floating_point()}
    batch = {k: v.numpy() for k, v in spec.inputs.items()}
    hyper = tools.signature(open(step).read(), function="forward_backward")["hyper"]
    random_state = {k: np.int64(0) for k in ("seed", "micro_batch") if k in hyper}
    got = interpret(step, {**weights, **batch, **random_state},
                    function="forward_backward", precision="fp64")

    reference = _float64_reference(spec.model)
    loss, _ = reference(*[v.double() if v.is_floating_point() else v
                          for v in spec.inputs.values()])
    loss.backward()
    np.testing.assert_allclose(got["loss"], loss.item(), rtol=1e-6)
    for name, param in reference.named_parameters():
        # Within 1e-6 of each element or of the tensor's largest: an element
        # near 0 by cancellation is as exact as the terms that cancel (and
        # the file's f32 constants, GELU's sqrt(2) among them, move the
        # terms by ~1e-8). The 1e-12: gradients that are 0 up to rounding (a
        # bias before a batch norm) are ~1e-17 on both sides.
        expected = param.grad.numpy()
        np.testing.assert_allclose(got["grad:" + name], expected, rtol=1e-6,
                                   atol=1e-6 * np.abs(expected).max() + 1e-12,
                                   err_msg=name)
    for name, buffer in reference.named_buffers():
        if name.endswith(("running_mean", "running_var")):
            np.testing.assert_allclose(got[name], buffer.numpy(), rtol=1e-6,
                                       atol=1e-12, err_msg=name)


def test_plans_for_a_mesh(model, tmp_path):
    _, _, _, step = model
    report = str(tmp_path / "plan.json")
    tools.run("dpc-opt", [step, "--mesh=2x2", "--plan-only", "--plan-report=" + report])
    with open(report) as f:
        plan = json.load(f)
    assert plan["dp"] * plan["tp"] * plan["pp"] == plan["devices"] == 4
    totals = plan["totals"]
    assert 0 < totals["peak_memory_bytes"] <= totals["memory_limit_bytes"]


def _adamw_step(tmp_path, name):
    """Model `name` exported into `tmp_path`, its AdamW step, and that
    step's initial inputs and hyperparameter names."""
    outdir = str(tmp_path)
    models.export(name, outdir)
    step = str(tmp_path / "step.mlir")
    tools.run("dpc-opt", [os.path.join(outdir, name + ".onnx"), "--train",
                          "--optimizer=adamw", "-o", step])
    inputs, hyper = initial_inputs(step, outdir, name)
    return step, inputs, hyper


@pytest.mark.parametrize("name", ["lstm", "gru", "loop_rnn"])
@pytest.mark.parametrize("mesh,dp,tp,zero", [("2", 2, 1, 0), ("2x2", 2, 2, 1)])
def test_recurrent_ranks_equal_one_device(tmp_path, name, mesh, dp, tp, zero):
    """The recurrent layers split their batch over data-parallel ranks (the
    weights' gradients summed across them); tensor-parallel ranks hold them
    whole. 3 AdamW steps, fp64: the ranks equal one device to rounding."""
    step, inputs, hyper = _adamw_step(tmp_path, name)
    expected, losses = train(step, inputs, hyper, 3, "fp64")
    partitioned = str(tmp_path / "partitioned.mlir")
    tools.run("dpc-opt", [step, "--mesh=" + mesh, "--dp=%d" % dp, "--tp=%d" % tp,
                          "--pp=1", "--zero=%d" % zero, "--partition", "-o", partitioned])
    assert "dpc.all_reduce" in open(partitioned).read()
    actual, actual_losses = train(partitioned, inputs, hyper, 3, "fp64")
    np.testing.assert_allclose(actual_losses, losses, rtol=1e-10)
    assert sorted(actual) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(actual[key], expected[key], rtol=1e-8, atol=1e-12,
                                   err_msg=key)


@pytest.mark.parametrize("name", ["lstm", "gru", "loop_rnn", "fourier_features"])
def test_compiled_ranks_equal_one_device(tmp_path, name):
    """The CPU backend's recurrent kernels (a GEMM per step over the batch)
    and its sin, cos, floor and mod formulas on 2 data-parallel ranks over
    Gloo: after
    3 AdamW steps the losses
    equal the single-device interpreter's within rtol 1e-5, and every
    tensor is within 1e-5 of the fp64 step (test_cpu_backend.py's
    criterion)."""
    from test_cpu_backend import LAYOUTS, assert_compiled_steps_near_exact

    step, inputs, hyper = _adamw_step(tmp_path, name)
    assert_compiled_steps_near_exact(step, inputs, hyper, LAYOUTS["dp"], tmp_path)


def test_fourier_features_under_emulated_cuda_equal_one_device(tmp_path):
    """The CUDA backend's kernels of the trigonometric, rounding and
    remainder formulas, compiled by the host compiler under
    DPC_CUDA_EMULATION (test_cuda_backend.py), on 2 data-parallel ranks:
    the same criterion as the CPU backend's."""
    from test_cpu_backend import LAYOUTS, assert_compiled_steps_near_exact

    step, inputs, hyper = _adamw_step(tmp_path, "fourier_features")
    assert_compiled_steps_near_exact(step, inputs, hyper, LAYOUTS["dp"], tmp_path,
                                     emit=("--emit=cuda", "--cuda-emulation"))
