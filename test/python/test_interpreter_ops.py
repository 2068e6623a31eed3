"""Every dpc op under the reference interpreter against NumPy and PyTorch.

Each case is one op (or a few) on random inputs, with a reference computed
in float64 by NumPy or torch.nn.functional. All cases run in one function
per precision, so dpc-run starts twice for the whole file: the fixture
`results` builds that function, runs it, and each test checks its case.
fp32 results match the float64 reference within rtol 1e-5 / atol 1e-6,
fp64 results within 1e-12; integer and boolean results match exactly.
"""

import os
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from dpc.interpreter import interpret

_DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
           np.dtype(np.float16): "f16", np.dtype(np.int64): "i64",
           np.dtype(np.int32): "i32", np.dtype(np.int16): "i16",
           np.dtype(np.int8): "i8", np.dtype(np.bool_): "i1"}


def ty(shape, element="f32"):
    """The MLIR tensor type of `shape` and `element`."""
    return "tensor<" + "".join("%dx" % d for d in shape) + element + ">"


def ty_of(array):
    return ty(array.shape, _DTYPES[array.dtype])


class Case:
    """One op applied to `inputs`; `body` uses %NAME for inputs and defines
    %NAME for each of `outputs` ({name: type}); `ref(**inputs)` gives the
    expected outputs from float64 copies of the inputs."""

    def __init__(self, id, body, inputs, outputs, ref, precisions=("fp32", "fp64"),
                 functions="", exact=False):
        self.id, self.body, self.inputs = id, body, inputs
        self.outputs, self.ref, self.precisions = outputs, ref, precisions
        self.functions, self.exact = functions, exact


CASES = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


rng = np.random.default_rng(2024)


def randn(*shape, dtype=np.float32):
    return np.asarray(rng.standard_normal(shape)).astype(dtype)


def uniform(low, high, *shape, dtype=np.float32):
    return rng.uniform(low, high, shape).astype(dtype)


def ints(low, high, *shape, dtype=np.int64):
    return rng.integers(low, high, shape).astype(dtype)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


#===------------------------------------------------------------------------===#
# Constants and calls
#===------------------------------------------------------------------------===#

case("constant_dense",
     "%r = dpc.constant dense<[[1.5, -2.0], [3.25, 4.0]]> : tensor<2x2xf32>\n"
     "%s = dpc.constant dense<3> : tensor<2x3xi64>\n"
     "%b = dpc.constant dense<[true, false, true]> : tensor<3xi1>\n"
     "%h = dpc.constant dense<[0.1, 65504.0]> : tensor<2xf16>\n"
     "%a = arith.constant dense<[7, -8]> : tensor<2xi32>",
     {}, {"r": ty([2, 2]), "s": ty([2, 3], "i64"), "b": ty([3], "i1"),
          "h": ty([2], "f16"), "a": ty([2], "i32")},
     lambda: {"r": np.array([[1.5, -2.0], [3.25, 4.0]]), "s": np.full((2, 3), 3),
              "b": np.array([True, False, True]),
              "h": np.array([0.1, 65504.0], np.float16).astype(np.float64),
              "a": np.array([7, -8])}, precisions=("fp32",))

x = randn(3, 4)
case("call",
     "%r = func.call @double(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>",
     {"x": x}, {"r": ty([3, 4])}, lambda x: {"r": 2 * x},
     functions="func.func private @double(%v: tensor<3x4xf32>) -> tensor<3x4xf32> {\n"
               "  %w = dpc.add %v, %v : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>\n"
               "  return %w : tensor<3x4xf32>\n}\n")

#===------------------------------------------------------------------------===#
# Elementwise unary ops
#===------------------------------------------------------------------------===#

UNARY = {
    "neg": (lambda x: -x, randn(3, 4)),
    "abs": (np.abs, randn(3, 4)),
    "exp": (np.exp, randn(3, 4)),
    "log": (np.log, uniform(0.1, 5, 3, 4)),
    "sqrt": (np.sqrt, uniform(0.1, 5, 3, 4)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), uniform(0.1, 5, 3, 4)),
    "reciprocal": (lambda x: 1 / x, uniform(0.5, 3, 3, 4) * np.sign(randn(3, 4))),
    "tanh": (np.tanh, randn(3, 4) * 3),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), np.array([-100, -5, 0, 3, 50], np.float32)),
    "relu": (lambda x: np.maximum(x, 0), randn(3, 4)),
    "erf": (lambda x: torch.erf(t(x)).numpy(), randn(3, 4)),
    "sin": (np.sin, randn(3, 4) * 4),
    "cos": (np.cos, randn(3, 4) * 4),
    "tan": (np.tan, uniform(-1.5, 1.5, 3, 4)),
    "asin": (np.arcsin, uniform(-1, 1, 3, 4)),
    "acos": (np.arccos, uniform(-1, 1, 3, 4)),
    "atan": (np.arctan, randn(3, 4) * 4),
    "sinh": (np.sinh, randn(3, 4) * 3),
    "cosh": (np.cosh, randn(3, 4) * 3),
    "asinh": (np.arcsinh, randn(3, 4) * 4),
    "acosh": (np.arccosh, uniform(1, 9, 3, 4)),
    "atanh": (np.arctanh, uniform(-0.99, 0.99, 3, 4)),
    "floor": (np.floor, randn(3, 4) * 4),
    "ceil": (np.ceil, randn(3, 4) * 4),
    # np.round, as ONNX's Round, takes halves to even.
    "round": (np.round, np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 3.2], np.float32)),
}
for op, (fn, x) in UNARY.items():
    case(op, "%%r = dpc.%s %%x : %s" % (op, ty_of(x)), {"x": x}, {"r": ty_of(x)},
         lambda x, fn=fn: {"r": fn(x)})

for dtype in (np.int64, np.int32):
    x = ints(-50, 50, 6, dtype=dtype)
    case("neg_abs_" + np.dtype(dtype).name,
         "%%n = dpc.neg %%x : %s\n%%a = dpc.abs %%x : %s" % (ty_of(x), ty_of(x)),
         {"x": x}, {"n": ty_of(x), "a": ty_of(x)},
         lambda x: {"n": -x, "a": np.abs(x)}, exact=True)

p = rng.random(6) < 0.5
case("not", "%r = dpc.not %p : tensor<6xi1>", {"p": p}, {"r": ty([6], "i1")},
     lambda p: {"r": ~p}, exact=True)

#===------------------------------------------------------------------------===#
# Elementwise binary ops with broadcasting
#===------------------------------------------------------------------------===#

SHAPES = [([4, 3], [4, 3]), ([4, 3], [3]), ([2, 1, 3], [4, 1]), ([], [2, 3]),
          ([3, 1], [1, 5])]
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
          "div": np.divide, "max": np.maximum, "min": np.minimum}


def broadcast_shape(a, b):
    return list(np.broadcast_shapes(tuple(a), tuple(b)))


for op, fn in BINARY.items():
    for a_shape, b_shape in SHAPES:
        x, y = randn(*a_shape), randn(*b_shape)
        if op == "div":
            y = np.where(np.abs(y) < 0.3, 1.0, y).astype(np.float32)
        r = broadcast_shape(a_shape, b_shape)
        case("%s_%s_%s" % (op, "x".join(map(str, a_shape)) or "scalar",
                           "x".join(map(str, b_shape))),
             "%%r = dpc.%s %%x, %%y : (%s, %s) -> %s" % (op, ty_of(x), ty_of(y), ty(r)),
             {"x": x, "y": y}, {"r": ty(r)}, lambda x, y, fn=fn: {"r": fn(x, y)})

