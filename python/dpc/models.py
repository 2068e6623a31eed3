"""Small deterministic models exported as ONNX training graphs.

Every model ends in its loss and returns (loss, logits), so the exported graph
is what `dpc-opt --train --loss=from-model` consumes. Exports use PyTorch's
training mode (ARCHITECTURE.md section 6): eval-mode export folds BatchNorm
into Conv and deduplicates initializers, which loses the trainable structure.

Usage:
  python3 -m dpc.models NAME OUTDIR [--seed S]

writes
  OUTDIR/NAME.onnx
  OUTDIR/NAME.inputs/<input>.npy   graph inputs (file names: dpc.npy_name)
  OUTDIR/NAME.ref/<output>.npy     PyTorch's outputs for those inputs
  OUTDIR/NAME.json                 parameter count, parameter/input/output names
"""

import argparse
import copy
import json
import math
import os
import sys
import warnings
from typing import Callable, Dict, List, NamedTuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import npy_name

OPSET = 17


class Spec(NamedTuple):
    model: nn.Module
    inputs: Dict[str, torch.Tensor]  # in graph-input order
    outputs: List[str]


class WithLoss(nn.Module):
    """Appends a token-wise cross-entropy so the graph ends in its loss."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, x, target):
        logits = self.net(x)
        # Flattening makes one loss cover both (N, C) and (B, T, V) logits.
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               target.reshape(-1))
        return loss, logits


def _jitter_norms(model: nn.Module) -> None:
    """Moves norm scales/shifts off 1/0.

    With the default init an importer that drops the affine part of a
    BatchNorm or LayerNorm would still match the reference forward.
    """
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
            with torch.no_grad():
                m.weight.add_(0.1 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))


def _loss_outputs() -> List[str]:
    return ["loss", "logits"]


def mlp() -> Spec:
    net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
    inputs = {"x": torch.randn(4, 16), "target": torch.randint(0, 10, (4,))}
    return Spec(WithLoss(net), inputs, _loss_outputs())


def resnet18() -> Spec:
    import torchvision

    net = torchvision.models.resnet18(num_classes=10)
    _jitter_norms(net)
    # 64x64, not 32x32: at 32x32 layer4 is 1x1, so its BatchNorms normalize
    # over 2 values, which is so ill-conditioned that fp32 PyTorch and
    # onnxruntime differ by 1e-2 and both miss the fp64 logits by 4e-3.
    inputs = {"x": torch.randn(2, 3, 64, 64),
              "target": torch.randint(0, 10, (2,))}
    return Spec(WithLoss(net), inputs, _loss_outputs())


def resnet18_silu() -> Spec:
    """resnet18 with SiLU in place of every ReLU: the same convolutions,
    batch norms and pooling, with no kink. Two fp32 programs that sum in
    different orders differ by roundoff; where a ReLU's input lies within
    that roundoff of zero (a few in a million do), the mask, and with it a
    whole gradient row, differs. Backends are compared on this variant."""
    spec = resnet18()
    for module in list(spec.model.modules()):
        for child, value in list(module.named_children()):
            if isinstance(value, nn.ReLU):
                setattr(module, child, nn.SiLU())
    return spec


class TokenEncoder(nn.Module):
    """Embedding + PyTorch's own nn.TransformerEncoder + a token head."""

    def __init__(self, vocab=50, d_model=32, nhead=4, layers=2, ff=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, ff, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers,
                                             enable_nested_tensor=False)
        # nn.TransformerEncoder deep-copies one layer, so all layers start
        # identical; re-initialize them so a mixed-up layer order is visible.
        for m in self.encoder.modules():
            if isinstance(m, nn.MultiheadAttention):
                m._reset_parameters()
            elif isinstance(m, nn.Linear):
                m.reset_parameters()
        _jitter_norms(self.encoder)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def transformer() -> Spec:
    inputs = {"tokens": torch.randint(0, 50, (2, 8)),
              "target": torch.randint(0, 50, (2, 8))}
    return Spec(WithLoss(TokenEncoder()), inputs, _loss_outputs())


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, nhead):
        super().__init__()
        self.nhead = nhead
        # A Python float: computed from traced shapes it would warn and still
        # be frozen into the graph as a constant.
        self.scale = 1.0 / math.sqrt(d_model // nhead)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        heads = lambda t: t.view(B, T, self.nhead, C // self.nhead).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        att = (q @ k.transpose(-2, -1)) * self.scale
        # Built in the graph (not a buffer) so the export carries Trilu/Not/Where.
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, nhead):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, nhead)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """GPT-2-shaped causal decoder with an untied head."""

    def __init__(self, vocab=50, block=8, d_model=32, nhead=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, nhead) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        _jitter_norms(self)

    def forward(self, tokens):
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok(tokens) + self.pos(pos)
        return self.head(self.ln_f(self.blocks(x)))


