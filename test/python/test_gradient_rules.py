"""Every op's gradient rule against finite differences, in float64.

A gradient rule (DifferentiableOpInterface) is only right if it is the
derivative of what the op computes, so each case checks the backward pass
that `-dpc-differentiate` builds against central differences of the forward
pass, both under the reference interpreter in float64.

A case is one op (or a short chain) applied to parameters and inputs. Its
@forward returns `loss = sum_r reduce_sum(r * c_r)` over the case's float
results r, with a random cotangent c_r (an input) per result, so the
gradient of the loss is the op's vector-Jacobian product at c_r. It is
compared with `(loss(p + eps v) - loss(p - eps v)) / (2 eps)`, against
`<grad, v>` along 3 random directions v per parameter, and element by
element (v one-hot) for cases with few parameter elements. Inputs stay
away from points where the op is not differentiable (ties, kinks, zero).

Per case, dpc-opt runs once and dpc-run once, on @check, which calls
@forward_backward and then @forward at every perturbed point. A mismatch is
a wrong gradient rule; the tolerances are what float64 differences resolve.
"""

import os
import re

import numpy as np
import pytest

from dpc import tools
from dpc.interpreter import interpret

EPS = 1e-6          # finite-difference step
RTOL, ATOL = 1e-6, 1e-8
DIRECTIONS = 3      # random directions per parameter
FULL_CHECK = 40     # up to this many parameter elements, also check each one


def ty(shape, element="f64"):
    """The MLIR tensor type of `shape` and `element`."""
    return "tensor<" + "".join("%dx" % d for d in shape) + element + ">"


_ELEMENTS = {np.dtype(np.float64): "f64", np.dtype(np.int64): "i64",
             np.dtype(np.int32): "i32", np.dtype(np.bool_): "i1"}


def ty_of(array):
    return ty(array.shape, _ELEMENTS[array.dtype])


rng = np.random.default_rng(1234)


class Case:
    """`body` applies the op to %NAME of `params` (differentiated, float64)
    and `inputs` (not differentiated); `outputs` gives the shape of each
    float64 result %NAME the loss weighs."""

    def __init__(self, id, body, params, inputs, outputs):
        self.id, self.body, self.params, self.inputs = id, body, params, inputs
        self.outputs = outputs
        self.cotangents = {"ct_" + name: randn(*shape) for name, shape in outputs.items()}
        self.directions = {name: [randn(*p.shape) for _ in range(DIRECTIONS)]
                           for name, p in params.items()}


CASES = []


def case(id, body, params, inputs=None, *, outputs):
    CASES.append(Case(id, body, params, inputs or {}, outputs))


def randn(*shape):
    return np.asarray(rng.standard_normal(shape))


def uniform(low, high, *shape):
    return rng.uniform(low, high, shape)


def away_from_zero(x, margin=0.1):
    return np.sign(x) * (np.abs(x) + margin)


def distinct(*shape, gap=0.07):
    """Values at least `gap` apart, so no max or min is a tie."""
    n = int(np.prod(shape))
    return ((rng.permutation(n) - n / 2) * gap).reshape(shape)


def ints(low, high, *shape, dtype=np.int64):
    return rng.integers(low, high, shape).astype(dtype)


def shape_name(shape):
    return "x".join(map(str, shape)) or "scalar"


def broadcast_shape(a, b):
    return list(np.broadcast_shapes(tuple(a), tuple(b)))


#===------------------------------------------------------------------------===#
# Elementwise ops
#===------------------------------------------------------------------------===#

UNARY = {
    "neg": randn(3, 4),
    "abs": away_from_zero(randn(3, 4)),
    "exp": randn(3, 4),
    "log": uniform(0.5, 3, 3, 4),
    "sqrt": uniform(0.5, 3, 3, 4),
    "rsqrt": uniform(0.5, 3, 3, 4),
    "reciprocal": uniform(0.5, 2, 3, 4) * np.sign(randn(3, 4)),
    "tanh": randn(3, 4) * 2,
    "sigmoid": randn(3, 4) * 3,
    "relu": away_from_zero(randn(3, 4)),
    "erf": randn(3, 4),
    "sin": randn(3, 4) * 2,
    "cos": randn(3, 4) * 2,
    "tan": uniform(-1.3, 1.3, 3, 4),
    "asin": uniform(-0.9, 0.9, 3, 4),
    "acos": uniform(-0.9, 0.9, 3, 4),
    "atan": randn(3, 4) * 2,
    "sinh": randn(3, 4),
    "cosh": randn(3, 4),
    "asinh": randn(3, 4) * 2,
    "acosh": uniform(1.2, 4, 3, 4),
    "atanh": uniform(-0.9, 0.9, 3, 4),
    # Flat away from the integers (and, for round, the halves).
    "floor": ints(-5, 5, 3, 4) + uniform(0.1, 0.4, 3, 4),
    "ceil": ints(-5, 5, 3, 4) + uniform(0.1, 0.4, 3, 4),
    "round": ints(-5, 5, 3, 4) + uniform(0.1, 0.4, 3, 4),
}
for op, x in UNARY.items():
    case(op, "%%r = dpc.%s %%x : %s" % (op, ty_of(x)), {"x": x}, outputs={"r": x.shape})