x, y = uniform(0.1, 3, 4, 3), randn(3)
case("pow", "%r = dpc.pow %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>",
     {"x": x, "y": y}, {"r": ty([4, 3])}, lambda x, y: {"r": np.power(x, y)})

x = np.array([7, -7, 7, -7, 0, 100], np.int64)
y = np.array([2, 2, -2, -2, 3, 7], np.int64)
case("integer_arithmetic",
     "%a = dpc.add %x, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>\n"
     "%s = dpc.sub %x, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>\n"
     "%m = dpc.mul %x, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>\n"
     "%d = dpc.div %x, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>\n"
     "%hi = dpc.max %x, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>\n"
     "%lo = dpc.min %x, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>",
     {"x": x, "y": y}, {n: ty([6], "i64") for n in ("a", "s", "m", "d", "hi", "lo")},
     # Integer division truncates toward zero, as in C and ONNX.
     lambda x, y: {"a": x + y, "s": x - y, "m": x * y,
                   "d": np.trunc(x / y).astype(np.int64),
                   "hi": np.maximum(x, y), "lo": np.minimum(x, y)}, exact=True)

# Mod: the remainder has the sign of x (fmod, C and torch.fmod) or, with
# floor_mod, of y (Python's %, torch.remainder); every sign pair, both types.
x = np.array([7, -7, 7, -7, 0, 100, -2**63, 5], np.int64)
y = np.array([2, 2, -2, -2, 3, 7, -1, 1], np.int64)
case("mod_int64",
     "%t = dpc.mod %x, %y : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>\n"
     "%f = dpc.mod %x, %y {floor_mod} : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>",
     {"x": x, "y": y}, {"t": ty([8], "i64"), "f": ty([8], "i64")},
     lambda x, y: {"t": np.fmod(x, y), "f": np.mod(x, y)}, exact=True)
x, y = randn(4, 3) * 5, np.array([1.5, -2.25, 0.7], np.float32)
case("mod_f32",
     "%t = dpc.mod %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>\n"
     "%f = dpc.mod %x, %y {floor_mod} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>",
     {"x": x, "y": y}, {"t": ty([4, 3]), "f": ty([4, 3])},
     lambda x, y: {"t": np.fmod(x, y), "f": np.mod(x, y)})

x = np.array([2**31 - 1, -2**31, 5], np.int32)
y = np.array([1, -1, 3], np.int32)
case("int32_wraps",
     "%a = dpc.add %x, %y : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>\n"
     "%m = dpc.mul %x, %x : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>",
     {"x": x, "y": y}, {"a": ty([3], "i32"), "m": ty([3], "i32")},
     lambda x, y: {"a": (x + y).astype(np.int64).astype(np.int32),
                   "m": (x * x).astype(np.int64).astype(np.int32)}, exact=True)

p, q = rng.random((4, 1)) < 0.5, rng.random(3) < 0.5
case("and_or",
     "%a = dpc.and %p, %q : (tensor<4x1xi1>, tensor<3xi1>) -> tensor<4x3xi1>\n"
     "%o = dpc.or %p, %q : (tensor<4x1xi1>, tensor<3xi1>) -> tensor<4x3xi1>",
     {"p": p, "q": q}, {"a": ty([4, 3], "i1"), "o": ty([4, 3], "i1")},
     lambda p, q: {"a": p & q, "o": p | q}, exact=True)

COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}
for element, x, y in (("f32", np.round(randn(4, 3)), np.round(randn(3))),
                      ("i64", ints(-2, 3, 4, 3), ints(-2, 3, 3))):
    body = "\n".join("%%%s = dpc.compare %s, %%x, %%y : (%s, %s) -> tensor<4x3xi1>"
                     % (pred, pred, ty_of(x), ty_of(y)) for pred in COMPARE)
    case("compare_" + element, body, {"x": x.astype(x.dtype), "y": y},
         {pred: ty([4, 3], "i1") for pred in COMPARE},
         lambda x, y: {pred: fn(x, y) for pred, fn in COMPARE.items()}, exact=True)

c, x, y = rng.random((4, 1)) < 0.5, randn(4, 3), randn(3)
case("select",
     "%r = dpc.select %c, %x, %y : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<3xf32>)"
     " -> tensor<4x3xf32>",
     {"c": c, "x": x, "y": y}, {"r": ty([4, 3])}, lambda c, x, y: {"r": np.where(c, x, y)})

#===------------------------------------------------------------------------===#
# Casts
#===------------------------------------------------------------------------===#

x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 1e6], np.float32)
case("cast_float_to_int",
     "%i = dpc.cast %x : tensor<6xf32> -> tensor<6xi64>\n"
     "%j = dpc.cast %x : tensor<6xf32> -> tensor<6xi32>\n"
     "%b = dpc.cast %x : tensor<6xf32> -> tensor<6xi1>",
     {"x": x}, {"i": ty([6], "i64"), "j": ty([6], "i32"), "b": ty([6], "i1")},
     lambda x: {"i": np.trunc(x).astype(np.int64), "j": np.trunc(x).astype(np.int32),
                "b": x != 0}, exact=True)

# Element-wise gather and its scatter: repeated and negative indices.
x = np.arange(12, dtype=np.float32).reshape(3, 4)
idx = np.array([[0, -1, 3], [2, 2, -4]], np.int64)
def _gather_elements(x, i, axis):
    i = np.where(i < 0, i + x.shape[axis], i)
    out = np.zeros(i.shape, x.dtype)
    for pos in np.ndindex(*i.shape):
        source = list(pos)
        source[axis] = i[pos]
        out[pos] = x[tuple(source)]
    return out
def _scatter_add_elements(u, i, shape, axis):
    out = np.zeros(shape, u.dtype)
    i = np.where(i < 0, i + shape[axis], i)
    for pos in np.ndindex(*u.shape):
        target = list(pos)
        target[axis] = i[pos]
        out[tuple(target)] += u[pos]
    return out
case("gather_elements_and_scatter",
     "%g = dpc.gather_elements %x[%i] {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>\n"
     "%s = dpc.scatter_add_elements %g[%i] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<3x4xf32>",
     {"x": x, "i": idx}, {"g": ty([2, 3]), "s": ty([3, 4])},
     lambda x, i: {"g": _gather_elements(x, i, 1),
                   "s": _scatter_add_elements(_gather_elements(x, i, 1), i, (3, 4), 1)})

# Index reductions: ties go to the first index, or the last under `last`.
x = np.array([[3, 1, 3, 0], [-1, 7, 7, 2], [5, 5, -2, 5]], np.float32)
case("argmax_argmin",
     "%a = dpc.argmax %x axis 1 : tensor<3x4xf32> -> tensor<3xi64>\n"
     "%b = dpc.argmax %x axis 1 last : tensor<3x4xf32> -> tensor<3xi64>\n"
     "%c = dpc.argmin %x axis 0 keep_dims : tensor<3x4xf32> -> tensor<1x4xi64>\n"
     "%d = dpc.argmin %x axis 1 keep_dims last : tensor<3x4xf32> -> tensor<3x1xi64>",
     {"x": x}, {"a": ty([3], "i64"), "b": ty([3], "i64"), "c": ty([1, 4], "i64"),
                "d": ty([3, 1], "i64")},
     lambda x: {"a": np.argmax(x, 1),
                "b": x.shape[1] - 1 - np.argmax(x[:, ::-1], 1),
                "c": np.argmin(x, 0)[None, :],
                "d": (x.shape[1] - 1 - np.argmin(x[:, ::-1], 1))[:, None]},
     exact=True)

