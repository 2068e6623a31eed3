"""The training step dpc builds equals PyTorch's, step for step.

`dpc-opt MODEL.onnx --train` writes @forward_backward (loss, outputs and the
gradient of every parameter) and @train_step (the optimizer update); both
run under the reference interpreter and are compared with torch.autograd
and torch.optim on the same weights and batch. The models are dpc.models'
exports: an MLP, torchvision's resnet18 with training-mode BatchNorm, and
torch.nn.TransformerEncoder (dropout 0).

The reference runs in float64. fp32 PyTorch is no oracle for a deep
backward: on resnet18 its stem gradient is 2e-5 from the float64 one,
8 times further than the interpreter's fp32 (which accumulates in double),
so comparing two fp32 runs would test PyTorch's rounding. The interpreter's
fp32 results must be within rtol 1e-4 of float64 PyTorch; its fp64 results,
and the optimizer steps, within rtol 1e-9 (the reference takes the IR's
f32 hyperparameters, rounded as the IR rounds them).
"""

import copy
import os

import numpy as np
import pytest
import torch

from dpc import models, tools
from dpc.interpreter import interpret

TOLERANCES = {"fp32": (1e-4, 1e-5), "fp64": (1e-5, 1e-7)}
TRAINED = ["mlp", "resnet18", "transformer"]


def _compile(onnx_path, out, *flags):
    tools.run("dpc-opt", [onnx_path, "--train", *flags, "-inline", "-o", out])
    return out


def _random_state(mlir, function):
    """The dropout seed and micro-batch index a function of `mlir` takes
    (a model with dropout layers), as zeros."""
    hyper = tools.signature(open(mlir).read(), function=function)["hyper"]
    return {k: np.int64(0) for k in ("seed", "micro_batch") if k in hyper}


def _weights(model):
    """Every float parameter and buffer by its state_dict name, as NumPy."""
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()
            if v.is_floating_point()}


def _batch(spec):
    return {k: v.numpy() for k, v in spec.inputs.items()}


def _float64(spec):
    """The model of `spec` in float64, in training mode, with the f32
    rounding of the norm constants that the IR holds."""
    model = copy.deepcopy(spec.model).double().train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum, m.eps = f32(m.momentum), f32(m.eps)
        elif isinstance(m, torch.nn.LayerNorm):
            m.eps = f32(m.eps)
    return model


def _torch_inputs(batch):
    return [torch.from_numpy(b).double() if b.dtype.kind == "f" else torch.from_numpy(b)
            for b in batch.values()]


def _assert_close(got, expected, what, precision="fp64", atol=None):
    rtol, default_atol = TOLERANCES[precision]
    atol = default_atol if atol is None else atol
    assert got.shape == expected.shape, what
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


@pytest.fixture(scope="module")
def compiled(exported, tmp_path_factory):
    """{name: path} of each model's training step (SGD: the update is not used)."""
    out = tmp_path_factory.mktemp("train")
    return {name: _compile(os.path.join(exported[name][0], name + ".onnx"),
                           str(out / (name + ".mlir")))
            for name in TRAINED}


@pytest.mark.parametrize("name", TRAINED)
@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_loss_and_gradients_equal_pytorch(compiled, name, precision):
    spec = models.build(name)
    weights = _weights(spec.model)
    got = interpret(compiled[name], {**weights, **_batch(spec),
                                     **_random_state(compiled[name], "forward_backward")},
                    function="forward_backward", precision=precision)

    model = _float64(spec)
    loss, _ = model(*_torch_inputs(_batch(spec)))
    loss.backward()
    _assert_close(got["loss"], loss.detach().numpy(), "loss", precision)
    params = dict(model.named_parameters())
    assert sorted(k[len("grad:"):] for k in got if k.startswith("grad:")) == sorted(params)
    for k, p in params.items():
        _assert_close(got["grad:" + k], p.grad.numpy(), "gradient of " + k, precision)
    # Training-mode BatchNorm: the forward also returns the new statistics.
    for k, v in model.state_dict().items():
        if k.endswith(("running_mean", "running_var")):
            _assert_close(got[k], v.numpy(), k, precision)


