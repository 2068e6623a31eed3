"""What PyTorch's autograd keeps for the backward pass of one training step.

The reference for dpc's stored-activation model: every tensor autograd saves
during the forward pass (torch.autograd.graph.saved_tensors_hooks), counted
once per storage, leaving out the storages of parameters, buffers and the
batch, which are held whether or not anything is saved.

Usage:
  python3 -m dpc.saved_tensors NAME     the bundled model NAME, as built
"""

import argparse
import sys
from typing import Dict, Iterable

import torch


def _storage(tensor: torch.Tensor):
    # torch 1.13 (Debian 12): storage(), a typed view of the whole buffer.
    storage = tensor.storage()
    return storage.data_ptr(), storage.nbytes()


def saved_activation_bytes(model: torch.nn.Module,
                           inputs: Iterable[torch.Tensor]) -> Dict[str, int]:
    """Bytes autograd saves in one forward of `model` (training mode) on
    `inputs`: {"bytes": total, "tensors": distinct storages}."""
    inputs = list(inputs)
    held = {_storage(t)[0] for t in list(model.parameters()) +
            list(model.buffers()) + inputs}
    saved = {}

    def pack(tensor):
        ptr, nbytes = _storage(tensor)
        if ptr not in held and nbytes:
            saved[ptr] = max(saved.get(ptr, 0), nbytes)
        return tensor

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(*inputs)
    return {"bytes": sum(saved.values()), "tensors": len(saved)}


def main(argv=None) -> int:
    from . import models

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", choices=sorted(models.MODELS))
    args = p.parse_args(argv)
    spec = models.build(args.name)
    result = saved_activation_bytes(spec.model, spec.inputs.values())
    print("%s: %d bytes in %d tensors" % (args.name, result["bytes"],
                                         result["tensors"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