# Largest magnitudes first, equal ones by position.
case("top_k",
     "%v, %i = dpc.top_k %x k 4 : tensor<6xf32> -> tensor<4xf32>, tensor<4xi64>",
     {"x": np.array([1, -3, 3, 0.5, 2, -2], np.float32)},
     {"v": ty([4]), "i": ty([4], "i64")},
     lambda x: {"v": np.array([-3, 3, 2, -2], np.float32), "i": np.array([1, 2, 4, 5])},
     exact=True)

# One device holds the whole value, and one process runs every stage: a
# change of layout and a move between stages are the identity.
x = np.arange(12, dtype=np.float32).reshape(4, 3)
case("reshard",
     "%r = dpc.reshard %x <@mesh, [dp, tp]> : tensor<4x3xf32>\n"
     "%s = dpc.reshard %r <@mesh, [*, *], partial = [dp : sum]> : tensor<4x3xf32>\n"
     "%t = dpc.transfer %s from 0 to 1 : tensor<4x3xf32>",
     {"x": x}, {"r": ty([4, 3]), "s": ty([4, 3]), "t": ty([4, 3])},
     lambda x: {"r": x, "s": x, "t": x},
     functions='dpc.mesh @mesh ["dp"=2, "tp"=3]\n', exact=True)

# A group of one rank: each collective gives back the rank's own value (the
# N-rank semantics are unittests/Interpreter/CollectivesTest.cpp's).
case("collectives_of_one_rank",
     "%a = dpc.all_reduce %x over @solo [\"dp\"] <mean> : tensor<4x3xf32>\n"
     "%b = dpc.reduce_scatter %x over @solo [\"dp\"] <sum> dim 0 : tensor<4x3xf32> -> tensor<4x3xf32>\n"
     "%c = dpc.all_gather %x over @solo [\"dp\"] dim 1 : tensor<4x3xf32> -> tensor<4x3xf32>\n"
     "%d = dpc.all_to_all %x over @solo [\"dp\"] split 1 concat 0 : tensor<4x3xf32> -> tensor<4x3xf32>\n"
     "%e = dpc.all_slice %x over @solo [\"dp\"] dim 0 : tensor<4x3xf32> -> tensor<4x3xf32>\n"
     "%s = dpc.all_reduce %x over @solo [\"dp\"] <sum> {async} : tensor<4x3xf32>\n"
     "%f = dpc.wait %s : tensor<4x3xf32>",
     {"x": x}, {k: ty([4, 3]) for k in "abcdef"}, lambda x: {k: x for k in "abcdef"},
     functions='dpc.mesh @solo ["dp"=1]\n', exact=True)

i = np.array([-3, 0, 2**40 + 7, 5], np.int64)
case("cast_int",
     "%f = dpc.cast %i : tensor<4xi64> -> tensor<4xf32>\n"
     "%n = dpc.cast %i : tensor<4xi64> -> tensor<4xi32>\n"
     "%b = dpc.cast %i : tensor<4xi64> -> tensor<4xi1>\n"
     "%w = dpc.cast %b : tensor<4xi1> -> tensor<4xi64>\n"
     "%g = dpc.cast %b : tensor<4xi1> -> tensor<4xf64>",
     {"i": i}, {"f": ty([4]), "n": ty([4], "i32"), "b": ty([4], "i1"),
                "w": ty([4], "i64"), "g": ty([4], "f64")},
     lambda i: {"f": i.astype(np.float32), "n": i.astype(np.int32), "b": i != 0,
                "w": (i != 0).astype(np.int64), "g": (i != 0).astype(np.float64)},
     # Under fp64 the i64 -> f32 cast is exact; here it rounds 2^40 + 7.
     precisions=("fp32",))

x = (randn(64) * 1000).astype(np.float32)
case("cast_to_f16_and_bf16",
     "%h = dpc.cast %x : tensor<64xf32> -> tensor<64xf16>\n"
     "%b = dpc.cast %x : tensor<64xf32> -> tensor<64xbf16>\n"
     "%back = dpc.cast %h : tensor<64xf16> -> tensor<64xf32>",
     {"x": x}, {"h": ty([64], "f16"), "b": ty([64], "bf16"), "back": ty([64])},
     lambda x: {"h": x.astype(np.float16),
                "b": t(x.astype(np.float32)).to(torch.bfloat16).float().numpy(),
                "back": x.astype(np.float16).astype(np.float32)},
     precisions=("fp32",), exact=True)

x = randn(8, dtype=np.float64) * 1e3
case("cast_f64_f32",
     "%s = dpc.cast %x : tensor<8xf64> -> tensor<8xf32>\n"
     "%h = dpc.cast %x : tensor<8xf64> -> tensor<8xf16>",
     {"x": x}, {"s": ty([8]), "h": ty([8], "f16")},
     # Straight to f16, not through f32 (no double rounding).
     lambda x: {"s": x.astype(np.float32), "h": x.astype(np.float16)},
     precisions=("fp32",), exact=True)

x16, y16 = randn(5, dtype=np.float16), randn(5, dtype=np.float16)
case("f16_arithmetic_rounds",
     "%r = dpc.mul %x, %y : (tensor<5xf16>, tensor<5xf16>) -> tensor<5xf16>\n"
     "%e = dpc.exp %x : tensor<5xf16>",
     {"x": x16, "y": y16}, {"r": ty([5], "f16"), "e": ty([5], "f16")},
     lambda x, y: {"r": (x.astype(np.float32) * y.astype(np.float32)).astype(np.float16),
                   "e": np.exp(x.astype(np.float32)).astype(np.float16)},
     precisions=("fp32",), exact=True)

#===------------------------------------------------------------------------===#
# Contractions
#===------------------------------------------------------------------------===#

for a_shape, b_shape in (([4, 5], [5, 6]), ([3, 4, 5], [5, 6]), ([2, 1, 4, 5], [3, 5, 6]),
                         ([4, 5], [2, 5, 3]), ([1, 7], [7, 1])):
    x, y = randn(*a_shape), randn(*b_shape)
    r = broadcast_shape(a_shape[:-2], b_shape[:-2]) + [a_shape[-2], b_shape[-1]]
    case("matmul_%s_%s" % ("x".join(map(str, a_shape)), "x".join(map(str, b_shape))),
         "%%r = dpc.matmul %%x, %%y : (%s, %s) -> %s" % (ty_of(x), ty_of(y), ty(r)),
         {"x": x, "y": y}, {"r": ty(r)}, lambda x, y: {"r": np.matmul(x, y)})


def conv_out(size, k, stride, pad_begin, pad_end, dilation):
    return (size + pad_begin + pad_end - dilation * (k - 1) - 1) // stride + 1