def f32(x):
    """`x` rounded to float32: the IR holds hyperparameters as f32 literals,
    so the float64 reference uses the same values."""
    return float(np.float32(x))


OPTIMIZERS = {
    # name: (dpc-opt flags, torch.optim factory)
    "momentum": (["--optimizer=momentum", "--momentum=0.9", "--lr=0.05"],
                 lambda p: torch.optim.SGD(p, lr=0.05, momentum=f32(0.9))),
    "nesterov": (["--optimizer=momentum", "--momentum=0.9", "--nesterov", "--lr=0.05",
                  "--weight-decay=0.01"],
                 lambda p: torch.optim.SGD(p, lr=0.05, momentum=f32(0.9), nesterov=True,
                                           weight_decay=f32(0.01))),
    # Adam's update of an element whose gradient is below epsilon is
    # gradient * lr / epsilon: it multiplies the 1e-10 the reference's exact
    # graph constants move a gradient by lr / epsilon. epsilon 1e-6 (as
    # fairseq and many LLM recipes use) keeps that below the tolerance.
    "adamw": (["--optimizer=adamw", "--lr=0.01", "--weight-decay=0.1", "--beta2=0.99",
               "--epsilon=1e-6"],
              lambda p: torch.optim.AdamW(p, lr=0.01, betas=(f32(0.9), f32(0.99)),
                                          eps=f32(1e-6), weight_decay=f32(0.1))),
    "adam": (["--optimizer=adam", "--lr=0.01"],
             lambda p: torch.optim.Adam(p, lr=0.01, betas=(f32(0.9), f32(0.999)),
                                        eps=f32(1e-8))),
}


def _run_steps(step_mlir, weights, opt_state, batches, lr):
    """Runs @train_step once per batch, feeding each step's results back."""
    losses = []
    for step, batch in enumerate(batches, start=1):
        out = interpret(step_mlir, {**weights, **opt_state, **batch,
                                    **_random_state(step_mlir, "train_step"),
                                    "lr": np.float64(lr), "step": np.float64(step)},
                        function="train_step", precision="fp64")
        weights = {k: out.get(k, v) for k, v in weights.items()}
        opt_state = {k: out[k] for k in opt_state}
        losses.append(out["loss"])
    return weights, losses


def _torch_steps(model, optimizer, batches):
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        loss, _ = model(*_torch_inputs(batch))
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().numpy())
    return losses


def _batches(spec, count):
    """`count` batches like the model's inputs; the first is its own."""
    batches = [_batch(spec)]
    gen = torch.Generator().manual_seed(7)
    for _ in range(count - 1):
        batch = {}
        for k, v in spec.inputs.items():
            if v.is_floating_point():
                batch[k] = torch.randn(v.shape, generator=gen).numpy()
            else:
                batch[k] = torch.randint(0, int(v.max()) + 1, v.shape, generator=gen).numpy()
        batches.append(batch)
    return batches


def _slots(step_mlir, dtype=np.float64):
    """The optimizer-state arguments of @train_step, as zeros."""
    ir = open(step_mlir).read()
    roles = tools.signature(ir, function="train_step")
    return {k: np.zeros(s, dtype) for k, s in roles["opt_state"].items()}


@pytest.mark.parametrize("name", TRAINED)
@pytest.mark.parametrize("optimizer", ["momentum", "adamw"])
def test_three_steps_equal_pytorch(exported, tmp_path, name, optimizer):
    _three_steps(exported, tmp_path, name, optimizer)


@pytest.mark.parametrize("optimizer", ["nesterov", "adam"])
def test_three_steps_other_optimizers(exported, tmp_path, optimizer):
    _three_steps(exported, tmp_path, "mlp", optimizer)