SHAPES = [([3, 4], [3, 4]), ([3, 4], [4]), ([2, 1, 3], [4, 1]), ([], [2, 3])]
for op in ("add", "sub", "mul", "div", "pow", "max", "min"):
    for a_shape, b_shape in SHAPES:
        x, y = randn(*a_shape), randn(*b_shape)
        if op == "div":
            y = away_from_zero(y, 0.5)
        elif op == "pow":
            x = uniform(0.5, 2, *a_shape)
        elif op in ("max", "min"):
            # On grids offset by half a step: no pair ties.
            x = ints(-20, 20, *a_shape) * 0.1
            y = ints(-20, 20, *b_shape) * 0.1 + 0.05
        r = broadcast_shape(a_shape, b_shape)
        case("%s_%s_%s" % (op, shape_name(a_shape), shape_name(b_shape)),
             "%%r = dpc.%s %%x, %%y : (%s, %s) -> %s" % (op, ty_of(x), ty_of(y), ty(r)),
             {"x": x, "y": y}, outputs={"r": r})

# Mod: away from the jumps, where x / y is an integer.
for floor_mod in ("", " {floor_mod}"):
    y = away_from_zero(randn(4), 0.5)
    x = (ints(-4, 4, 3, 4) + uniform(0.2, 0.8, 3, 4)) * y
    case("mod" + floor_mod.replace(" {", "_").replace("}", ""),
         "%%r = dpc.mod %%x, %%y%s : (%s, %s) -> %s" % (floor_mod, ty_of(x), ty_of(y),
                                                      ty([3, 4])),
         {"x": x, "y": y}, outputs={"r": [3, 4]})

for c_shape, a_shape, b_shape in (([4, 1], [4, 3], [3]), ([4, 3], [], [4, 1])):
    c = rng.random(c_shape) < 0.5
    x, y = randn(*a_shape), randn(*b_shape)
    case("select_%s_%s_%s" % (shape_name(c_shape), shape_name(a_shape), shape_name(b_shape)),
         "%%r = dpc.select %%c, %%x, %%y : (%s, %s, %s) -> tensor<4x3xf64>"
         % (ty_of(c), ty_of(x), ty_of(y)),
         {"x": x, "y": y}, {"c": c}, outputs={"r": [4, 3]})

# Under fp64 an f32 value is held in double, so the round trip is exact.
x = randn(3, 4)
case("cast_f64_f32_f64",
     "%h = dpc.cast %x : tensor<3x4xf64> -> tensor<3x4xf32>\n"
     "%e = dpc.tanh %h : tensor<3x4xf32>\n"
     "%r = dpc.cast %e : tensor<3x4xf32> -> tensor<3x4xf64>",
     {"x": x}, outputs={"r": [3, 4]})

# An integer cast takes no gradient; the float operand beside it does.
case("cast_int_operand",
     "%f = dpc.cast %i : tensor<3x4xi64> -> tensor<3x4xf64>\n"
     "%r = dpc.mul %f, %x : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>",
     {"x": x}, {"i": ints(-3, 4, 3, 4)}, outputs={"r": [3, 4]})

x = randn(3, 4)
seeds = {"seed": np.array(42, np.int64), "offset": np.array(1000, np.int64)}
for ratio in (0.0, 0.5):
    case("dropout_ratio_%.1f" % ratio,
         "%%r = dpc.dropout %%x, %%seed, %%offset {ratio = %.1f : f32, stream = 2 : i64}"
         " : tensor<3x4xf64>" % ratio, {"x": x}, seeds, outputs={"r": [3, 4]})

#===------------------------------------------------------------------------===#
# Contractions and convolutions
#===------------------------------------------------------------------------===#

for a_shape, b_shape in (([4, 5], [5, 6]), ([3, 4, 5], [5, 6]), ([2, 1, 4, 5], [3, 5, 6]),
                         ([4, 5], [2, 5, 3]), ([1, 7], [7, 1]), ([2, 3], [3, 2])):
    x, y = randn(*a_shape), randn(*b_shape)
    r = broadcast_shape(a_shape[:-2], b_shape[:-2]) + [a_shape[-2], b_shape[-1]]
    case("matmul_%s_%s" % (shape_name(a_shape), shape_name(b_shape)),
         "%%r = dpc.matmul %%x, %%y : (%s, %s) -> %s" % (ty_of(x), ty_of(y), ty(r)),
         {"x": x, "y": y}, outputs={"r": r})


def conv_out(size, k, stride, pad_begin, pad_end, dilation):
    return (size + pad_begin + pad_end - dilation * (k - 1) - 1) // stride + 1


