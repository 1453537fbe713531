"""Graph IR workloads of issue 6: running a traced graph against running its ops eagerly.

A 20-op elementwise chain with two reductions on small tensors (8x5), where per-op
overhead is everything: eagerly (each op through the torch-semantics layer and `bind`), as
a region (``make_graph(f)(...)`` called: one ``graph_call`` whose generated runner calls
the primitives' impls directly, Note [Fast runner]) and inlined (``Graph.inline``, binding
each node). Target (checked in ``run.py``): the region at most 0.6x eager's time.
``grad`` and ``vmap`` of the chain, eagerly and of the region, show what the region's rules
give (one cached transformed graph per call, run by the same runner). Random draws (Note
[Random state as a value]): an eager draw samples the live generator; a region or a
transform moves the generator's state in and out as a value, which these rows price.
"""
from __future__ import annotations

import numpy as np

from .common import add, module

CHAIN_NAME = "20-op chain 8x5, eager ops"
REGION_NAME = "  same, make_graph region (fast runner)"
INLINE_NAME = "  same, Graph.inline (a bind per node)"
SHAPE = (8, 5)


def chain(x, y):
    for _ in range(4):
        x = (x * y + 1.5).sin()
        y = (y - x).abs().sqrt()
    return x.sum(), y.mean(dim=0)


def _chain_numpy(x, y):
    for _ in range(4):
        x = np.sin(x * y + np.float32(1.5))
        y = np.sqrt(np.abs(y - x))
    return x.sum(), y.mean(axis=0)


def _inputs(lib):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2)]
    return arrays if lib == "numpy" else [module(lib).tensor(a) for a in arrays]


def _eager(lib):
    x, y = _inputs(lib)
    return lambda: chain(x, y)


def _graph(how):
    def factory():
        from numtorch.func import make_graph
        x, y = _inputs("numtorch")
        graph = make_graph(chain)(x, y)
        run = graph if how == "region" else graph.inline
        return lambda: run(x, y)
    return factory


def _transformed(lib, how, region):
    m, func = module(lib), module(f"{lib}.func")
    x, y = _inputs(lib)
    fn = func.make_graph(chain)(x, y) if region else chain

    def loss(a, b):
        return fn(a, b)[0]
    if how == "grad":
        g = func.grad(loss)
        return lambda: g(x, y)
    xs = m.stack([x] * 16)
    v = func.vmap(loss, in_dims=(0, None))
    return lambda: v(xs, y)


def _draws(lib, what):
    m, F = module(lib), module(f"{lib}.nn.functional")
    x = m.ones(*SHAPE)
    if what == "randn":
        return lambda: m.randn(10)
    if what == "dropout":
        return lambda: F.dropout(x, 0.5)
    func = module(f"{lib}.func")
    if what == "region":
        g = func.make_graph(lambda x: F.dropout(x, 0.5))(x)
        return lambda: g(x)
    v = func.vmap(lambda r: F.dropout(r, 0.5), randomness="different")
    return lambda: v(x)


def register():
    add("randn(10), eager", "graph", numtorch=lambda: _draws("numtorch", "randn"),
        torch=lambda: _draws("torch", "randn"))
    add("dropout 8x5, eager", "graph", numtorch=lambda: _draws("numtorch", "dropout"),
        torch=lambda: _draws("torch", "dropout"))
    add("dropout 8x5, make_graph region (state in and out)", "graph",
        numtorch=lambda: _draws("numtorch", "region"))
    add("dropout 8x5 rows, vmap randomness='different'", "graph",
        numtorch=lambda: _draws("numtorch", "vmap"), torch=lambda: _draws("torch", "vmap"))
    add(CHAIN_NAME, "graph", numtorch=lambda: _eager("numtorch"), torch=lambda: _eager("torch"),
        numpy=lambda: (lambda x, y: lambda: _chain_numpy(x, y))(*_inputs("numpy")))
    add(REGION_NAME, "graph", note="target: <= 0.6x numtorch eager (issue 6)",
        numtorch=_graph("region"))
    add(INLINE_NAME, "graph", numtorch=_graph("inline"))
    for how in ("grad", "vmap"):
        label = "grad of the chain" if how == "grad" else "vmap of the chain (16 examples)"
        add(f"{label}, eager ops", "graph",
            numtorch=lambda how=how: _transformed("numtorch", how, False))
        add(f"  same, of the region ({how})", "graph",
            numtorch=lambda how=how: _transformed("numtorch", how, True))