def _three_steps(exported, tmp_path, name, optimizer):
    flags, make_optimizer = OPTIMIZERS[optimizer]
    step_mlir = _compile(os.path.join(exported[name][0], name + ".onnx"),
                         str(tmp_path / "step.mlir"), *flags)
    spec = models.build(name)
    model = _float64(spec)
    batches = _batches(spec, 3)
    lr = float(next(f for f in flags if f.startswith("--lr=")).split("=")[1])
    weights, losses = _run_steps(step_mlir, _weights(model), _slots(step_mlir), batches, lr)

    expected_losses = _torch_steps(model, make_optimizer(model.parameters()), batches)
    for i, (got, expected) in enumerate(zip(losses, expected_losses)):
        _assert_close(got, expected, "loss of step %d" % (i + 1))
    # Adam moves each element by up to lr whatever its gradient, and by an
    # ill-conditioned m / sqrt(v) where the gradient is near zero; there the
    # error is measured against lr, not against the parameter.
    atol = 1e-4 * lr if optimizer.startswith("adam") else None
    for k, v in _weights(model).items():
        _assert_close(weights[k], v, k + " after 3 steps", atol=atol)


def test_micro_batches_equal_one_large_batch(exported, tmp_path):
    """K=2 micro-batches of 4 make the same step as one batch of 8."""
    onnx_path = os.path.join(exported["mlp"][0], "mlp.onnx")
    step_mlir = _compile(onnx_path, str(tmp_path / "k2.mlir"), "--optimizer=momentum",
                         "--lr=0.1", "--micro-batches=2", "--max-grad-norm=0.5")
    model = _float64(models.build("mlp"))
    gen = torch.Generator().manual_seed(3)
    batch = {"x": torch.randn(8, 16, generator=gen).numpy(),
             "target": torch.randint(0, 10, (8,), generator=gen).numpy()}
    # The step takes its micro-batches along a leading dimension.
    micro = {k: v.reshape(2, 4, *v.shape[1:]) for k, v in batch.items()}
    out = interpret(step_mlir, {**_weights(model), **_slots(step_mlir), **micro,
                                "lr": np.float64(0.1), "step": np.float64(1)},
                    function="train_step", precision="fp64")

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss, _ = model(*_torch_inputs(batch))
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    assert norm > 0.5  # the clipping is exercised
    _assert_close(out["loss"], loss.detach().numpy(), "loss")
    _assert_close(out["grad_norm"], norm.numpy(), "grad_norm")
    for k, v in _weights(model).items():
        _assert_close(out[k], v, k)


def _export_dropout_mlp(path, batch):
    """An MLP with dropout 0.5 between its layers, exported in training mode."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                              torch.nn.Dropout(0.5), torch.nn.Linear(32, 10))
    model = models.WithLoss(net)
    inputs = (torch.randn(batch, 16), torch.randint(0, 10, (batch,)))
    torch.onnx.export(model, inputs, path, input_names=["x", "target"],
                      output_names=["loss", "logits"], opset_version=models.OPSET,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    return model


def test_dropout_masks_follow_the_seed_not_the_micro_batching(tmp_path):
    """A step with dropout is reproducible from its seed, differs between
    seeds, and K=2 micro-batches of 4 drop exactly the elements one batch
    of 8 drops: the mask is keyed by the element's index in the step."""
    small = str(tmp_path / "b4.onnx")
    model = _export_dropout_mlp(small, 4)
    _export_dropout_mlp(str(tmp_path / "b8.onnx"), 8)
    k2 = _compile(small, str(tmp_path / "k2.mlir"), "--micro-batches=2", "--lr=0.1")
    k1 = _compile(str(tmp_path / "b8.onnx"), str(tmp_path / "k1.mlir"), "--lr=0.1")
    gen = torch.Generator().manual_seed(5)
    batch = {"x": torch.randn(8, 16, generator=gen).numpy(),
             "target": torch.randint(0, 10, (8,), generator=gen).numpy()}
    weights = _weights(model)

    def step(mlir, seed):
        micro = tools.micro_batches(open(mlir).read())
        samples = {k: v.reshape(micro, -1, *v.shape[1:]) if micro > 1 else v
                   for k, v in batch.items()}
        return interpret(mlir, {**weights, **samples, "lr": np.float64(0.1),
                                "step": np.float64(1), "seed": np.int64(seed)},
                         function="train_step", precision="fp64")

    one, two = step(k1, 11), step(k2, 11)
    for k in ["loss", "grad_norm", *weights]:
        _assert_close(two[k], one[k], k)
    np.testing.assert_array_equal(step(k1, 11)["loss"], one["loss"])
    assert not np.allclose(step(k1, 12)["loss"], one["loss"])

    # Without dropout (ratio 0 through eval semantics) the loss differs: the
    # masks are really applied.
    with torch.no_grad():
        model.eval()
        plain, _ = model(*[torch.from_numpy(b) for b in batch.values()])
    assert abs(float(plain) - float(one["loss"])) > 1e-3