CONVS = [
    # (name, N, C, H, W, F, KH, KW, strides, padding, dilations, groups, bias)
    ("basic", 2, 3, 7, 6, 4, 3, 3, [1, 1], [0, 0, 0, 0], [1, 1], 1, False),
    ("bias_stride2_pad1", 2, 3, 8, 8, 5, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 1, True),
    ("asymmetric_padding", 1, 2, 6, 5, 3, 3, 2, [1, 2], [2, 0, 1, 3], [1, 1], 1, True),
    ("dilation2", 1, 3, 9, 9, 2, 3, 3, [1, 1], [2, 2, 2, 2], [2, 2], 1, False),
    ("groups2", 2, 4, 6, 6, 6, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 2, True),
    ("depthwise", 1, 4, 6, 6, 4, 3, 3, [2, 1], [1, 1, 1, 1], [1, 1], 4, False),
    ("pointwise", 2, 8, 4, 4, 6, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1, True),
    ("stem_7x7_stride2", 1, 3, 16, 16, 4, 7, 7, [2, 2], [3, 3, 3, 3], [1, 1], 1, False),
]
for name, n, c, h, w, f, kh, kw, strides, padding, dilations, groups, bias in CONVS:
    inputs = {"x": randn(n, c, h, w), "w": randn(f, c // groups, kh, kw)}
    if bias:
        inputs["b"] = randn(f)
    oh = conv_out(h, kh, strides[0], padding[0], padding[2], dilations[0])
    ow = conv_out(w, kw, strides[1], padding[1], padding[3], dilations[1])
    operands = "%x, %w" + (", %b" if bias else "")
    types = ", ".join(ty_of(a) for a in inputs.values())
    body = ("%%r = dpc.conv2d %s {strides = array<i64: %d, %d>, padding = array<i64: %d, %d, %d, %d>,"
            " dilations = array<i64: %d, %d>, groups = %d : i64} : (%s) -> %s"
            % (operands, *strides, *padding, *dilations, groups, types, ty([n, f, oh, ow])))

    def ref(x, w, b=None, strides=strides, padding=padding, dilations=dilations,
            groups=groups):
        top, left, bottom, right = padding
        xp = F.pad(t(x), (left, right, top, bottom))
        return {"r": F.conv2d(xp, t(w), None if b is None else t(b), stride=strides,
                              dilation=dilations, groups=groups).numpy()}

    case("conv2d_" + name, body, inputs, {"r": ty([n, f, oh, ow])}, ref)

#===------------------------------------------------------------------------===#
# Pooling
#===------------------------------------------------------------------------===#


def pool_out(size, k, stride, pad_begin, pad_end, dilation, ceil):
    span = size + pad_begin + pad_end - dilation * (k - 1) - 1
    out = (span + (stride - 1 if ceil else 0)) // stride + 1
    # No window may start in the end padding.
    if ceil and (out - 1) * stride >= size + pad_begin:
        out -= 1
    return out


POOLS = [
    # (name, H, W, kernel, strides, padding, dilations, ceil, count_include_pad)
    ("k3s2p1", 8, 8, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], False, False),
    ("k2s2", 6, 6, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], False, False),
    ("ceil", 7, 7, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], True, False),
    ("ceil_pad", 7, 6, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, False),
    ("ceil_pad_count", 7, 6, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, True),
    ("k3s1p1_count", 5, 5, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], False, True),
    ("k3s1p1", 5, 5, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], False, False),
    ("rect", 6, 9, [2, 3], [1, 2], [1, 0, 1, 0], [1, 1], False, False),
    ("asymmetric", 6, 7, [3, 3], [2, 2], [0, 1, 2, 2], [1, 1], False, False),
    ("asymmetric_count", 6, 7, [3, 3], [2, 2], [0, 1, 2, 2], [1, 1], False, True),
    ("dilation2", 9, 9, [3, 3], [1, 1], [1, 1, 1, 1], [2, 2], False, False),
    ("dilation2_ceil", 10, 9, [2, 2], [3, 3], [1, 1, 1, 1], [2, 2], True, False),
]


def symmetric(padding):
    return padding[0] == padding[2] and padding[1] == padding[3]


def torch_max_pool(x, kernel, strides, padding, dilations, ceil):
    if symmetric(padding):
        return F.max_pool2d(t(x), kernel, strides, padding[:2], dilations, ceil)
    top, left, bottom, right = padding
    xp = F.pad(t(x), (left, right, top, bottom), value=-np.inf)
    return F.max_pool2d(xp, kernel, strides, 0, dilations, ceil)


def torch_avg_pool(x, kernel, strides, padding, ceil, count):
    if symmetric(padding):
        return F.avg_pool2d(t(x), kernel, strides, padding[:2], ceil, count)
    top, left, bottom, right = padding
    pad = (left, right, top, bottom)
    sums = F.avg_pool2d(F.pad(t(x), pad), kernel, strides, 0, ceil, True)
    if count:
        return sums
    ones = F.pad(torch.ones_like(t(x)), pad)
    return sums / F.avg_pool2d(ones, kernel, strides, 0, ceil, True)


for name, h, w, kernel, strides, padding, dilations, ceil, count in POOLS:
    x = randn(2, 3, h, w)
    oh = pool_out(h, kernel[0], strides[0], padding[0], padding[2], dilations[0], ceil)
    ow = pool_out(w, kernel[1], strides[1], padding[1], padding[3], dilations[1], ceil)
    attrs = ("kernel_shape = array<i64: %d, %d>, strides = array<i64: %d, %d>, "
             "padding = array<i64: %d, %d, %d, %d>, dilations = array<i64: %d, %d>"
             % (*kernel, *strides, *padding, *dilations)) + \
            (", ceil_mode" if ceil else "") + (", count_include_pad" if count else "")
    result = ty([2, 3, oh, ow])
    if not count:
        case("max_pool2d_" + name,
             "%%r = dpc.max_pool2d %%x {%s} : %s -> %s" % (attrs, ty_of(x), result),
             {"x": x}, {"r": result},
             lambda x, a=(kernel, strides, padding, dilations, ceil):
                 {"r": torch_max_pool(x, *a).numpy()})
    if dilations == [1, 1]:
        case("avg_pool2d_" + name,
             "%%r = dpc.avg_pool2d %%x {%s} : %s -> %s" % (attrs, ty_of(x), result),
             {"x": x}, {"r": result},
             lambda x, a=(kernel, strides, padding, ceil, count):
                 {"r": torch_avg_pool(x, *a).numpy()})

x = randn(1, 1, 4, 4)
x[0, 0, 0, 0] = -50  # The top-left window is mostly padding: padding must not win.
case("max_pool2d_padding_never_wins",
     "%r = dpc.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
     "padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}"
     " : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>",
     {"x": -np.abs(x)}, {"r": ty([1, 1, 3, 3])},
     lambda x: {"r": F.max_pool2d(t(x), 2, 2, 1).numpy()})

#===------------------------------------------------------------------------===#
# Reductions, softmax, normalizations
#===------------------------------------------------------------------------===#

REDUCE = {"reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max,
          "reduce_min": np.min}