CONVS = [
    # (name, N, C, H, W, F, KH, KW, strides, padding, dilations, groups, bias)
    ("small_bias", 1, 2, 3, 3, 2, 2, 2, [1, 1], [0, 0, 0, 0], [1, 1], 1, True),
    ("basic", 2, 3, 6, 5, 4, 3, 3, [1, 1], [0, 0, 0, 0], [1, 1], 1, False),
    ("bias_stride2_pad1", 2, 3, 7, 8, 5, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 1, True),
    # The strided window leaves rows of the input unread.
    ("stride3_unread_rows", 1, 2, 9, 7, 3, 2, 2, [3, 2], [0, 0, 0, 0], [1, 1], 1, True),
    ("asymmetric_padding", 1, 2, 6, 5, 3, 3, 2, [1, 2], [2, 0, 1, 3], [1, 1], 1, True),
    ("dilation2", 1, 3, 7, 7, 2, 3, 3, [1, 1], [2, 2, 2, 2], [2, 2], 1, False),
    ("dilation_stride", 1, 2, 9, 8, 2, 2, 3, [2, 3], [1, 0, 0, 2], [3, 2], 1, True),
    ("groups2", 2, 4, 5, 5, 6, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 2, True),
    ("depthwise", 1, 4, 6, 6, 4, 3, 3, [2, 1], [1, 1, 1, 1], [1, 1], 4, False),
    ("pointwise", 2, 6, 3, 3, 4, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1, True),
]
for name, n, c, h, w, f, kh, kw, strides, padding, dilations, groups, bias in CONVS:
    params = {"x": randn(n, c, h, w), "w": randn(f, c // groups, kh, kw)}
    if bias:
        params["b"] = randn(f)
    r = [n, f, conv_out(h, kh, strides[0], padding[0], padding[2], dilations[0]),
         conv_out(w, kw, strides[1], padding[1], padding[3], dilations[1])]
    case("conv2d_" + name,
         "%%r = dpc.conv2d %s {strides = array<i64: %d, %d>, padding = array<i64: "
         "%d, %d, %d, %d>, dilations = array<i64: %d, %d>, groups = %d : i64} : (%s) -> %s"
         % (", ".join("%" + p for p in params), *strides, *padding, *dilations, groups,
            ", ".join(ty_of(a) for a in params.values()), ty(r)),
         params, outputs={"r": r})


def conv_transpose_out(size, k, stride, pad_begin, pad_end, dilation, output_padding):
    return (size - 1) * stride - pad_begin - pad_end + dilation * (k - 1) + output_padding + 1


CONV_TRANSPOSES = [
    # (name, N, C, H, W, F / groups, KH, KW, strides, padding, dilations,
    #  output_padding, groups, bias)
    ("small", 1, 2, 2, 2, 2, 2, 2, [1, 1], [0, 0, 0, 0], [1, 1], [0, 0], 1, False),
    ("grouped_bias", 1, 4, 4, 4, 3, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], [1, 1], 2, True),
    ("dilated", 2, 3, 4, 5, 2, 2, 3, [1, 2], [0, 1, 0, 1], [2, 1], [0, 0], 1, False),
    ("stride3_output_padding", 1, 2, 3, 3, 2, 2, 2, [3, 3], [1, 0, 0, 1], [1, 1], [2, 1], 1,
     True),
    # Output padding of a stride or more (ONNX's output_shape past what the
    # input reaches; PyTorch refuses it): rows no input lands on, after the
    # end padding's rows are given back.
    ("output_padding_past_stride", 1, 2, 3, 3, 2, 2, 2, [2, 1], [0, 0, 1, 0], [1, 1],
     [3, 2], 1, True),
]
for (name, n, c, h, w, fg, kh, kw, strides, padding, dilations, output_padding, groups,
     bias) in CONV_TRANSPOSES:
    params = {"x": randn(n, c, h, w), "w": randn(c, fg, kh, kw)}
    if bias:
        params["b"] = randn(fg * groups)
    r = [n, fg * groups,
         conv_transpose_out(h, kh, strides[0], padding[0], padding[2], dilations[0],
                            output_padding[0]),
         conv_transpose_out(w, kw, strides[1], padding[1], padding[3], dilations[1],
                            output_padding[1])]
    case("conv_transpose2d_" + name,
         "%%r = dpc.conv_transpose2d %s {strides = array<i64: %d, %d>, padding = array<i64: "
         "%d, %d, %d, %d>, dilations = array<i64: %d, %d>, output_padding = array<i64: %d, %d>, "
         "groups = %d : i64} : (%s) -> %s"
         % (", ".join("%" + p for p in params), *strides, *padding, *dilations,
            *output_padding, groups, ", ".join(ty_of(a) for a in params.values()), ty(r)),
         params, outputs={"r": r})

# Resize: nearest repeats elements, linear blends neighbours; upsampling and
# downsampling, on NCHW as ONNX exports it.
for mode, coordinate, nearest, shape, scales, out in (
        ("nearest", "asymmetric", "floor", [1, 2, 3, 4], [1.0, 1.0, 2.0, 2.0], [1, 2, 6, 8]),
        ("nearest", "half_pixel", "round_prefer_ceil", [1, 2, 6, 4], [1.0, 1.0, 0.5, 1.5],
         [1, 2, 3, 6]),
        ("linear", "pytorch_half_pixel", "floor", [1, 2, 3, 4], [1.0, 1.0, 2.0, 2.0],
         [1, 2, 6, 8]),
        ("linear", "align_corners", "floor", [2, 1, 5, 3], [1.0, 1.0, 0.6, 2.0],
         [2, 1, 3, 6])):
    params = {"x": randn(*shape)}
    case("resize_%s_%s" % (mode, coordinate),
         "%%r = dpc.resize %%x {scales = array<f64: %s>, mode = \"%s\", coordinate_mode = "
         "\"%s\", nearest_mode = \"%s\"} : %s -> %s"
         % (", ".join(map(str, scales)), mode, coordinate, nearest, ty(shape), ty(out)),
         params, outputs={"r": out})

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
    ("small", 3, 3, [2, 2], [1, 1], [0, 0, 0, 0], [1, 1], False, False),
    ("k3s2p1", 7, 7, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], False, False),
    ("k2s2", 6, 6, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], False, False),
    ("ceil", 7, 7, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], True, False),
    ("ceil_pad", 7, 6, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, False),
    ("ceil_pad_count", 7, 6, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True, True),
    ("k3s1p1_count", 5, 5, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], False, True),
    ("rect", 6, 9, [2, 3], [1, 2], [1, 0, 1, 0], [1, 1], False, False),
    ("asymmetric", 6, 7, [3, 3], [2, 2], [0, 1, 2, 2], [1, 1], False, False),
    ("asymmetric_count", 6, 7, [3, 3], [2, 2], [0, 1, 2, 2], [1, 1], False, True),
    ("dilation2", 7, 7, [3, 3], [1, 1], [1, 1, 1, 1], [2, 2], False, False),
    ("dilation2_ceil", 10, 9, [2, 2], [3, 3], [1, 1, 1, 1], [2, 2], True, False),
]
for name, h, w, kernel, strides, padding, dilations, ceil, count in POOLS:
    shape = [2, 2, h, w]
    r = [2, 2, pool_out(h, kernel[0], strides[0], padding[0], padding[2], dilations[0], ceil),
         pool_out(w, kernel[1], strides[1], padding[1], padding[3], dilations[1], ceil)]
    attrs = ("kernel_shape = array<i64: %d, %d>, strides = array<i64: %d, %d>, "
             "padding = array<i64: %d, %d, %d, %d>, dilations = array<i64: %d, %d>"
             % (*kernel, *strides, *padding, *dilations)) + \
            (", ceil_mode" if ceil else "") + (", count_include_pad" if count else "")
    ops = ["avg_pool2d"] if count else ["max_pool2d", "avg_pool2d"]
    for op in ops:
        case("%s_%s" % (op, name),
             "%%r = dpc.%s %%x {%s} : %s -> %s" % (op, attrs, ty(shape), ty(r)),
             {"x": distinct(*shape) if op == "max_pool2d" else randn(*shape)},
             outputs={"r": r})

