"""GPT-style ONNX training graphs of any size, without weights.

The planner needs models the size of Megatron-LM's (up to hundreds of
billions of parameters) but never their values, so every weight is a graph
INPUT with a shape and no data, and the model says which inputs are
parameters in its metadata: `metadata_props["dpc.parameters"]` is the JSON
list of their names (`dpc.config` holds the configuration). A 177B model is
a few hundred KB and is written in well under a second.

The graph (opset 17) is a pre-LayerNorm GPT-2/Megatron-LM decoder:
token embedding (Gather) + learned positions, L blocks of causal multi-head
attention (MatMul for each of Q, K and V, Reshape, Transpose, Div, a Trilu/Where causal
mask, Softmax) and a 4h MLP with GeLU (the Erf form, or the tanh
approximation built from Mul/Add/Tanh), a final LayerNormalization, logits
through the transposed token embedding (tied, as in Megatron-LM), and
SoftmaxCrossEntropyLoss (mean) against `labels`. Inputs: `input_ids` and
`labels` (int64, [batch, sequence]), then the parameters; outputs: `loss`
and `logits`.

Parameters: 12 L h^2 + 13 L h + (V + s) h + 2 h (Megatron-LM's count plus
the final LayerNorm).

  python3 -m dpc.gpt_onnx OUT.onnx --preset 177b
  python3 -m dpc.gpt_onnx OUT.onnx --layers 2 --hidden 64 --heads 4 \\
      --sequence 16 --vocab 100 --batch 2 [--dtype f32|bf16|f16] [--gelu erf|tanh]
"""

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from typing import List

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 17

_DTYPES = {"f32": TensorProto.FLOAT, "bf16": TensorProto.BFLOAT16,
           "f16": TensorProto.FLOAT16}


@dataclass
class GptConfig:
    layers: int
    hidden: int
    heads: int
    sequence: int
    vocab: int
    batch: int = 1
    dtype: str = "f32"
    gelu: str = "erf"
    epsilon: float = 1e-5

    def check(self) -> None:
        for field in ("layers", "hidden", "heads", "sequence", "vocab", "batch"):
            if getattr(self, field) < 1:
                raise ValueError("%s must be positive, got %d" % (field, getattr(self, field)))
        if self.hidden % self.heads:
            raise ValueError("hidden (%d) must be a multiple of heads (%d)"
                             % (self.hidden, self.heads))
        if self.dtype not in _DTYPES:
            raise ValueError("dtype must be one of %s, got %r" % (sorted(_DTYPES), self.dtype))
        if self.gelu not in ("erf", "tanh"):
            raise ValueError("gelu must be 'erf' or 'tanh', got %r" % self.gelu)


# The models of Megatron-LM's H100 table (REFERENCE.md): (heads, hidden,
# layers); vocabulary 131072, sequence 4096.
MEGATRON_H100 = {
    "1.7b": (16, 2048, 24), "7.1b": (32, 4096, 30), "16b": (48, 6144, 32),
    "32b": (56, 7168, 48), "70b": (64, 8192, 84), "119b": (80, 10240, 92),
    "177b": (96, 12288, 96), "314b": (128, 16384, 96), "462b": (144, 18432, 112),
}


def megatron_config(name: str, batch: int = 1, **kwargs) -> GptConfig:
    heads, hidden, layers = MEGATRON_H100[name]
    return GptConfig(layers=layers, hidden=hidden, heads=heads, sequence=4096,
                     vocab=131072, batch=batch, **kwargs)


def parameter_count(config: GptConfig) -> int:
    """12 L h^2 + 13 L h + (V + s) h + 2 h."""
    L, h = config.layers, config.hidden
    return 12 * L * h * h + 13 * L * h + (config.vocab + config.sequence) * h + 2 * h


def layer_parameter_shapes(config: GptConfig, i: int) -> List[tuple]:
    """(name, shape) of block i's parameters, in graph-input order."""
    h, p = config.hidden, "layers.%d." % i
    return [(p + "ln1.scale", [h]), (p + "ln1.bias", [h]),
            (p + "attn.q.weight", [h, h]), (p + "attn.q.bias", [h]),
            (p + "attn.k.weight", [h, h]), (p + "attn.k.bias", [h]),
            (p + "attn.v.weight", [h, h]), (p + "attn.v.bias", [h]),
            (p + "attn.proj.weight", [h, h]), (p + "attn.proj.bias", [h]),
            (p + "ln2.scale", [h]), (p + "ln2.bias", [h]),
            (p + "mlp.fc.weight", [h, 4 * h]), (p + "mlp.fc.bias", [4 * h]),
            (p + "mlp.proj.weight", [4 * h, h]), (p + "mlp.proj.bias", [h])]