for op, fn in REDUCE.items():
    x = randn(3, 4, 5)
    for dims, keep in (([1], False), ([0, 2], True), ([], False), ([0, 1, 2], False),
                       ([2], True)):
        shape = [1 if d in dims else s for d, s in enumerate(x.shape)] if keep else \
            [s for d, s in enumerate(x.shape) if d not in dims]
        case("%s_%s%s" % (op, "".join(map(str, dims)) or "none", "_keep" if keep else ""),
             "%%r = dpc.%s %%x [%s]%s : %s -> %s"
             % (op, ", ".join(map(str, dims)), " keep_dims" if keep else "", ty_of(x),
                ty(shape)),
             {"x": x}, {"r": ty(shape)},
             lambda x, fn=fn, dims=tuple(dims), keep=keep:
                 {"r": fn(x, axis=dims, keepdims=keep) if dims else x})

x = ints(-100, 100, 4, 6)
case("reduce_integers",
     "%s = dpc.reduce_sum %x [1] : tensor<4x6xi64> -> tensor<4xi64>\n"
     "%m = dpc.reduce_max %x [0] : tensor<4x6xi64> -> tensor<6xi64>\n"
     "%n = dpc.reduce_min %x [0, 1] : tensor<4x6xi64> -> tensor<i64>",
     {"x": x}, {"s": ty([4], "i64"), "m": ty([6], "i64"), "n": ty([], "i64")},
     lambda x: {"s": x.sum(1), "m": x.max(0), "n": x.min()}, exact=True)

for axis in (0, 1, 2):
    x = randn(3, 4, 5) * 4
    x[0, 0, 0] = 1000  # overflows exp without the max subtraction
    case("softmax_axis%d" % axis,
         "%%s = dpc.softmax %%x {axis = %d : i64} : tensor<3x4x5xf32>\n"
         "%%l = dpc.log_softmax %%x {axis = %d : i64} : tensor<3x4x5xf32>" % (axis, axis),
         {"x": x}, {"s": ty([3, 4, 5]), "l": ty([3, 4, 5])},
         lambda x, axis=axis: {"s": F.softmax(t(x), axis).numpy(),
                               "l": F.log_softmax(t(x), axis).numpy()})

EPS = float(np.float32(1e-5))  # the value of `epsilon = 1.0e-5 : f32`
for axis, bias in ((2, True), (1, False), (0, True)):
    x = randn(2, 3, 4) * 3 + 1
    scale_shape = list(x.shape[axis:])
    inputs = {"x": x, "g": randn(*scale_shape)}
    if bias:
        inputs["b"] = randn(*scale_shape)
    types = ", ".join(ty_of(a) for a in inputs.values())
    case("layer_norm_axis%d%s" % (axis, "_bias" if bias else ""),
         "%%r = dpc.layer_norm %%x, %%g%s {axis = %d : i64, epsilon = 1.0e-5 : f32} : %s"
         % (", %b" if bias else "", axis, types),
         inputs, {"r": ty_of(x)},
         lambda x, g, b=None: {"r": F.layer_norm(t(x), g.shape, t(g),
                                                 None if b is None else t(b), EPS).numpy()})

MOMENTUM = float(np.float32(0.9))
for name, shape, training in (("train_nchw", (4, 3, 5, 5), True), ("train_nc", (6, 3), True),
                              ("eval_nchw", (2, 3, 4, 4), False)):
    c = shape[1]
    inputs = {"x": randn(*shape) * 2 + 0.5, "g": randn(c), "b": randn(c), "m": randn(c),
              "v": uniform(0.5, 2, c)}

    def ref(x, g, b, m, v, training=training):
        mean, var = t(m.copy()), t(v.copy())
        # ONNX's momentum weighs the old statistic; PyTorch's the new one.
        y = F.batch_norm(t(x), mean, var, t(g), t(b), training, 1 - MOMENTUM, EPS)
        dims = tuple(d for d in range(x.ndim) if d != 1)
        # The statistics it normalized with: the batch's (biased) in training.
        bm, bv = (x.mean(axis=dims), x.var(axis=dims)) if training else (m, v)
        return {"y": y.numpy(), "nm": mean.numpy(), "nv": var.numpy(), "bm": bm, "bv": bv}

    case("batch_norm_" + name,
         "%%y, %%nm, %%nv, %%bm, %%bv = dpc.batch_norm %%x, %%g, %%b, %%m, %%v "
         "{epsilon = 1.0e-5 : f32, momentum = 0.9 : f32%s} : %s, %s"
         % (", training" if training else "", ty(shape), ty([c])),
         inputs, {"y": ty(shape), "nm": ty([c]), "nv": ty([c]), "bm": ty([c]), "bv": ty([c])},
         ref)

#===------------------------------------------------------------------------===#
# Data movement
#===------------------------------------------------------------------------===#

x = randn(4, 6)
case("reshape", "%r = dpc.reshape %x : tensor<4x6xf32> -> tensor<2x3x4xf32>",
     {"x": x}, {"r": ty([2, 3, 4])}, lambda x: {"r": x.reshape(2, 3, 4)})

for src, dst in (([4, 1], [2, 4, 3]), ([], [2, 2]), ([3], [2, 3])):
    x = randn(*src)
    case("broadcast_to_%s" % ("x".join(map(str, src)) or "scalar"),
         "%%r = dpc.broadcast_to %%x : %s -> %s" % (ty_of(x), ty(dst)),
         {"x": x}, {"r": ty(dst)}, lambda x, dst=dst: {"r": np.broadcast_to(x, dst)})

for perm in ([1, 0, 2], [2, 0, 1], [0, 1, 2]):
    x = randn(2, 3, 4)
    shape = [x.shape[p] for p in perm]
    case("transpose_" + "".join(map(str, perm)),
         "%%r = dpc.transpose %%x [%s] : tensor<2x3x4xf32> -> %s"
         % (", ".join(map(str, perm)), ty(shape)),
         {"x": x}, {"r": ty(shape)}, lambda x, perm=perm: {"r": x.transpose(perm)})

for axis in (0, 1):
    a, b, c = randn(2, 3), randn(2, 3), randn(2, 3)
    shape = [6, 3] if axis == 0 else [2, 9]
    case("concat_axis%d" % axis,
         "%%r = dpc.concat %%a, %%b, %%c {axis = %d : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, "
         "tensor<2x3xf32>) -> %s" % (axis, ty(shape)),
         {"a": a, "b": b, "c": c}, {"r": ty(shape)},
         lambda a, b, c, axis=axis: {"r": np.concatenate([a, b, c], axis)})

x = randn(5, 7, 3)
case("slice",
     "%r = dpc.slice %x {start = array<i64: 1, 0, 2>, limit = array<i64: 5, 7, 3>, "
     "stride = array<i64: 2, 3, 1>} : tensor<5x7x3xf32> -> tensor<2x3x1xf32>",
     {"x": x}, {"r": ty([2, 3, 1])}, lambda x: {"r": x[1:5:2, 0:7:3, 2:3]})

x = ints(0, 100, 4, 6)
case("split_integers",
     "%a, %b, %c = dpc.split %x {axis = 1 : i64} : tensor<4x6xi64> -> tensor<4x1xi64>, "
     "tensor<4x2xi64>, tensor<4x3xi64>",
     {"x": x}, {"a": ty([4, 1], "i64"), "b": ty([4, 2], "i64"), "c": ty([4, 3], "i64")},
     lambda x: dict(zip("abc", np.split(x, [1, 3], axis=1))), exact=True)

table = randn(5, 4)
ids = np.array([[0, -1, 4], [-5, 2, 2]], np.int64)
case("gather_negative_indices",
     "%r = dpc.gather %x[%i] {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>)"
     " -> tensor<2x3x4xf32>",
     {"x": table, "i": ids}, {"r": ty([2, 3, 4])}, lambda x, i: {"r": x[i]})

