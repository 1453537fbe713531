"""Saved activations of AOT autograd's partition, beside torch.compile's (issue #9).

When a compiled function is called with inputs that require grad, AOT autograd splits the
joint forward+backward graph into a forward that saves some activations and a backward
that reads them. These rows report the bytes of those saved activations (the primal
inputs, kept alive anyway, are not counted) for two training losses:

- the MLP 784-512-256-10 step of the other groups (batch 128, cross-entropy);
- a small CNN step (two Conv2d+ReLU+MaxPool2d blocks, then Linear; batch 64, 28x28).

Each row pair is the min-cut partition (numtorch: ``numtorch._aot.partition``, what
``compile`` runs; PyTorch: ``min_cut_rematerialization_partition``, what torch.compile's
default backend runs) and the partition that recomputes nothing (numtorch:
``partition(recompute=False)``; PyTorch: ``default_partition``). The cells are bytes, not
times; they are deterministic, so one measurement is the figure.
"""
from __future__ import annotations

import importlib

from .common import add, classification_batch, sequential_mlp

MLP, MLP_BATCH = (784, 512, 256, 10), 128
CNN_BATCH = 64


def _mlp(lib):
    return sequential_mlp(lib, MLP), classification_batch(MLP_BATCH)


def _cnn(lib):
    m = importlib.import_module(lib)
    nn = m.nn
    m.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(32 * 5 * 5, 10))
    x, y = classification_batch(CNN_BATCH, n_in=28 * 28)
    return net, (x.reshape(CNN_BATCH, 1, 28, 28), y)


def numtorch_saved_bytes(model_and_batch, recompute):
    """Bytes the forward of numtorch's partition saves for ``cross_entropy(model(x), y)``."""
    import numtorch
    from numtorch._aot.partition import joint_graph, partition
    from numtorch.func import functional_call, make_graph
    model, (x, y) = model_and_batch("numtorch")
    names = [n for n, _ in model.named_parameters()]

    def loss(*args):
        *ps, xb, yb = args
        out = functional_call(model, dict(zip(names, ps)), (xb,))
        return numtorch.nn.functional.cross_entropy(out, yb)

    params = [p.detach() for _, p in model.named_parameters()]
    g = make_graph(loss)(*params, numtorch.tensor(x), numtorch.tensor(y))
    region = g.closed()[0]
    n_consts, n_rng = len(g.consts), len(g.rng)
    needs = (False,) * n_consts + (True,) * len(params) + (False,) * (2 + n_rng)
    joint = joint_graph(region, needs)
    return partition(joint, len(region.inputs), 1, recompute=recompute).saved_bytes


def torch_saved_bytes(model_and_batch, recompute):
    """Bytes the forward of torch.compile's AOT autograd saves (inputs excluded), with the
    min-cut partition (``recompute``) or the default one."""
    import torch
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.partitioners import default_partition, min_cut_rematerialization_partition
    model, (x, y) = model_and_batch("torch")
    seen = {}

    def forward_compiler(gm, _):
        seen["forward"] = gm
        return _boxed(gm)

    def backward_compiler(gm, _):
        seen["backward"] = gm
        return _boxed(gm)

    fn = lambda x, y: torch.nn.functional.cross_entropy(model(x), y)  # noqa: E731
    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=forward_compiler, bw_compiler=backward_compiler,
                           partition_fn=min_cut_rematerialization_partition if recompute
                           else default_partition)
    torch.compile(fn, backend=backend)(torch.tensor(x), torch.tensor(y)).backward()
    torch._dynamo.reset()
    fw, bw = seen["forward"].graph, seen["backward"].graph
    outputs = list(fw.output_node().args[0])
    n_tangents = 1                                   # the scalar loss's cotangent
    n_saved = sum(1 for n in bw.nodes if n.op == "placeholder") - n_tangents
    inputs = {n for n in fw.nodes if n.op == "placeholder"}
    total = 0
    for node in outputs[len(outputs) - n_saved:]:
        value = node.meta.get("val") if hasattr(node, "meta") else None
        if node not in inputs and isinstance(value, torch.Tensor):
            total += value.numel() * value.element_size()
    return total


def _boxed(gm):
    from functorch.compile import make_boxed_func
    return make_boxed_func(gm.forward)


def register():
    """The saved-activation rows of the memory group (cells in bytes)."""
    for label, workload in (("MLP 784-512-256-10 step (b=128)", _mlp),
                            ("CNN 2 x conv+relu+pool, linear (b=64)", _cnn)):
        for kind, recompute in (("min-cut partition", True),
                                ("partition that recomputes nothing", False)):
            add(f"saved activations, {label}, {kind} (bytes)", "memory",
                note="cells are bytes the compiled forward saves for the backward",
                numtorch=lambda w=workload, r=recompute: ("bytes", lambda: numtorch_saved_bytes(w, r)),
                torch=lambda w=workload, r=recompute: ("bytes", lambda: torch_saved_bytes(w, r)))