def parameter_shapes(config: GptConfig) -> List[tuple]:
    """(name, shape) of every parameter, in graph-input order."""
    h = config.hidden
    shapes = [("embed.tokens", [config.vocab, h]),
              ("embed.positions", [config.sequence, h])]
    for i in range(config.layers):
        shapes += layer_parameter_shapes(config, i)
    return shapes + [("final_ln.scale", [h]), ("final_ln.bias", [h])]


class _Builder:
    """Accumulates the graph's nodes."""

    def __init__(self, dtype: int):
        self.dtype = dtype
        self.nodes: List[onnx.NodeProto] = []
        self.count = 0

    def op(self, op_type: str, inputs, prefix: str, outputs: int = 1, **attrs):
        """Appends a node; returns its output name(s). `prefix` (the block)
        goes into the node name, kept short: a 177B graph has ~5000 nodes."""
        self.count += 1
        names = ["t%d" % self.count if outputs == 1 else "t%d.%d" % (self.count, k)
                 for k in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names,
                                           name="%s.%s%d" % (prefix, op_type, self.count),
                                           **attrs))
        return names[0] if outputs == 1 else names

    def ints(self, name: str, values) -> str:
        """An int64 vector constant. Constants are Constant nodes, not
        initializers, so that no importer takes them for weights."""
        self._constant(name, helper.make_tensor(name, TensorProto.INT64,
                                                [len(values)], list(values)))
        return name

    def scalar(self, name: str, value: float) -> str:
        """A scalar constant of the model's float type."""
        if self.dtype == TensorProto.BFLOAT16:
            bits = int(np.array([value], np.float32).view(np.uint32)[0]) >> 16
            tensor = helper.make_tensor(name, self.dtype, [], [bits])
        else:
            tensor = helper.make_tensor(name, self.dtype, [], [value])
        self._constant(name, tensor)
        return name

    def _constant(self, name: str, tensor: onnx.TensorProto) -> None:
        self.nodes.append(helper.make_node("Constant", [], [name], name=name,
                                           value=tensor))


def _gelu(b: _Builder, x: str, kind: str, prefix: str) -> str:
    if kind == "erf":
        # 0.5 x (1 + erf(x / sqrt 2))
        e = b.op("Erf", [b.op("Div", [x, "c.sqrt2"], prefix)], prefix)
        return b.op("Mul", [b.op("Mul", [x, b.op("Add", [e, "c.one"], prefix)], prefix),
                            "c.half"], prefix)
    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    cube = b.op("Mul", [b.op("Mul", [x, x], prefix), x], prefix)
    inner = b.op("Add", [x, b.op("Mul", [cube, "c.gelu_k"], prefix)], prefix)
    t = b.op("Tanh", [b.op("Mul", [inner, "c.gelu_c"], prefix)], prefix)
    return b.op("Mul", [b.op("Mul", [x, b.op("Add", [t, "c.one"], prefix)], prefix),
                        "c.half"], prefix)


def _block(b: _Builder, config: GptConfig, x: str, mask: str, i: int) -> str:
    p = "layers.%d" % i
    w = p + "."
    eps = config.epsilon
    ln1 = b.op("LayerNormalization", [x, w + "ln1.scale", w + "ln1.bias"], p,
               axis=-1, epsilon=eps)
    # Separate projections (as GPT-NeoX and LLaMA export them), so that each
    # splits by heads without re-laying out a fused [h, 3h] weight.
    q, k, v = (b.op("Add", [b.op("MatMul", [ln1, w + "attn.%s.weight" % n], p),
                            w + "attn.%s.bias" % n], p) for n in "qkv")
    heads = [b.op("Reshape", [t, "c.heads_shape"], p) for t in (q, k, v)]
    q = b.op("Transpose", [heads[0]], p, perm=[0, 2, 1, 3])  # [B, a, s, d]
    kt = b.op("Transpose", [heads[1]], p, perm=[0, 2, 3, 1])  # [B, a, d, s]
    v = b.op("Transpose", [heads[2]], p, perm=[0, 2, 1, 3])
    scores = b.op("Div", [b.op("MatMul", [q, kt], p), "c.sqrt_d"], p)
    scores = b.op("Where", [mask, scores, "c.masked"], p)
    probs = b.op("Softmax", [scores], p, axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, v], p)], p, perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, "c.hidden_shape"], p)
    attn = b.op("Add", [b.op("MatMul", [ctx, w + "attn.proj.weight"], p),
                        w + "attn.proj.bias"], p)
    x = b.op("Add", [x, attn], p)
    ln2 = b.op("LayerNormalization", [x, w + "ln2.scale", w + "ln2.bias"], p,
               axis=-1, epsilon=eps)
    fc = b.op("Add", [b.op("MatMul", [ln2, w + "mlp.fc.weight"], p),
                      w + "mlp.fc.bias"], p)
    mlp = b.op("Add", [b.op("MatMul", [_gelu(b, fc, config.gelu, p),
                                        w + "mlp.proj.weight"], p),
                       w + "mlp.proj.bias"], p)
    return b.op("Add", [x, mlp], p)