x = randn(2, 5, 3)
ids = np.array([4, -2, 0], np.int32)
case("gather_axis1_i32",
     "%r = dpc.gather %x[%i] {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<3xi32>)"
     " -> tensor<2x3x3xf32>",
     {"x": x, "i": ids}, {"r": ty([2, 3, 3])}, lambda x, i: {"r": np.take(x, i, axis=1)})

ids = np.array(3, np.int64)
case("gather_scalar_index",
     "%r = dpc.gather %x[%i] {axis = 2 : i64} : (tensor<2x5x3xf32>, tensor<i64>)"
     " -> tensor<2x5xf32>",
     {"x": x, "i": ids - 1}, {"r": ty([2, 5])}, lambda x, i: {"r": x[:, :, int(i)]})

#===------------------------------------------------------------------------===#
# Transposed convolution, resampling, padding, scatter
#===------------------------------------------------------------------------===#

x, w, b = randn(1, 4, 5, 5), randn(4, 3, 3, 3), randn(6)
case("conv_transpose2d_grouped_bias",
     "%r = dpc.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: "
     "1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, "
     "groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>)"
     " -> tensor<1x6x10x10xf32>",
     {"x": x, "w": w, "b": b}, {"r": ty([1, 6, 10, 10])},
     lambda x, w, b: {"r": F.conv_transpose2d(t(x), t(w), t(b), stride=2, padding=1,
                                              output_padding=1, groups=2).numpy()})

x, w = randn(2, 3, 4, 5), randn(3, 2, 2, 3)
case("conv_transpose2d_dilated",
     "%r = dpc.conv_transpose2d %x, %w {strides = array<i64: 1, 2>, padding = array<i64: "
     "0, 1, 0, 1>, dilations = array<i64: 2, 1>, output_padding = array<i64: 0, 0>, "
     "groups = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<3x2x2x3xf32>)"
     " -> tensor<2x2x6x9xf32>",
     {"x": x, "w": w}, {"r": ty([2, 2, 6, 9])},
     lambda x, w: {"r": F.conv_transpose2d(t(x), t(w), stride=(1, 2), padding=(0, 1),
                                           dilation=(2, 1)).numpy()})

x = randn(1, 2, 3, 4)
for mode, coordinate, nearest, torch_mode, align in (
        ("nearest", "asymmetric", "floor", "nearest", None),
        ("linear", "pytorch_half_pixel", "floor", "bilinear", False),
        ("linear", "align_corners", "floor", "bilinear", True)):
    case("resize_%s_%s" % (mode, coordinate),
         "%%r = dpc.resize %%x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = \"%s\", "
         "coordinate_mode = \"%s\", nearest_mode = \"%s\"} : tensor<1x2x3x4xf32>"
         " -> tensor<1x2x6x8xf32>" % (mode, coordinate, nearest),
         {"x": x}, {"r": ty([1, 2, 6, 8])},
         lambda x, m=torch_mode, a=align: {"r": F.interpolate(
             t(x), scale_factor=2, mode=m, align_corners=a).numpy()})

x = randn(2, 3, 4)
case("pad_low_high_interior",
     "%r = dpc.pad %x {low = array<i64: 1, 0, 2>, high = array<i64: 0, 2, 1>, "
     "interior = array<i64: 0, 1, 2>, value = -1.5 : f64} : tensor<2x3x4xf32>"
     " -> tensor<3x7x13xf32>",
     {"x": x}, {"r": ty([3, 7, 13])},
     lambda x: {"r": _pad_reference(x, [1, 0, 2], [0, 2, 1], [0, 1, 2], -1.5)})


def _pad_reference(x, low, high, interior, value):
    shape = [lo + hi + n + (n - 1) * i for n, lo, hi, i in zip(x.shape, low, high, interior)]
    out = np.full(shape, value)
    out[tuple(slice(lo, lo + (n - 1) * (i + 1) + 1, i + 1)
              for n, lo, i in zip(x.shape, low, interior))] = x
    return out


updates = randn(2, 5, 4)
ids = np.array([[0, 3, 3, -1, 9], [2, 0, 5, 5, 5]], np.int64)


def _scatter_reference(u, i):
    out = np.zeros((10, 4))
    np.add.at(out, np.where(i < 0, i + 10, i).reshape(-1), u.reshape(-1, 4))
    return out


case("scatter_add_repeated_and_negative",
     "%r = dpc.scatter_add %u[%i] {axis = 0 : i64} : (tensor<2x5x4xf32>, tensor<2x5xi64>)"
     " -> tensor<10x4xf32>",
     {"u": updates, "i": ids}, {"r": ty([10, 4])},
     lambda u, i: {"r": _scatter_reference(u, i)})

#===------------------------------------------------------------------------===#
# Gradient kernels, against torch.autograd
#===------------------------------------------------------------------------===#

x, g = randn(2, 3, 8, 8), randn(2, 6, 4, 4)
case("conv2d_filter_grad_strided",
     "%r = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 2, 2>, padding = array<i64: "
     "1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : "
     "(tensor<2x3x8x8xf32>, tensor<2x6x4x4xf32>) -> tensor<6x3x3x3xf32>",
     {"x": x, "g": g}, {"r": ty([6, 3, 3, 3])},
     lambda x, g: {"r": torch.nn.grad.conv2d_weight(t(x), (6, 3, 3, 3), t(g), stride=2,
                                                    padding=1).numpy()})

x, g = randn(1, 4, 7, 7), randn(1, 4, 3, 3)
case("conv2d_filter_grad_grouped_dilated",
     "%r = dpc.conv2d_filter_grad %x, %g {strides = array<i64: 1, 1>, padding = array<i64: "
     "0, 0, 0, 0>, dilations = array<i64: 2, 2>, groups = 2 : i64} : "
     "(tensor<1x4x7x7xf32>, tensor<1x4x3x3xf32>) -> tensor<4x2x3x3xf32>",
     {"x": x, "g": g}, {"r": ty([4, 2, 3, 3])},
     lambda x, g: {"r": torch.nn.grad.conv2d_weight(t(x), (4, 2, 3, 3), t(g), dilation=2,
                                                    groups=2).numpy()})


def _pool_grad(pool, x, g, **kwargs):
    xt = t(x).requires_grad_()
    pool(xt, **kwargs).backward(t(g))
    return {"r": xt.grad.numpy()}


x, g = randn(2, 3, 8, 8), randn(2, 3, 4, 4)
case("max_pool2d_grad_overlapping",
     "%r = dpc.max_pool2d_grad %x, %g {kernel_shape = array<i64: 3, 3>, strides = array<i64: "
     "2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : "
     "tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>",
     {"x": x, "g": g}, {"r": ty([2, 3, 8, 8])},
     lambda x, g: _pool_grad(F.max_pool2d, x, g, kernel_size=3, stride=2, padding=1))