#===------------------------------------------------------------------------===#
# Reductions, softmax, normalizations
#===------------------------------------------------------------------------===#

for op in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min"):
    for dims, keep in (([1], False), ([0, 2], True), ([], False), ([0, 1, 2], False),
                       ([2], True), ([0, 1, 2], True)):
        x = distinct(3, 4, 5) if op in ("reduce_max", "reduce_min") else randn(3, 4, 5)
        r = [1 if d in dims else s for d, s in enumerate(x.shape)] if keep else \
            [s for d, s in enumerate(x.shape) if d not in dims]
        case("%s_%s%s" % (op, "".join(map(str, dims)) or "none", "_keep" if keep else ""),
             "%%r = dpc.%s %%x [%s]%s : %s -> %s"
             % (op, ", ".join(map(str, dims)), " keep_dims" if keep else "", ty_of(x), ty(r)),
             {"x": x}, outputs={"r": r})

for op in ("softmax", "log_softmax"):
    for axis in (0, 1, 2):
        x = randn(2, 3, 4) * 2
        case("%s_axis%d" % (op, axis),
             "%%r = dpc.%s %%x {axis = %d : i64} : tensor<2x3x4xf64>" % (op, axis),
             {"x": x}, outputs={"r": [2, 3, 4]})

for axis, bias in ((2, True), (1, False), (0, True), (1, True)):
    x = randn(2, 3, 4) * 3 + 1
    params = {"x": x, "g": randn(*x.shape[axis:])}
    if bias:
        params["b"] = randn(*x.shape[axis:])
    case("layer_norm_axis%d%s" % (axis, "_bias" if bias else ""),
         "%%r = dpc.layer_norm %s {axis = %d : i64, epsilon = 1.0e-5 : f32} : %s"
         % (", ".join("%" + p for p in params), axis,
            ", ".join(ty_of(a) for a in params.values())),
         params, outputs={"r": x.shape})