@pytest.fixture(scope="module")
def mlp_onnx(exported):
    return os.path.join(exported["mlp"][0], "mlp.onnx")


def _mlp_step_inputs(step_mlir, model, **extra):
    spec = models.build("mlp")
    return {**_weights(model), **_slots(step_mlir, np.float32), **_batch(spec),
            "lr": np.float32(0.1), "step": np.float32(1), **extra}


def test_bf16_step_is_close_to_fp32_and_keeps_f32_master_weights(mlp_onnx, tmp_path):
    fp32 = _compile(mlp_onnx, str(tmp_path / "fp32.mlir"), "--optimizer=momentum", "--lr=0.1")
    bf16 = _compile(mlp_onnx, str(tmp_path / "bf16.mlir"), "--optimizer=momentum", "--lr=0.1",
                    "--precision=bf16")
    assert "xbf16>" in open(bf16).read()
    model = models.build("mlp").model
    exact = interpret(fp32, _mlp_step_inputs(fp32, model), function="train_step")
    low = interpret(bf16, _mlp_step_inputs(bf16, model), function="train_step")
    for k, v in exact.items():
        assert low[k].dtype == np.float32, k  # master weights and slots stay f32
    # bf16 keeps 8 significant bits: the step is close to the fp32 one, not
    # equal to it.
    np.testing.assert_allclose(low["loss"], exact["loss"], rtol=2e-2)
    assert low["loss"] != exact["loss"]
    for k in _weights(model):
        update, exact_update = low[k] - _weights(model)[k], exact[k] - _weights(model)[k]
        assert np.linalg.norm(update - exact_update) < 0.05 * np.linalg.norm(exact_update), k


def test_fp16_loss_scaling_skips_overflowing_steps(mlp_onnx, tmp_path):
    step = _compile(mlp_onnx, str(tmp_path / "fp16.mlir"), "--optimizer=momentum", "--lr=0.1",
                    "--precision=fp16", "--loss-scale-growth-interval=2")
    fp32 = _compile(mlp_onnx, str(tmp_path / "fp32.mlir"), "--optimizer=momentum", "--lr=0.1")
    model = models.build("mlp").model
    weights = _weights(model)
    exact = interpret(fp32, _mlp_step_inputs(fp32, model), function="train_step")

    def run(scale, tracker):
        inputs = _mlp_step_inputs(step, model)
        inputs.update({"amp:loss_scale": np.float32(scale),
                       "amp:growth_tracker": np.float32(tracker)})
        return interpret(step, inputs, function="train_step")

    # 2^16 (GradScaler's initial scale) fits fp16: the step applies, close
    # to fp32, and the second good step in a row doubles the scale.
    good = run(2.0**16, 1)
    assert good["skipped"] == 0
    assert good["amp:loss_scale"] == 2.0**17 and good["amp:growth_tracker"] == 0
    np.testing.assert_allclose(good["loss"], exact["loss"], rtol=1e-2)
    for k in weights:
        update, exact_update = good[k] - weights[k], exact[k] - weights[k]
        assert np.linalg.norm(update - exact_update) < 0.02 * np.linalg.norm(exact_update), k
    first = run(2.0**16, 0)
    assert first["amp:loss_scale"] == 2.0**16 and first["amp:growth_tracker"] == 1

    # 2^40 overflows fp16 (max 65504) in the backward pass: nothing moves,
    # the scale halves and the good-step count restarts.
    bad = run(2.0**40, 1)
    assert bad["skipped"] == 1
    assert bad["amp:loss_scale"] == 2.0**39 and bad["amp:growth_tracker"] == 0
    for k, v in weights.items():
        np.testing.assert_array_equal(bad[k], v, err_msg=k)
    for k in _slots(step):
        if not k.startswith("amp:"):
            np.testing.assert_array_equal(bad[k], 0, err_msg=k)