gr = randn(1, 2, 6, 8)
for mode, coordinate, torch_mode, align in (("nearest", "asymmetric", "nearest", None),
                                            ("linear", "pytorch_half_pixel", "bilinear", False),
                                            ("linear", "align_corners", "bilinear", True)):
    case("resize_grad_%s_%s" % (mode, coordinate),
         "%%r = dpc.resize_grad %%gr {scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = \"%s\", "
         "coordinate_mode = \"%s\", nearest_mode = \"floor\"} : tensor<1x2x6x8xf32>"
         " -> tensor<1x2x3x4xf32>" % (mode, coordinate),
         {"gr": gr}, {"r": ty([1, 2, 3, 4])},
         lambda gr, m=torch_mode, a=align: _pool_grad(
             F.interpolate, np.zeros((1, 2, 3, 4)), gr, scale_factor=2, mode=m,
             align_corners=a))

case("avg_pool2d_grad_count_include_pad",
     "%r = dpc.avg_pool2d_grad %g {kernel_shape = array<i64: 3, 3>, strides = array<i64: "
     "2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, "
     "count_include_pad} : tensor<2x3x4x4xf32> -> tensor<2x3x8x8xf32>",
     {"g": g}, {"r": ty([2, 3, 8, 8])},
     lambda g: _pool_grad(F.avg_pool2d, np.zeros((2, 3, 8, 8)), g, kernel_size=3, stride=2,
                          padding=1, count_include_pad=True))

case("avg_pool2d_grad_exclude_pad",
     "%r = dpc.avg_pool2d_grad %g {kernel_shape = array<i64: 3, 3>, strides = array<i64: "
     "2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : "
     "tensor<2x3x4x4xf32> -> tensor<2x3x8x8xf32>",
     {"g": g}, {"r": ty([2, 3, 8, 8])},
     lambda g: _pool_grad(F.avg_pool2d, np.zeros((2, 3, 8, 8)), g, kernel_size=3, stride=2,
                          padding=1, count_include_pad=False))

#===------------------------------------------------------------------------===#
# Recurrent layers, against the ONNX equations in torch (and torch.autograd)
#===------------------------------------------------------------------------===#

def _recurrent(cell, x, w, r, b, h0, c0=None, n=None, reverse=False, lbr=False):
    """One direction of an ONNX LSTM or GRU, entry by entry, in torch."""
    T, B, _ = x.shape
    H = r.shape[1]
    out = {}
    finals_h, finals_c = [], []
    for e in range(B):
        h = h0[e]
        c = c0[e] if c0 is not None else None
        length = T if n is None else int(n[e])
        for s in range(length):
            step = length - 1 - s if reverse else s
            xt = x[step, e]
            if cell == "lstm":
                a = w @ xt + r @ h + b[:4 * H] + b[4 * H:]
                i, o, f = (torch.sigmoid(a[k * H:(k + 1) * H]) for k in range(3))
                c = f * c + i * torch.tanh(a[3 * H:])
                h = o * torch.tanh(c)
            else:
                gx, rb = w @ xt + b[:3 * H], b[3 * H:]
                z = torch.sigmoid(gx[:H] + r[:H] @ h + rb[:H])
                reset = torch.sigmoid(gx[H:2 * H] + r[H:2 * H] @ h + rb[H:2 * H])
                if lbr:
                    cand = gx[2 * H:] + reset * (r[2 * H:] @ h + rb[2 * H:])
                else:
                    cand = gx[2 * H:] + r[2 * H:] @ (reset * h) + rb[2 * H:]
                h = (1 - z) * torch.tanh(cand) + z * h
            out[step, e] = h
        finals_h.append(h)
        finals_c.append(c)
    zero = torch.zeros(H, dtype=x.dtype)
    y = torch.stack([torch.stack([out.get((step, e), zero) for e in range(B)])
                     for step in range(T)])
    results = [y, torch.stack(finals_h)]
    if c0 is not None:
        results.append(torch.stack(finals_c))
    return results


def _recurrent_case(id, cell, reverse, lengths, lbr=False):
    T, B, I, H = 3, 2, 3, 2
    gates, states = (4, 2) if cell == "lstm" else (3, 1)
    names = ["x", "w", "r", "b", "h0", "c0"][:4 + states]
    shapes = [(T, B, I), (gates * H, I), (gates * H, H), (2 * gates * H,), (B, H), (B, H)]
    inputs = {k: randn(*shape) * 0.8 for k, shape in zip(names, shapes)}
    types = [ty(shape) for shape in shapes[:4 + states]]
    operands = ", ".join("%" + k for k in names)
    if lengths is not None:
        inputs["n"] = np.array(lengths, np.int64)
        operands += " lengths %n"
        types.append(ty([B], "i64"))
    attrs = [a for a, on in (("linear_before_reset", lbr), ("reverse", reverse)) if on]
    attr_text = " {%s}" % ", ".join(attrs) if attrs else ""
    results = ["y", "hT", "cT"][:1 + states]
    result_types = [ty([T, B, H])] + [ty([B, H])] * states
    # The gradient op, with cotangents gy, gh (, gc) of the results.
    cotangents = {"g" + k: randn(*[T, B, H] if k == "y" else [B, H]) for k in results}
    inputs.update(cotangents)
    grad_operands = ", ".join(["%" + k for k in names] + ["%g" + k for k in results])
    if lengths is not None:
        grad_operands += " lengths %n"
    grad_types = (types[:4 + states] + result_types
                  + ([ty([B], "i64")] if lengths is not None else []))
    grads = ["d" + k for k in names]
    body = ("%s = dpc.%s %s%s : (%s) -> (%s)\n" % (
        ", ".join("%" + k for k in results), cell, operands, attr_text, ", ".join(types),
        ", ".join(result_types)) +
        "%s = dpc.%s_grad %s%s : (%s) -> (%s)" % (
        ", ".join("%" + k for k in grads), cell, grad_operands, attr_text,
        ", ".join(grad_types), ", ".join(types[:4 + states])))

    def ref(**a):
        leaves = [t(a[k]).requires_grad_() for k in names]
        outs = _recurrent(cell, *leaves[:5], c0=leaves[5] if states == 2 else None,
                          n=a.get("n"), reverse=reverse, lbr=lbr)
        loss = sum((o * t(a["g" + k])).sum() for o, k in zip(outs, results))
        loss.backward()
        expected = {k: o.detach().numpy() for k, o in zip(results, outs)}
        expected.update({"d" + k: leaf.grad.numpy() for k, leaf in zip(names, leaves)})
        return expected

    outputs = dict(zip(results, result_types))
    outputs.update({"d" + k: ty(shape) for k, shape in zip(names, shapes)})
    case(id, body, inputs, outputs, ref)


_recurrent_case("lstm_and_grad", "lstm", False, None)
_recurrent_case("lstm_reverse_lengths_and_grad", "lstm", True, [3, 1])
_recurrent_case("gru_and_grad", "gru", False, [2, 3])
_recurrent_case("gru_linear_before_reset_reverse_and_grad", "gru", True, None, lbr=True)

#===------------------------------------------------------------------------===#
# Regularization and losses
#===------------------------------------------------------------------------===#

def philox4x32(counter, key):
    """Philox4x32-10 of uint64 arrays of counter words, written from the
    paper (Salmon et al., SC'11) independently of the C++ kernel."""
    mask = np.uint64(0xFFFFFFFF)
    c = [np.asarray(w, np.uint64) for w in counter]
    k = [np.uint64(w) for w in key]
    for round in range(10):
        if round:
            k = [(k[0] + np.uint64(0x9E3779B9)) & mask, (k[1] + np.uint64(0xBB67AE85)) & mask]
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & mask,
             (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & mask]
    return c


