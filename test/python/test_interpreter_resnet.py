"""torchvision's resnet18 forward, in training mode, under the interpreter.

The test writes resnet18 as dpc IR by walking the torch module (conv2d,
training batch_norm with its running statistics as state, relu,
max_pool2d, residual adds, global average pooling, the classifier), runs
it at batch 2 on 3x64x64 images, and compares the logits and the updated
running statistics with PyTorch. It is also the interpreter's speed check:
a forward must take seconds, not minutes.
"""

import time

import numpy as np
import pytest
import torch
import torchvision

from dpc.interpreter import interpret

BATCH, SIZE = 2, 64


def ty(shape):
    return "tensor<" + "".join("%dx" % d for d in shape) + "f32>"


class Emitter:
    """Writes one function op by op, tracking the shape of every value."""

    def __init__(self):
        self.arguments, self.lines, self.inputs = [], [], {}
        self.results, self.shapes, self.count = [], {}, 0

    def argument(self, name, array, role):
        value = "%%a%d" % len(self.arguments)
        self.arguments.append('%s: %s {dpc.%s = "%s"}' % (value, ty(array.shape), role, name))
        self.inputs[name] = np.ascontiguousarray(array, np.float32)
        self.shapes[value] = list(array.shape)
        return value

    def op(self, text, shape, results=1):
        value = "%%v%d" % self.count
        self.count += 1
        self.lines.append("  %s%s = %s" % (value, ":%d" % results if results > 1 else "", text))
        self.shapes[value] = shape
        return value

    def conv(self, x, conv, name):
        w = self.argument(name + ".weight", conv.weight.detach().numpy(), "param")
        n, _, h, wd = self.shapes[x]
        (kh, kw), (sh, sw), (ph, pw) = conv.kernel_size, conv.stride, conv.padding
        shape = [n, conv.out_channels, (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1]
        return self.op("dpc.conv2d %s, %s {strides = array<i64: %d, %d>, padding = array<i64: "
                       "%d, %d, %d, %d>, dilations = array<i64: 1, 1>, groups = 1 : i64} : "
                       "(%s, %s) -> %s" % (x, w, sh, sw, ph, pw, ph, pw, ty(self.shapes[x]),
                                           ty(self.shapes[w]), ty(shape)), shape)

    def batch_norm(self, x, bn, name):
        params = [self.argument(name + "." + p, getattr(bn, p).detach().numpy(), role)
                  for p, role in (("weight", "param"), ("bias", "param"),
                                  ("running_mean", "state"), ("running_var", "state"))]
        c = self.shapes[x][1]
        # ONNX's momentum weighs the running statistic; PyTorch's the batch's.
        value = self.op("dpc.batch_norm %s, %s {epsilon = %.9e : f32, momentum = %.9e : f32, "
                        "training} : %s, %s" % (x, ", ".join(params), bn.eps, 1 - bn.momentum,
                                                ty(self.shapes[x]), ty([c])),
                        self.shapes[x], results=5)
        self.shapes[value + "#0"] = self.shapes[x]
        self.results.append((value + "#1", ty([c]), name + ".running_mean"))
        self.results.append((value + "#2", ty([c]), name + ".running_var"))
        return value + "#0"

    def unary(self, op, x):
        return self.op("dpc.%s %s : %s" % (op, x, ty(self.shapes[x])), self.shapes[x])

    def add(self, x, y):
        return self.op("dpc.add %s, %s : (%s, %s) -> %s" % (x, y, ty(self.shapes[x]),
                                                            ty(self.shapes[y]),
                                                            ty(self.shapes[x])),
                       self.shapes[x])

    def max_pool(self, x):
        n, c, h, w = self.shapes[x]
        shape = [n, c, (h + 2 - 3) // 2 + 1, (w + 2 - 3) // 2 + 1]
        return self.op("dpc.max_pool2d %s {kernel_shape = array<i64: 3, 3>, strides = "
                       "array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = "
                       "array<i64: 1, 1>} : %s -> %s" % (x, ty(self.shapes[x]), ty(shape)),
                       shape)

    def block(self, x, block, name):
        y = self.unary("relu", self.batch_norm(self.conv(x, block.conv1, name + ".conv1"),
                                               block.bn1, name + ".bn1"))
        y = self.batch_norm(self.conv(y, block.conv2, name + ".conv2"), block.bn2, name + ".bn2")
        if block.downsample is not None:
            x = self.batch_norm(self.conv(x, block.downsample[0], name + ".downsample.0"),
                                block.downsample[1], name + ".downsample.1")
        return self.unary("relu", self.add(y, x))

    def text(self, outputs):
        results = outputs + self.results
        return "func.func @forward(%s) -> (%s) {\n%s\n  return %s : %s\n}\n" % (
            ", ".join(self.arguments),
            ", ".join('%s {dpc.%s = "%s"}' % (t, "output" if i < len(outputs) else "state", n)
                      for i, (_, t, n) in enumerate(results)),
            "\n".join(self.lines), ", ".join(v for v, _, _ in results),
            ", ".join(t for _, t, _ in results))


def resnet18_ir(model, x):
    e = Emitter()
    v = e.argument("input", x, "input")
    v = e.max_pool(e.unary("relu", e.batch_norm(e.conv(v, model.conv1, "conv1"), model.bn1,
                                                "bn1")))
    for layer in ("layer1", "layer2", "layer3", "layer4"):
        for i, block in enumerate(getattr(model, layer)):
            v = e.block(v, block, "%s.%d" % (layer, i))
    n, c = e.shapes[v][:2]
    v = e.op("dpc.reduce_mean %s [2, 3] : %s -> %s" % (v, ty(e.shapes[v]), ty([n, c])), [n, c])
    w = e.argument("fc.weight", model.fc.weight.detach().numpy(), "param")
    b = e.argument("fc.bias", model.fc.bias.detach().numpy(), "param")
    classes = model.fc.out_features
    wt = e.op("dpc.transpose %s [1, 0] : %s -> %s" % (w, ty([classes, c]), ty([c, classes])),
              [c, classes])
    v = e.op("dpc.matmul %s, %s : (%s, %s) -> %s" % (v, wt, ty([n, c]), ty([c, classes]),
                                                    ty([n, classes])), [n, classes])
    v = e.add(v, b)
    return e.text([(v, ty([n, classes]), "logits")]), e.inputs


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    torch.manual_seed(0)
    model = torchvision.models.resnet18()
    # Non-trivial running statistics, so that their update is checked.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            # The IR holds epsilon and momentum as f32: use those values.
            m.eps = float(np.float32(m.eps))
            m.momentum = 1 - float(np.float32(1 - m.momentum))
    x = torch.randn(BATCH, 3, SIZE, SIZE)
    text, inputs = resnet18_ir(model, x.numpy())
    path = tmp_path_factory.mktemp("resnet") / "resnet18.mlir"
    path.write_text(text)

    reference = model.double().train()
    with torch.no_grad():
        logits = reference(x.double()).numpy()
    expected = {"logits": logits}
    for name, buffer in reference.named_buffers():
        if name.endswith(("running_mean", "running_var")):
            expected[name] = buffer.numpy()
    return str(path), inputs, expected


@pytest.mark.parametrize("precision,rtol,atol", [("fp32", 1e-4, 1e-5),
                                                 ("fp64", 1e-10, 1e-10)])
def test_resnet18_forward_matches_pytorch(resnet, precision, rtol, atol):
    path, inputs, expected = resnet
    start = time.monotonic()
    got = interpret(path, inputs, precision=precision)
    elapsed = time.monotonic() - start
    assert sorted(got) == sorted(expected)
    for name, want in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=rtol, atol=atol, err_msg=name)
    # About a second on one core; generous, so that a loaded machine passes.
    assert elapsed < 60, "resnet18 forward took %.1f s" % elapsed
