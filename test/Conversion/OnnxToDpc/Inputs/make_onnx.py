#!/usr/bin/env python3
"""Writes the small ONNX models of the importer's lit tests.

usage: make_onnx.py CASE OUT.onnx

Each case is built with onnx.helper, so the tests need no binary files.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def tensor(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def weight(name, shape, seed=0):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def linear():
    """y = x @ w + b with a symbolic batch dimension."""
    return model([helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
                  helper.make_node("Add", ["xw", "b"], ["y"], name="add")],
                 [tensor("x", ["N", 16])], [tensor("y", ["N", 8])],
                 [weight("w", [16, 8]), weight("b", [8], 1)])


def unsupported():
    m = model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
               helper.make_node("NonMaxSuppression", ["r", "scores"], ["up"], name="nms_1"),
               helper.make_node("Det", ["up"], ["y"], name="det"),
               helper.make_node("FusedGelu", ["y"], ["z"], name="gelu", domain="com.example")],
              [tensor("x", [1, 2, 4, 4])], [tensor("z", None)],
              [numpy_helper.from_array(np.ones([1, 1, 4], np.float32), "scores")])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


def folded_shapes():
    """Shape/Gather/Unsqueeze/Concat computing the target of a Reshape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Constant", [], ["zero"], name="c0",
                         value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="gather"),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"], name="unsqueeze"),
        helper.make_node("Concat", ["batch1", "minus1"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    return model(nodes, [tensor("x", [2, 3, 4])], [tensor("y", [2, 12])],
                 [numpy_helper.from_array(np.array([0], np.int64), "axes"),
                  numpy_helper.from_array(np.array([-1], np.int64), "minus1")])


def constant_weights():
    """Weights as Constant nodes (as PaddleOCR's exporter writes them), opset 9."""
    w = numpy_helper.from_array(np.ones([4, 3], np.float32), "w_value")
    eps = numpy_helper.from_array(np.array(0.5, np.float32), "eps_value")
    nodes = [helper.make_node("Constant", [], ["w"], name="cw", value=w),
             helper.make_node("Constant", [], ["eps"], name="ce", value=eps),
             helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
             helper.make_node("Add", ["xw", "eps"], ["y"], name="add")]
    return model(nodes, [tensor("x", [2, 4])], [tensor("y", [2, 3])], opset=9)


def batchnorm_training():
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                              ["y", "m_out", "v_out"], name="bn",
                              training_mode=1, momentum=0.9, epsilon=1e-5),
             helper.make_node("Dropout", ["y", "ratio", "train"], ["z"], name="drop")]
    return model(nodes, [tensor("x", [2, 3, 4, 4])], [tensor("z", [2, 3, 4, 4])],
                 [weight("s", [3]), weight("b", [3], 1),
                  numpy_helper.from_array(np.zeros(3, np.float32), "m"),
                  numpy_helper.from_array(np.ones(3, np.float32), "v"),
                  numpy_helper.from_array(np.array(0.25, np.float32), "ratio"),
                  numpy_helper.from_array(np.array(True), "train")])


def loss():
    nodes = [helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
                              name="sce", reduction="mean", ignore_index=-100)]
    return model(nodes, [tensor("logits", [4, 10]), tensor("labels", [4], TensorProto.INT64)],
                 [tensor("loss", [])])


def string_input():
    return model([helper.make_node("Identity", ["s"], ["t"], name="id")],
                 [tensor("s", [2], TensorProto.STRING)], [tensor("t", [2], TensorProto.STRING)])


def gather_nd():
    """GatherND with literal indices and with indices given at run time."""
    indices = numpy_helper.from_array(np.array([[0, 1], [1, -1]], np.int64), "fixed")
    return model([helper.make_node("GatherND", ["x", "fixed"], ["y"], name="fixed_nd"),
                  helper.make_node("GatherND", ["x", "idx"], ["z"], name="runtime_nd")],
                 [tensor("x", [2, 3, 4]), tensor("idx", [5, 2], TensorProto.INT64)],
                 [tensor("y", [2, 4]), tensor("z", [5, 4])], [indices])


def scatter_nd():
    """ScatterND overwriting two rows of a tensor computed by the model."""
    indices = numpy_helper.from_array(np.array([[3], [0]], np.int64), "rows")
    return model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                  helper.make_node("ScatterND", ["r", "rows", "u"], ["y"], name="put")],
                 [tensor("x", [4, 2]), tensor("u", [2, 2])], [tensor("y", [4, 2])],
                 [indices])


def einsum():
    """Attention scores: b and h batch the product, d is contracted."""
    return model([helper.make_node("Einsum", ["q", "k"], ["s"], name="scores",
                                   equation="bqhd,bkhd->bhqk")],
                 [tensor("q", [2, 5, 3, 4]), tensor("k", [2, 6, 3, 4])],
                 [tensor("s", [2, 3, 5, 6])])


CASES = {
    "linear": linear,
    "unsupported": unsupported,
    "folded-shapes": folded_shapes,
    "constant-weights": constant_weights,
    "batchnorm-training": batchnorm_training,
    "loss": loss,
    "string-input": string_input,
    "gather-nd": gather_nd,
    "scatter-nd": scatter_nd,
    "einsum": einsum,
}


def main():
    case, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if case == "truncated":
        data = linear().SerializeToString()
        open(out, "wb").write(data[: len(data) // 2])
    elif case == "garbage":
        open(out, "wb").write(b"\xff\xfe this is not a protobuf \x00\x01" * 4)
    elif case in ("external-data", "missing-external-data"):
        m = linear()
        onnx.save(m, out, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(out) + ".data", size_threshold=0)
        if case == "missing-external-data":
            os.remove(out + ".data")
    else:
        onnx.save(CASES[case](), out)


if __name__ == "__main__":
    main()