def build(config: GptConfig) -> onnx.ModelProto:
    """The GPT training graph of `config`, weights as shape-only inputs."""
    config.check()
    B, s, h, a, V = config.batch, config.sequence, config.hidden, config.heads, config.vocab
    b = _Builder(_DTYPES[config.dtype])
    d = h // a
    b.ints("c.heads_shape", [B, s, a, d])
    b.ints("c.hidden_shape", [B, s, h])
    b.ints("c.mask_shape", [s, s])
    b.ints("c.tokens_shape", [B * s, V])
    b.ints("c.labels_shape", [B * s])
    b.scalar("c.sqrt_d", math.sqrt(d))
    b.scalar("c.sqrt2", math.sqrt(2.0))
    b.scalar("c.one", 1.0)
    b.scalar("c.half", 0.5)
    b.scalar("c.gelu_k", 0.044715)
    b.scalar("c.gelu_c", math.sqrt(2.0 / math.pi))
    # Large and negative but finite in every float type (f16 max is 65504).
    b.scalar("c.masked", -65504.0 if config.dtype == "f16" else -1e9)

    # Causal mask, computed in the graph so that it costs no file space.
    ones = b.op("ConstantOfShape", ["c.mask_shape"], "mask",
                value=helper.make_tensor("one", TensorProto.INT64, [1], [1]))
    mask = b.op("Cast", [b.op("Trilu", [ones], "mask", upper=0)], "mask",
                to=TensorProto.BOOL)

    x = b.op("Add", [b.op("Gather", ["embed.tokens", "input_ids"], "embed", axis=0),
                     "embed.positions"], "embed")
    for i in range(config.layers):
        x = _block(b, config, x, mask, i)
    x = b.op("LayerNormalization", [x, "final_ln.scale", "final_ln.bias"], "head",
             axis=-1, epsilon=config.epsilon)
    head = b.op("Transpose", ["embed.tokens"], "head", perm=[1, 0])
    b.nodes.append(helper.make_node("MatMul", [x, head], ["logits"], name="logits"))
    flat = b.op("Reshape", ["logits", "c.tokens_shape"], "loss")
    labels = b.op("Reshape", ["labels", "c.labels_shape"], "loss")
    b.nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", [flat, labels], ["loss"],
                                    name="loss", reduction="mean"))

    params = parameter_shapes(config)
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [B, s]),
              helper.make_tensor_value_info("labels", TensorProto.INT64, [B, s])]
    inputs += [helper.make_tensor_value_info(n, b.dtype, shape) for n, shape in params]
    outputs = [helper.make_tensor_value_info("loss", b.dtype, []),
               helper.make_tensor_value_info("logits", b.dtype, [B, s, V])]
    graph = helper.make_graph(b.nodes, "gpt", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="dpc.gpt_onnx")
    helper.set_model_props(model, {
        "dpc.parameters": json.dumps([n for n, _ in params]),
        "dpc.config": json.dumps(asdict(config)),
    })
    return model


def write(config: GptConfig, path: str) -> onnx.ModelProto:
    model = build(config)
    onnx.save(model, path)
    return model


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("output")
    p.add_argument("--preset", choices=sorted(MEGATRON_H100),
                   help="a model of Megatron-LM's H100 table (s=4096, V=131072)")
    for name in ("layers", "hidden", "heads", "sequence", "vocab"):
        p.add_argument("--" + name, type=int)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--dtype", choices=sorted(_DTYPES), default="f32")
    p.add_argument("--gelu", choices=["erf", "tanh"], default="erf")
    args = p.parse_args(argv)
    try:
        if args.preset:
            config = megatron_config(args.preset, batch=args.batch, dtype=args.dtype,
                                     gelu=args.gelu)
        else:
            missing = [n for n in ("layers", "hidden", "heads", "sequence", "vocab")
                       if getattr(args, n) is None]
            if missing:
                p.error("give --preset or all of --%s" % ", --".join(missing))
            config = GptConfig(args.layers, args.hidden, args.heads, args.sequence,
                               args.vocab, args.batch, args.dtype, args.gelu)
        write(config, args.output)
    except ValueError as e:
        print("gpt_onnx: %s" % e, file=sys.stderr)
        return 1
    print("%s: %d parameters" % (args.output, parameter_count(config)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