# The running statistics are state: inputs, and the new ones are not weighed.
# The batch statistics are weighed too where named (in training they
# depend on x).
for name, shape, training, stats in (
        ("train_nchw", (3, 2, 3, 2), True, False), ("train_nc", (5, 3), True, False),
        ("train_ncl", (2, 3, 4), True, False), ("eval_nchw", (2, 3, 2, 2), False, False),
        ("train_nchw_statistics", (3, 2, 3, 2), True, True)):
    c = shape[1]
    outputs = {"y": shape, "bm": [c], "bv": [c]} if stats else {"y": shape}
    case("batch_norm_" + name,
         "%%y, %%nm, %%nv, %%bm, %%bv = dpc.batch_norm %%x, %%g, %%b, %%m, %%v "
         "{epsilon = 1.0e-5 : f32, momentum = 0.9 : f32%s} : %s, %s"
         % (", training" if training else "", ty(shape), ty([c])),
         {"x": randn(*shape) * 2 + 0.5, "g": randn(c), "b": randn(c)},
         {"m": randn(c), "v": uniform(0.5, 2, c)}, outputs=outputs)

#===------------------------------------------------------------------------===#
# Data movement
#===------------------------------------------------------------------------===#

case("reshape", "%r = dpc.reshape %x : tensor<4x6xf64> -> tensor<2x3x4xf64>",
     {"x": randn(4, 6)}, outputs={"r": [2, 3, 4]})
case("reshape_to_scalar", "%r = dpc.reshape %x : tensor<1x1xf64> -> tensor<f64>",
     {"x": randn(1, 1)}, outputs={"r": []})

for src, dst in (([4, 1], [2, 4, 3]), ([], [2, 2]), ([3], [2, 3]), ([2, 1, 3], [2, 4, 3])):
    x = randn(*src)
    case("broadcast_to_%s_%s" % (shape_name(src), shape_name(dst)),
         "%%r = dpc.broadcast_to %%x : %s -> %s" % (ty_of(x), ty(dst)),
         {"x": x}, outputs={"r": dst})

for perm in ([1, 0, 2], [2, 0, 1], [1, 2, 0], [0, 1, 2]):
    x = randn(2, 3, 4)
    r = [x.shape[p] for p in perm]
    case("transpose_" + "".join(map(str, perm)),
         "%%r = dpc.transpose %%x [%s] : tensor<2x3x4xf64> -> %s"
         % (", ".join(map(str, perm)), ty(r)),
         {"x": x}, outputs={"r": r})

for axis, shapes in ((0, ([2, 3], [1, 3], [3, 3])), (1, ([2, 3], [2, 1], [2, 2]))):
    params = {name: randn(*s) for name, s in zip("abc", shapes)}
    r = list(shapes[0])
    r[axis] = sum(s[axis] for s in shapes)
    case("concat_axis%d" % axis,
         "%%r = dpc.concat %%a, %%b, %%c {axis = %d : i64} : (%s) -> %s"
         % (axis, ", ".join(ty_of(a) for a in params.values()), ty(r)),
         params, outputs={"r": r})

case("slice_strided",
     "%r = dpc.slice %x {start = array<i64: 1, 0, 2>, limit = array<i64: 5, 7, 3>, "
     "stride = array<i64: 2, 3, 1>} : tensor<5x7x3xf64> -> tensor<2x3x1xf64>",
     {"x": randn(5, 7, 3)}, outputs={"r": [2, 3, 1]})
case("slice_inner",
     "%r = dpc.slice %x {start = array<i64: 1, 1>, limit = array<i64: 3, 5>, "
     "stride = array<i64: 1, 3>} : tensor<4x6xf64> -> tensor<2x2xf64>",
     {"x": randn(4, 6)}, outputs={"r": [2, 2]})

SPLIT = ("%a, %b, %c = dpc.split %x {axis = 1 : i64} : tensor<4x6xf64> -> tensor<4x1xf64>, "
         "tensor<4x2xf64>, tensor<4x3xf64>")
case("split", SPLIT, {"x": randn(4, 6)}, outputs={"a": [4, 1], "b": [4, 2], "c": [4, 3]})
# A piece the loss does not read gets a zero gradient.
case("split_unused_piece", SPLIT, {"x": randn(4, 6)}, outputs={"a": [4, 1], "c": [4, 3]})

case("gather_repeated_negative",
     "%r = dpc.gather %x[%i] {axis = 0 : i64} : (tensor<5x4xf64>, tensor<2x3xi64>)"
     " -> tensor<2x3x4xf64>",
     {"x": randn(5, 4)}, {"i": np.array([[0, -1, 4], [-5, 2, 2]], np.int64)},
     outputs={"r": [2, 3, 4]})