def gpt() -> Spec:
    inputs = {"tokens": torch.randint(0, 50, (2, 8)),
              "target": torch.randint(0, 50, (2, 8))}
    return Spec(WithLoss(TinyGPT()), inputs, _loss_outputs())


MODELS: Dict[str, Callable[[], Spec]] = {
    "mlp": mlp,
    "resnet18": resnet18,
    "transformer": transformer,
    "gpt": gpt,
}


def _without_dropout(net: nn.Module) -> nn.Module:
    """Sets every dropout's probability to 0: dpc draws its own masks, so a
    model compared step for step with PyTorch must not drop anything."""
    for m in net.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    return net


def mobilenet_v3_small() -> Spec:
    """torchvision's MobileNetV3-Small: HardSwish and HardSigmoid (the
    squeeze-excitation gates), depthwise convolutions."""
    import torchvision

    net = _without_dropout(torchvision.models.mobilenet_v3_small(num_classes=10))
    _jitter_norms(net)
    # 64x64 keeps the last stages' batch norms over more than 2 values (at
    # 32x32 they are 1x1, and the gradients too ill-conditioned to compare).
    inputs = {"x": torch.randn(2, 3, 64, 64), "target": torch.randint(0, 10, (2,))}
    return Spec(WithLoss(net), inputs, _loss_outputs())


def densenet121() -> Spec:
    """torchvision's DenseNet-121: concatenation everywhere, and the average
    pools counting their padding, which PyTorch exports as Pad + AveragePool."""
    import torchvision

    net = torchvision.models.densenet121(num_classes=10)
    _jitter_norms(net)
    inputs = {"x": torch.randn(4, 3, 32, 32), "target": torch.randint(0, 10, (4,))}
    return Spec(WithLoss(net), inputs, _loss_outputs())


def swin() -> Spec:
    """torchvision's Swin Transformer, two stages of a small width: shifted
    windows (Swin's mask is built with ScatterND, its window arithmetic
    with Mod), patch merging, relative position bias (a Gather)."""
    from torchvision.models.swin_transformer import SwinTransformer

    # Stochastic depth draws its own randomness; dpc has no such op.
    net = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2],
                          num_heads=[2, 4], window_size=[2, 2], num_classes=10,
                          stochastic_depth_prob=0.0)
    _jitter_norms(net)
    inputs = {"x": torch.randn(2, 3, 32, 32), "target": torch.randint(0, 10, (2,))}
    return Spec(WithLoss(net), inputs, _loss_outputs())


