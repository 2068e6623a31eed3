"""Runs a training step under the reference interpreter, step after step.

    inputs, hyper = initial_inputs("step.mlir", "out/", "mlp")
    outputs, losses = train("step.mlir", inputs, hyper, steps=3)

feeds each step's updated parameters, state and optimizer state into the
next. The step may be a partitioned one (dpc-opt --partition): dpc-run then
runs one simulated rank per device of its mesh.
"""

import os
from typing import Dict, List, Sequence, Tuple

import numpy as np

from dpc import npy_name, tools
from dpc.interpreter import interpret


def initial_inputs(step_mlir: str, outdir: str, name: str,
                   seed: int = 0) -> Tuple[Dict[str, np.ndarray], Sequence[str]]:
    """Random parameters and state (N(0, 0.01)), zero optimizer state, and
    the batch `dpc.models.export` wrote for model `name` into `outdir`;
    with the names of @train_step's hyperparameters."""
    roles = tools.signature(open(step_mlir).read(), function="train_step")
    rng = np.random.default_rng(seed)
    inputs = {k: (0.1 * rng.standard_normal(s)).astype(np.float32)
              for role in ("param", "state") for k, s in roles[role].items()}
    inputs.update({k: np.zeros(s, np.float32) for k, s in roles["opt_state"].items()})
    for k in roles["input"]:
        inputs[k] = np.load(os.path.join(outdir, name + ".inputs", npy_name(k)))
    return inputs, list(roles["hyper"])


def hyperparameters(names: Sequence[str], step: int, lr: float = 0.01) -> Dict[str, np.ndarray]:
    values = {"lr": np.float32(lr), "step": np.float32(step), "seed": np.int64(0),
              "micro_batch": np.int64(0)}
    return {k: values[k] for k in names}


def train(step_mlir: str, inputs: Dict[str, np.ndarray], hyper: Sequence[str],
          steps: int = 3, precision: str = "fp32",
          lr: float = 0.01) -> Tuple[Dict[str, np.ndarray], List[float]]:
    """`steps` steps from `inputs`: the outputs of the last, and every loss."""
    state = dict(inputs)
    losses = []
    for step in range(1, steps + 1):
        state.update(hyperparameters(hyper, step, lr))
        out = interpret(step_mlir, state, function="train_step", precision=precision)
        losses.append(float(out["loss"]))
        state.update({k: v for k, v in out.items() if k in state})
    return out, losses


def main(argv=None) -> int:
    """python -m dpc.train STEP.mlir OUTDIR NAME [STEPS]: prints the losses."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    step_mlir, outdir, name = args[:3]
    steps = int(args[3]) if len(args) > 3 else 3
    inputs, hyper = initial_inputs(step_mlir, outdir, name)
    _, losses = train(step_mlir, inputs, hyper, steps)
    print(" ".join("%.7f" % loss for loss in losses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