case("gather_axis1_i32",
     "%r = dpc.gather %x[%i] {axis = 1 : i64} : (tensor<2x5x3xf64>, tensor<3xi32>)"
     " -> tensor<2x3x3xf64>",
     {"x": randn(2, 5, 3)}, {"i": np.array([4, -2, 4], np.int32)}, outputs={"r": [2, 3, 3]})
case("gather_scalar_index",
     "%r = dpc.gather %x[%i] {axis = 2 : i64} : (tensor<2x5x3xf64>, tensor<i64>)"
     " -> tensor<2x5xf64>",
     {"x": randn(2, 5, 3)}, {"i": np.array(2, np.int64)}, outputs={"r": [2, 5]})

case("pad_low_high_interior",
     "%r = dpc.pad %x {low = array<i64: 1, 0, 2>, high = array<i64: 0, 2, 1>, "
     "interior = array<i64: 0, 1, 2>, value = -1.5 : f64} : tensor<2x3x4xf64>"
     " -> tensor<3x7x13xf64>",
     {"x": randn(2, 3, 4)}, outputs={"r": [3, 7, 13]})
case("pad_interior_only",
     "%r = dpc.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 0>, "
     "interior = array<i64: 2, 1>, value = 0.0 : f64} : tensor<3x2xf64> -> tensor<7x3xf64>",
     {"x": randn(3, 2)}, outputs={"r": [7, 3]})

case("scatter_add_repeated_negative",
     "%r = dpc.scatter_add %u[%i] {axis = 0 : i64} : (tensor<2x5x4xf64>, tensor<2x5xi64>)"
     " -> tensor<10x4xf64>",
     {"u": randn(2, 5, 4)}, {"i": np.array([[0, 3, 3, -1, 9], [2, 0, 5, 5, 5]], np.int64)},
     outputs={"r": [10, 4]})
case("scatter_add_axis1",
     "%r = dpc.scatter_add %u[%i] {axis = 1 : i64} : (tensor<2x3x2xf64>, tensor<3xi32>)"
     " -> tensor<2x4x2xf64>",
     {"u": randn(2, 3, 2)}, {"i": np.array([1, -1, 1], np.int32)}, outputs={"r": [2, 4, 2]})

case("gather_elements_repeated_negative",
     "%r = dpc.gather_elements %x[%i] {axis = 1 : i64} : (tensor<3x4xf64>, tensor<2x5xi64>)"
     " -> tensor<2x5xf64>",
     {"x": randn(3, 4)}, {"i": np.array([[0, -1, 3, 3, 1], [2, 2, -4, 0, 1]], np.int64)},
     outputs={"r": [2, 5]})
case("scatter_add_elements_axis0",
     "%r = dpc.scatter_add_elements %u[%i] {axis = 0 : i64} : (tensor<2x3xf64>, tensor<2x3xi32>)"
     " -> tensor<4x3xf64>",
     {"u": randn(2, 3)}, {"i": np.array([[3, 0, -1], [3, 1, 2]], np.int32)},
     outputs={"r": [4, 3]})

#===------------------------------------------------------------------------===#
# Recurrent layers
#===------------------------------------------------------------------------===#

# T=3, B=2, I=3, H=2; the lengths end one entry early, so steps past a
# sequence's end take no gradient and its final state is an earlier one.
LENGTHS = {"n": np.array([3, 2], np.int64)}


def recurrent_case(id, op, gates, states, attrs="", lengths=False):
    names = ["h0", "c0"][:states]
    operands = ", ".join(["%x", "%w", "%r", "%b"] + ["%" + n for n in names])
    types = [ty([3, 2, 3]), ty([gates * 2, 3]), ty([gates * 2, 2]), ty([gates * 4])]
    types += [ty([2, 2])] * states
    if lengths:
        operands += " lengths %n"
        types.append(ty([2], "i64"))
    results = ["%y", "%hT", "%cT"][:1 + states]
    result_types = [ty([3, 2, 2])] + [ty([2, 2])] * states
    body = "%s = dpc.%s %s %s : (%s) -> (%s)" % (
        ", ".join(results), op, operands, attrs, ", ".join(types), ", ".join(result_types))
    params = {"x": randn(3, 2, 3), "w": randn(gates * 2, 3), "r": randn(gates * 2, 2),
              "b": randn(gates * 4)}
    params.update({n: randn(2, 2) for n in names})
    outputs = {"y": [3, 2, 2], "hT": [2, 2], "cT": [2, 2]}
    case(id, body, params, LENGTHS if lengths else None,
         outputs={k: outputs[k] for k in ["y", "hT", "cT"][:1 + states]})


recurrent_case("lstm", "lstm", 4, 2)
recurrent_case("lstm_reverse_lengths", "lstm", 4, 2, "{reverse}", lengths=True)
recurrent_case("gru", "gru", 3, 1)
recurrent_case("gru_linear_before_reset", "gru", 3, 1, "{linear_before_reset}")
recurrent_case("gru_reverse_lengths_linear_before_reset", "gru", 3, 1,
               "{linear_before_reset, reverse}", lengths=True)

