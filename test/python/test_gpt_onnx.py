"""dpc.gpt_onnx: valid graphs, exact parameter counts, and the same numbers
as a PyTorch implementation of the same GPT when run by onnxruntime."""

import json
import math
import os
import re
import subprocess
import time

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F

from dpc import gpt_onnx, ort

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DPC_OPT = os.path.join(os.environ.get("DPC_BUILD_DIR", os.path.join(ROOT, "build")),
                       "bin", "dpc-opt")

TINY = dict(layers=2, hidden=32, heads=4, sequence=8, vocab=50, batch=2)


def _parameters(model):
    props = {p.key: p.value for p in model.metadata_props}
    return json.loads(props["dpc.parameters"])


def _input_shapes(model):
    return {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in model.graph.input}


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("gelu", ["erf", "tanh"])
def test_checker_accepts(dtype, gelu):
    model = gpt_onnx.build(gpt_onnx.GptConfig(dtype=dtype, gelu=gelu, **TINY))
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == 17
    # Weights are inputs with shapes, never initializers with data; the
    # constants are small Constant nodes.
    assert not model.graph.initializer
    params = set(_parameters(model))
    assert params <= {i.name for i in model.graph.input}
    for node in model.graph.node:
        if node.op_type == "Constant":
            assert len(node.attribute[0].t.dims) <= 1


@pytest.mark.parametrize("config", [
    TINY,
    dict(layers=3, hidden=48, heads=6, sequence=16, vocab=97, batch=1),
    dict(layers=1, hidden=8, heads=1, sequence=4, vocab=5, batch=3),
])
def test_parameter_count_is_the_formula(config):
    cfg = gpt_onnx.GptConfig(**config)
    model = gpt_onnx.build(cfg)
    shapes = _input_shapes(model)
    count = sum(int(np.prod(shapes[n])) for n in _parameters(model))
    L, h, V, s = cfg.layers, cfg.hidden, cfg.vocab, cfg.sequence
    assert count == 12 * L * h * h + 13 * L * h + (V + s) * h + 2 * h
    assert count == gpt_onnx.parameter_count(cfg)
    # Every graph input but the batch is a parameter.
    assert [i.name for i in model.graph.input] == ["input_ids", "labels"] + _parameters(model)


def test_177b_is_small_and_quick(tmp_path):
    cfg = gpt_onnx.megatron_config("177b", dtype="bf16")
    path = str(tmp_path / "gpt177b.onnx")
    start = time.time()
    gpt_onnx.write(cfg, path)
    assert time.time() - start < 5
    assert os.path.getsize(path) < 1 << 20
    model = onnx.load(path)
    onnx.checker.check_model(model)
    shapes = _input_shapes(model)
    count = sum(int(np.prod(shapes[n])) for n in _parameters(model))
    # Megatron-LM's 12 L h^2 (1 + 13 / (12 h) + (V + s) / (12 L h)), plus the
    # final LayerNorm's 2h.
    L, h, V, s = 96, 12288, 131072, 4096
    megatron = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h))
    assert count == 12 * L * h * h + 13 * L * h + (V + s) * h + 2 * h
    assert count - 2 * h == pytest.approx(megatron, rel=1e-12)
    assert 175e9 < count < 177e9


def test_bad_config_is_a_clear_error():
    with pytest.raises(ValueError, match="multiple of heads"):
        gpt_onnx.build(gpt_onnx.GptConfig(layers=1, hidden=10, heads=3, sequence=4, vocab=5))
    assert gpt_onnx.main(["/dev/null", "--layers", "1", "--hidden", "10", "--heads", "3",
                          "--sequence", "4", "--vocab", "5"]) == 1