class RecurrentClassifier(nn.Module):
    """Embedding, a 2-layer bidirectional nn.LSTM or nn.GRU (batch first),
    and a linear head on the last step's features."""

    def __init__(self, cell: str, vocab=20, embed=8, hidden=6, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.rnn = getattr(nn, cell)(embed, hidden, num_layers=2, batch_first=True,
                                     bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens):
        features, _ = self.rnn(self.embed(tokens))
        return self.head(features[:, -1])


def _recurrent(cell: str) -> Spec:
    inputs = {"tokens": torch.randint(0, 20, (4, 7)),
              "target": torch.randint(0, 5, (4,))}
    return Spec(WithLoss(RecurrentClassifier(cell)), inputs, _loss_outputs())


def lstm() -> Spec:
    """nn.LSTM: ONNX LSTM nodes, one per layer, both directions each."""
    return _recurrent("LSTM")


def gru() -> Spec:
    """nn.GRU: ONNX GRU nodes (linear_before_reset, PyTorch's form)."""
    return _recurrent("GRU")


def _elman(x: torch.Tensor, w_ih: torch.Tensor, b_ih: torch.Tensor,
           w_hh: torch.Tensor, b_hh: torch.Tensor) -> torch.Tensor:
    """An Elman RNN's last hidden state, as a loop over the time steps."""
    h = torch.zeros(x.size(0), w_hh.size(0), dtype=x.dtype)
    for t in range(x.size(1)):
        h = torch.tanh(torch.matmul(x[:, t], w_ih.t()) + b_ih +
                       torch.matmul(h, w_hh.t()) + b_hh)
    return h


_scripted: Dict[str, Callable] = {}


def _script(function: Callable) -> Callable:
    """`function` compiled by TorchScript once (a module holding it could
    not be copied)."""
    if function.__name__ not in _scripted:
        _scripted[function.__name__] = torch.jit.script(function)
    return _scripted[function.__name__]


class LoopClassifier(nn.Module):
    """Embedding, an Elman RNN written as a TorchScript loop (exported as an
    ONNX Loop over the time steps) on nn.RNNCell's weights, a linear head."""

    def __init__(self, vocab=20, embed=8, hidden=6, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.cell = nn.RNNCell(embed, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        cell = self.cell
        return self.head(_script(_elman)(self.embed(tokens), cell.weight_ih, cell.bias_ih,
                                         cell.weight_hh, cell.bias_hh))


def loop_rnn() -> Spec:
    """A scripted loop: an ONNX Loop with a body, trip count known."""
    inputs = {"tokens": torch.randint(0, 20, (4, 7)),
              "target": torch.randint(0, 5, (4,))}
    return Spec(WithLoss(LoopClassifier()), inputs, _loss_outputs())


class FourierFeatures(nn.Module):
    """Learned Fourier features of coordinates and a sine-activated hidden
    layer (SIREN, Sitzmann et al. 2020), a linear head. The phases are
    wrapped to a period before the sine and cosine, as float32 code does
    for large arguments: torch.remainder (exported as Div, Floor, Mul and
    Sub) and torch.fmod (ONNX Mod with fmod=1)."""

    def __init__(self, coords=2, freqs=8, hidden=16, classes=5, omega=3.0):
        super().__init__()
        self.freq = nn.Linear(coords, freqs, bias=False)
        self.hidden = nn.Linear(2 * freqs, hidden)
        self.head = nn.Linear(hidden, classes)
        self.omega = omega

    def forward(self, x):
        angles = self.freq(x)
        period = 2 * math.pi
        features = torch.cat([torch.sin(torch.remainder(angles, period)),
                              torch.cos(torch.fmod(angles, period))], dim=-1)
        return self.head(torch.sin(self.omega * self.hidden(features)))


def fourier_features() -> Spec:
    """Sin, Cos, Floor and Mod, with parameters before them."""
    # Coordinates large enough that the phases wrap.
    inputs = {"x": 4 * torch.randn(8, 2), "target": torch.randint(0, 5, (8,))}
    return Spec(WithLoss(FourierFeatures()), inputs, _loss_outputs())


# Real models that check the importer's breadth (op types the four bundled
# models do not use). Larger: the tests that run every bundled model leave
# them out; test_importer_models.py checks them.
IMPORTER_MODELS: Dict[str, Callable[[], Spec]] = {
    "mobilenet_v3_small": mobilenet_v3_small,
    "densenet121": densenet121,
    "swin": swin,
    "lstm": lstm,
    "gru": gru,
    "loop_rnn": loop_rnn,
    "fourier_features": fourier_features,
}


# Variants of the bundled models for comparisons the original makes
# ill-conditioned (test_cuda_backend.py).
VARIANTS: Dict[str, Callable[[], Spec]] = {"resnet18_silu": resnet18_silu}


def build(name: str, seed: int = 0) -> Spec:
    """Builds model `name` with weights and inputs fixed by `seed`."""
    torch.manual_seed(seed)
    return {**MODELS, **IMPORTER_MODELS, **VARIANTS}[name]()


def reference(spec: Spec) -> Dict[str, np.ndarray]:
    """Runs the model in training mode, as the exported graph does.

    Runs on a copy: a training-mode forward updates BatchNorm running stats,
    and the caller's model must keep the state that was exported.
    """
    model = copy.deepcopy(spec.model).train()
    with torch.no_grad():
        outs = model(*spec.inputs.values())
    return {n: t.numpy() for n, t in zip(spec.outputs, outs)}


def _restore_state(onnx_path: str, model: nn.Module) -> None:
    """Rewrites initializers that tracing changed back to the model's state.

    A training-mode export traces one forward, which updates BatchNorm running
    stats, and torch 1.13 then saves the updated buffers; the graph must hold
    the state before the step it describes.
    """
    import onnx
    from onnx import numpy_helper

    state = {k: v.numpy() for k, v in model.state_dict().items()}
    m = onnx.load(onnx_path)
    changed = False
    for init in m.graph.initializer:
        if init.name in state and not np.array_equal(
                numpy_helper.to_array(init), state[init.name]):
            init.CopyFrom(numpy_helper.from_array(state[init.name], init.name))
            changed = True
    if changed:
        onnx.save(m, onnx_path)


def _describe(name: str, array: np.ndarray) -> dict:
    return {"name": name, "shape": list(array.shape), "dtype": str(array.dtype)}


def export(name: str, outdir: str, seed: int = 0) -> dict:
    """Writes NAME.onnx, its inputs, PyTorch's outputs and NAME.json to outdir."""
    return export_spec(name, build(name, seed), outdir, seed)


def export_spec(name: str, spec: Spec, outdir: str, seed: int = 0) -> dict:
    """Like export, for a model built elsewhere (benchmarks' larger ones)."""
    os.makedirs(outdir, exist_ok=True)
    onnx_path = os.path.join(outdir, name + ".onnx")
    ref = reference(spec)
    with warnings.catch_warnings():
        # The exporter drops BatchNorm's num_batches_tracked += 1 and says so
        # once per layer; the graph never needed it (momentum is fixed).
        warnings.filterwarnings("ignore", message="ONNX Preprocess - Removing mutation")
        # Export a copy too: tracing runs a training-mode forward on the model.
        torch.onnx.export(copy.deepcopy(spec.model), tuple(spec.inputs.values()),
                          onnx_path, input_names=list(spec.inputs),
                          output_names=spec.outputs, opset_version=OPSET,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)

    _restore_state(onnx_path, spec.model)

    inputs = {n: t.numpy() for n, t in spec.inputs.items()}
    for sub, arrays in (("inputs", inputs), ("ref", ref)):
        d = os.path.join(outdir, "%s.%s" % (name, sub))
        os.makedirs(d, exist_ok=True)
        for n, a in arrays.items():
            # C order always: readers (ort_reference.js) reject fortran_order.
            np.save(os.path.join(d, npy_name(n)), np.asarray(a, order="C"))

    meta = {
        "name": name,
        "seed": seed,
        "opset": OPSET,
        "torch": torch.__version__,
        "param_count": sum(p.numel() for p in spec.model.parameters()),
        # Trainable parameters, named as the graph's initializers. Buffers
        # (BatchNorm running stats) are initializers too but are not here.
        "params": [n for n, _ in spec.model.named_parameters()],
        "inputs": [_describe(n, a) for n, a in inputs.items()],
        "outputs": [_describe(n, a) for n, a in ref.items()],
    }
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", choices=sorted(MODELS) + sorted(IMPORTER_MODELS) + ["all"],
                   help="a model; 'all' is the four bundled ones (not IMPORTER_MODELS)")
    p.add_argument("outdir")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for name in sorted(MODELS) if args.name == "all" else [args.name]:
        meta = export(name, args.outdir, args.seed)
        print("%s: %d params -> %s" % (name, meta["param_count"],
                                      os.path.join(args.outdir, name + ".onnx")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