#===------------------------------------------------------------------------===#
# Losses
#===------------------------------------------------------------------------===#

LOSSES = [
    # (name, input shape, label dtype, ignore_index, ignored labels, reductions)
    ("basic", (6, 5), np.int64, -100, 0, ("mean", "sum", "none")),
    ("ignored", (6, 5), np.int64, -100, 2, ("mean", "none")),
    ("ignore_class_i32", (6, 5), np.int32, 1, 0, ("mean", "sum")),
    ("spatial", (2, 4, 3, 2), np.int64, -1, 3, ("mean", "none")),
]
for name, shape, label_dtype, ignore, n_ignored, reductions in LOSSES:
    label_shape = (shape[0],) + shape[2:]
    labels = ints(0, shape[1], *label_shape, dtype=label_dtype)
    flat = labels.reshape(-1)
    flat[rng.choice(flat.size, n_ignored, replace=False)] = ignore
    for op in ("softmax_cross_entropy", "nll_loss"):
        for reduction in reductions:
            r = list(label_shape) if reduction == "none" else []
            case("%s_%s_%s" % (op, name, reduction),
                 "%%r = dpc.%s %%x, %%y %s {ignore_index = %d : i64} : (%s, %s) -> %s"
                 % (op, reduction, ignore, ty(shape), ty_of(labels), ty(r)),
                 {"x": randn(*shape) * 2}, {"y": labels}, outputs={"r": r})

#===------------------------------------------------------------------------===#
# The harness
#===------------------------------------------------------------------------===#


def _forward(c):
    """@forward of `c`: its op, then the weighted loss."""
    arguments = ['%%%s: %s {dpc.param = "%s"}' % (n, ty_of(a), n) for n, a in c.params.items()]
    arguments += ['%%%s: %s {dpc.input = "%s"}' % (n, ty_of(a), n)
                  for n, a in {**c.inputs, **c.cotangents}.items()]
    lines = c.body.splitlines()
    terms = []
    for name, shape in c.outputs.items():
        t = ty(shape)
        if shape:
            lines.append("%%wt_%s = dpc.mul %%%s, %%ct_%s : (%s, %s) -> %s"
                         % (name, name, name, t, t, t))
            lines.append("%%ls_%s = dpc.reduce_sum %%wt_%s [%s] : %s -> tensor<f64>"
                         % (name, name, ", ".join(map(str, range(len(shape)))), t))
        else:
            lines.append("%%ls_%s = dpc.mul %%%s, %%ct_%s : (tensor<f64>, tensor<f64>)"
                         " -> tensor<f64>" % (name, name, name))
        terms.append("%ls_" + name)
    loss = terms[0]
    for i, term in enumerate(terms[1:]):
        lines.append("%%sum%d = dpc.add %s, %s : (tensor<f64>, tensor<f64>) -> tensor<f64>"
                     % (i, loss, term))
        loss = "%%sum%d" % i
    return ('func.func @forward(%s) -> (tensor<f64> {dpc.output = "loss"}) {\n%s\n'
            "  return %s : tensor<f64>\n}\n"
            % (", ".join(arguments), "\n".join("  " + line for line in lines), loss))


def _check(c, points):
    """@check: the gradients of @forward_backward as results `grad_<param>`,
    and the loss at each of `points` ({param: value}) as result `fK`."""
    fixed = {**c.inputs, **c.cotangents}
    at_points = {"p%d_%s" % (k, n): a for k, point in enumerate(points) for n, a in point.items()}
    arguments = ['%%%s: %s {dpc.input = "%s"}' % (n, ty_of(a), n)
                 for n, a in {**c.params, **fixed, **at_points}.items()]
    types = ", ".join(ty_of(a) for a in {**c.params, **fixed}.values())
    grad_types = [ty_of(a) for a in c.params.values()]
    lines = ["%%bw:%d = func.call @forward_backward(%s) : (%s) -> (tensor<f64>, %s)"
             % (1 + len(c.params), ", ".join("%" + n for n in {**c.params, **fixed}), types,
                ", ".join(grad_types))]
    lines += ["%%f%d = func.call @forward(%s) : (%s) -> tensor<f64>"
              % (k, ", ".join(["%%p%d_%s" % (k, n) for n in c.params] +
                              ["%" + n for n in fixed]), types)
              for k in range(len(points))]
    results = [("%%bw#%d" % (i + 1), t, "grad_" + n)
               for i, (n, t) in enumerate(zip(c.params, grad_types))]
    results += [("%%f%d" % k, "tensor<f64>", "f%d" % k) for k in range(len(points))]
    text = "func.func @check(%s) -> (%s) {\n%s\n  return %s : %s\n}\n" % (
        ", ".join(arguments),
        ", ".join('%s {dpc.output = "%s"}' % (t, name) for _, t, name in results),
        "\n".join("  " + line for line in lines), ", ".join(v for v, _, _ in results),
        ", ".join(t for _, t, _ in results))
    return text, {**c.params, **fixed, **at_points}