def dropout_reference(x, seed, offset, ratio, stream):
    index = np.arange(x.size, dtype=np.uint64) + np.uint64(offset)
    low, high = index & np.uint64(0xFFFFFFFF), index >> np.uint64(32)
    word = philox4x32([low, high, np.full_like(index, stream), np.zeros_like(index)],
                      [seed, 0])[0]
    keep = (word >= np.uint64(int(ratio * 2**32))).reshape(x.shape)
    return np.where(keep, x / (1 - ratio), 0)


x = randn(3, 4)
seeds = {"seed": np.array(7, np.int64), "offset": np.array(0, np.int64)}
case("dropout_ratio_zero",
     "%r = dpc.dropout %x, %seed, %offset {ratio = 0.0 : f32, stream = 0 : i64} : tensor<3x4xf32>",
     {"x": x, **seeds}, {"r": ty([3, 4])}, lambda x, seed, offset: {"r": x})
x = randn(64, 50)
for ratio, stream, offset in ((0.1, 0, 0), (0.5, 3, 12345), (0.9, 1, 2**33)):
    inputs = {"x": x, "seed": np.array(2024, np.int64), "offset": np.array(offset, np.int64)}
    case("dropout_%g_stream%d" % (ratio, stream),
         "%%r = dpc.dropout %%x, %%seed, %%offset {ratio = %g : f32, stream = %d : i64}"
         " : tensor<64x50xf32>" % (ratio, stream), inputs, {"r": ty([64, 50])},
         lambda x, seed, offset, ratio=ratio, stream=stream: {
             "r": dropout_reference(x, int(seed), int(offset), float(np.float32(ratio)), stream)})

LOSSES = [
    # (name, input shape, label dtype, ignore_index, number of ignored labels)
    ("basic", (6, 5), np.int64, -100, 0),
    ("ignored", (6, 5), np.int64, -100, 2),
    ("ignore_class", (6, 5), np.int32, 1, 0),
    ("spatial", (2, 4, 3, 2), np.int64, -1, 3),
]
for name, shape, label_dtype, ignore, n_ignored in LOSSES:
    n, classes = shape[0], shape[1]
    label_shape = (n,) + shape[2:]
    labels = ints(0, classes, *label_shape, dtype=label_dtype)
    flat = labels.reshape(-1)
    flat[rng.choice(flat.size, n_ignored, replace=False)] = ignore
    logits = randn(*shape) * 2
    for op, fn in (("softmax_cross_entropy", F.cross_entropy), ("nll_loss", F.nll_loss)):
        data = logits if op == "softmax_cross_entropy" else \
            F.log_softmax(t(logits).double(), 1).float().numpy()
        for reduction in ("mean", "sum", "none"):
            result = ty(label_shape) if reduction == "none" else ty([])
            case("%s_%s_%s" % (op, name, reduction),
                 "%%r = dpc.%s %%x, %%y %s {ignore_index = %d : i64} : (%s, %s) -> %s"
                 % (op, reduction, ignore, ty(shape), ty(label_shape,
                                                         _DTYPES[np.dtype(label_dtype)]),
                    result),
                 {"x": data, "y": labels}, {"r": result},
                 lambda x, y, fn=fn, reduction=reduction, ignore=ignore:
                     {"r": fn(t(x), t(y.astype(np.int64)), ignore_index=ignore,
                              reduction=reduction).numpy()})

#===------------------------------------------------------------------------===#
# The harness
#===------------------------------------------------------------------------===#


def _prefix(text, prefix):
    """Renames every %value and @symbol of `text` apart from other cases."""
    return re.sub(r"([%@])(\w+)", lambda m: m.group(1) + prefix + m.group(2), text)


def _module(cases):
    """One @main running every case, and its inputs by argument name."""
    arguments, results, lines, functions, inputs = [], [], [], [], {}
    for index, c in enumerate(cases):
        prefix = "c%d_" % index
        for name, array in c.inputs.items():
            arguments.append('%%%s%s: %s {dpc.input = "%s%s"}'
                             % (prefix, name, ty_of(array), prefix, name))
            inputs[prefix + name] = array
        lines += ["  " + line for line in _prefix(c.body, prefix).splitlines()]
        results += [(prefix + name, type) for name, type in c.outputs.items()]
        functions.append(_prefix(c.functions, prefix))
    signature = ", ".join('%s {dpc.output = "%s"}' % (type, name) for name, type in results)
    text = "func.func @main(%s) -> (%s) {\n%s\n  return %s : %s\n}\n%s" % (
        ", ".join(arguments), signature, "\n".join(lines),
        ", ".join("%" + name for name, _ in results),
        ", ".join(type for _, type in results), "".join(functions))
    return text, inputs


@pytest.fixture(scope="module", params=["fp32", "fp64"])
def results(request, tmp_path_factory):
    precision = request.param
    cases = [c for c in CASES if precision in c.precisions]
    text, inputs = _module(cases)
    path = tmp_path_factory.mktemp("interpreter-ops") / ("all-%s.mlir" % precision)
    path.write_text(text)
    # One run reads a stored .npz, the other a deflated one.
    outputs = interpret(str(path), inputs, precision=precision,
                        compressed=precision == "fp64")
    by_case = {}
    for index, c in enumerate(cases):
        by_case[c.id] = {name: outputs["c%d_%s" % (index, name)] for name in c.outputs}
    return precision, by_case


def _as_float64(array):
    return array.astype(np.float64) if array.dtype.kind == "f" else array


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op(results, case):
    precision, by_case = results
    if precision not in case.precisions:
        pytest.skip("%s only" % "/".join(case.precisions))
    got = by_case[case.id]
    inputs = {name: _as_float64(array) for name, array in case.inputs.items()}
    expected = case.ref(**inputs)
    assert sorted(got) == sorted(expected)
    for name, want in expected.items():
        want = np.asarray(want)
        have = got[name]
        assert have.shape == want.shape, name
        if have.dtype.kind in "iub" or case.exact:
            if have.dtype.kind == "f":
                np.testing.assert_array_equal(have, want.astype(have.dtype), err_msg=name)
            else:
                np.testing.assert_array_equal(have, want, err_msg=name)
            continue
        if precision == "fp64":
            assert have.dtype == np.float64, name
            np.testing.assert_allclose(have, want, rtol=1e-12, atol=1e-12, err_msg=name)
        else:
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_every_op_is_covered():
    """Each op of DpcOps.td appears in some case, or, for the ops that only
    run between several ranks (send, recv), in the N-rank unit test."""
    td = os.path.join(os.path.dirname(__file__), "..", "..", "include", "dpc", "Dialect",
                      "Dpc", "IR", "DpcOps.td")
    text = open(td).read()
    ops = set(re.findall(r'def Dpc_\w+Op\s*:\s*Dpc_\w+<"(\w+)"', text))
    used = set()
    for c in CASES:
        used |= set(re.findall(r"dpc\.(\w+)", c.body + c.functions))
    ranks = os.path.join(os.path.dirname(__file__), "..", "..", "unittests", "Interpreter",
                         "CollectivesTest.cpp")
    used |= set(re.findall(r"dpc\.(\w+)", open(ranks).read()))
    missing = sorted(ops - used)
    assert not missing, "ops without an interpreter test: %s" % missing
