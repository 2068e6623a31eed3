"""dpc Python helpers: model exporters, reference runners and test harness.

MLIR Python bindings are not available, so this package drives the dpc tools
and external references (PyTorch, onnxruntime-node) rather than the MLIR API.
"""


def npy_name(tensor: str) -> str:
    """The .npy file name of a tensor in an input/output directory.

    Exporters put '/' in tensor names, so '%' and '/' are percent-escaped.
    """
    return tensor.replace("%", "%25").replace("/", "%2F") + ".npy"


def tensor_name(npy: str) -> str:
    """Inverse of npy_name."""
    return npy[:-len(".npy")].replace("%2F", "/").replace("%25", "%")