def _checks(c):
    """[(param, directions)]: the random ones, and one-hot ones for small cases."""
    checks = list(c.directions.items())
    if sum(p.size for p in c.params.values()) <= FULL_CHECK:
        for name, p in c.params.items():
            checks.append((name, list(np.eye(p.size).reshape((p.size,) + p.shape))))
    return checks


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gradient(case, tmp_path):
    checks = _checks(case)
    points = []
    for name, vs in checks:
        for v in vs:
            for sign in (1, -1):
                points.append({n: p + sign * EPS * v if n == name else p
                               for n, p in case.params.items()})
    source = tmp_path / "forward.mlir"
    source.write_text(_forward(case))
    module = tools.run("dpc-opt", [str(source), "-dpc-differentiate"]).stdout
    check, inputs = _check(case, points)
    # @check goes inside the module, before its closing brace.
    end = module.rindex("}")
    path = tmp_path / "check.mlir"
    path.write_text(module[:end] + check + module[end:])
    results = interpret(str(path), inputs, function="check", precision="fp64")

    k = 0
    for name, vs in checks:
        grad = results["grad_" + name]
        assert grad.shape == case.params[name].shape, name
        analytic = np.array([np.sum(grad * v) for v in vs])
        numeric = np.array([(results["f%d" % (k + 2 * i)] - results["f%d" % (k + 2 * i + 1)])
                            / (2 * EPS) for i in range(len(vs))])
        k += 2 * len(vs)
        np.testing.assert_allclose(analytic, numeric, rtol=RTOL, atol=ATOL,
                                   err_msg="d loss / d %s" % name)


def _tablegen_args(text, start):
    """The top-level, comma-separated arguments of the <...> opening at `start`."""
    args, depth, current, i, quoted = [], 0, "", start + 1, False
    while True:
        ch = text[i]
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<[(":
            depth += 1
        elif not quoted and ch in ">])":
            if depth == 0:
                args.append(current.strip())
                return args, i
            depth -= 1
        elif not quoted and ch == "," and depth == 0:
            args.append(current.strip())
            current, i = "", i + 1
            continue
        current += ch
        i += 1


def differentiable_ops(td_text):
    """Mnemonics of the ops whose traits, with every class's template
    arguments bound, include Dpc_Differentiable."""
    classes, defs = {}, []
    for m in re.finditer(r"^(class|def)\s+(\w+)\s*(<)?", td_text, re.M):
        params, end = [], m.end()
        if m.group(3):
            raw, close = _tablegen_args(td_text, m.end() - 1)
            params = [re.match(r"(.*?)(\w+)\s*(?:=\s*(.*))?$", p, re.S).group(2, 3)
                      for p in raw]
            end = close + 1
        parent = re.match(r"\s*:\s*(\w+)\s*<", td_text[end:])
        if not parent:
            continue
        args, _ = _tablegen_args(td_text, end + parent.end() - 1)
        entry = (params, parent.group(1), args)
        if m.group(1) == "class":
            classes[m.group(2)] = entry
        else:
            defs.append(entry)

    def resolve(parent, args):
        """(mnemonic, traits) of Dpc_Op<...> reached from parent<args>."""
        if parent == "Dpc_Op":
            return args[0].strip('"'), args[1] if len(args) > 1 else ""
        if parent not in classes:
            return None
        params, grandparent, parent_args = classes[parent]
        bound = {name: (args[i] if i < len(args) else default)
                 for i, (name, default) in enumerate(params)}
        substituted = [re.sub(r"\b\w+\b", lambda w: bound.get(w.group(0)) or w.group(0), a)
                       for a in parent_args]
        return resolve(grandparent, substituted)

    ops = set()
    for _, parent, args in defs:
        resolved = resolve(parent, args)
        if resolved and re.search(r"\bDpc_Differentiable\b", resolved[1]):
            ops.add(resolved[0])
    return ops


def test_every_differentiable_op_has_a_case():
    """Each op of DpcOps.td with a gradient rule appears in some case."""
    td = os.path.join(os.path.dirname(__file__), "..", "..", "include", "dpc", "Dialect",
                      "Dpc", "IR", "DpcOps.td")
    ops = differentiable_ops(open(td).read())
    # The parser sees through op classes and their opt-outs.
    assert {"neg", "add", "max_pool2d", "reduce_max", "softmax", "nll_loss"} <= ops
    assert not {"not", "and", "compare", "constant", "max_pool2d_grad"} & ops
    used = set()
    for c in CASES:
        used |= set(re.findall(r"dpc\.(\w+)", c.body))
    missing = sorted(ops - used)
    assert not missing, "differentiable ops without a gradient case: %s" % missing