def _torch_gpt(cfg, w, ids, labels):
    """The same GPT in PyTorch, weights by name."""
    B, s, h, a = cfg.batch, cfg.sequence, cfg.hidden, cfg.heads
    d = h // a
    x = w["embed.tokens"][ids] + w["embed.positions"]
    causal = torch.tril(torch.ones(s, s, dtype=torch.bool))
    for i in range(cfg.layers):
        p = lambda n: w["layers.%d.%s" % (i, n)]  # noqa: E731
        y = F.layer_norm(x, (h,), p("ln1.scale"), p("ln1.bias"), cfg.epsilon)
        q, k, v = (y @ p("attn.%s.weight" % n) + p("attn.%s.bias" % n) for n in "qkv")
        q, k, v = (t.reshape(B, s, a, d).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        scores = scores.masked_fill(~causal, -1e9)
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, s, h)
        x = x + ctx @ p("attn.proj.weight") + p("attn.proj.bias")
        y = F.layer_norm(x, (h,), p("ln2.scale"), p("ln2.bias"), cfg.epsilon)
        y = y @ p("mlp.fc.weight") + p("mlp.fc.bias")
        y = F.gelu(y, approximate="tanh" if cfg.gelu == "tanh" else "none")
        x = x + y @ p("mlp.proj.weight") + p("mlp.proj.bias")
    x = F.layer_norm(x, (h,), w["final_ln.scale"], w["final_ln.bias"], cfg.epsilon)
    logits = x @ w["embed.tokens"].t()
    loss = F.cross_entropy(logits.reshape(-1, cfg.vocab), labels.reshape(-1))
    return loss, logits


@pytest.mark.parametrize("gelu", ["erf", "tanh"])
def test_matches_torch_in_onnxruntime(ort_modules, tmp_path, gelu):
    cfg = gpt_onnx.GptConfig(gelu=gelu, **TINY)
    path = str(tmp_path / "gpt.onnx")
    model = gpt_onnx.write(cfg, path)
    rng = np.random.default_rng(0)
    shapes = _input_shapes(model)
    inputs = {
        "input_ids": rng.integers(0, cfg.vocab, (cfg.batch, cfg.sequence)),
        "labels": rng.integers(0, cfg.vocab, (cfg.batch, cfg.sequence)),
    }
    for name in _parameters(model):
        scale = 1.0 if name.endswith("scale") else 0.2
        base = 1.0 if name.endswith("scale") else 0.0
        inputs[name] = (base + scale * rng.standard_normal(shapes[name])).astype(np.float32)
    got = ort.run(path, inputs, modules=ort_modules)
    with torch.no_grad():
        loss, logits = _torch_gpt(cfg, {n: torch.from_numpy(v) for n, v in inputs.items()},
                                  torch.from_numpy(inputs["input_ids"]),
                                  torch.from_numpy(inputs["labels"]))
    np.testing.assert_allclose(got["logits"], logits.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["loss"], loss.numpy(), rtol=1e-4, atol=1e-5)


def test_imported_matmul_flops_are_megatrons_count(tmp_path):
    """The cost model's op-level count of the imported graph is the forward
    count bench/megatron_h100.cpp uses: 24 B s L h^2 + 4 B s^2 L h + 2 B s h V."""
    if not os.path.exists(DPC_OPT):
        pytest.skip("dpc-opt is not built at %s" % DPC_OPT)
    cfg = gpt_onnx.GptConfig(layers=2, hidden=256, heads=4, sequence=128, vocab=1000,
                             batch=2)
    path = str(tmp_path / "gpt.onnx")
    gpt_onnx.write(cfg, path)
    r = subprocess.run([DPC_OPT, path, "-test-dpc-cost-model=mesh=2x8"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    flops = [int(m) for m in re.findall(r"dpc\.matmul [^\n]*dpc\.flops = (\d+)", r.stdout)]
    B, s, L, h, V = cfg.batch, cfg.sequence, cfg.layers, cfg.hidden, cfg.vocab
    assert len(flops) == 8 * L + 1  # Q, K, V, QK^T, AV, out, fc, proj; logits
    assert sum(flops) == 24 * B * s * L * h * h + 4 * B * s * s * L * h + 2 * B * s * h * V


def test_importer_reads_parameters_from_metadata(tmp_path):
    """dpc-opt turns the inputs listed in dpc.parameters into parameters, so
    the imported step of a weightless 177B graph has 175B+ parameters."""
    from dpc import tools

    cfg = gpt_onnx.megatron_config("177b", dtype="bf16")
    path = str(tmp_path / "gpt177b.onnx")
    gpt_onnx.write(cfg, path)
    roles = tools.signature(tools.run("dpc-opt", [path]).stdout)
    assert sorted(roles["param"]) == sorted(_parameters(onnx.load(path)))
    assert sorted(roles["input"]) == ["input_ids", "labels"]
    assert sum(tools.numel(s) for s in roles["param"].values()) == \
        gpt_onnx.parameter_count(cfg)
