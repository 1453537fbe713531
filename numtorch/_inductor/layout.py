"""Layouts chosen at the graph level: the order a product computes its output in, and
transposes moved to the products that take them for free.

The C backend stores every value it materialises C-contiguous in its own shape, so the
layout of a value is decided by the graph: a value computed as ``transpose(a)`` is read
through a strided index (Note [Fusion by inlining], scheduler.py), and a transposed
operand of a product must first be written out in its transposed order. ``choose_layouts``
rewrites a graph, before scheduling, so that:

- a product whose only consumer transposes it is computed with its operands swapped when
  BLAS is faster that way (Note [Products in BLAS's faster orientation]);
- a transpose moves past the pointwise nodes that read it, so they compute in the
  untransposed layout, until a product takes it as dimension numbers (Note [Transposes
  sink to products]).

It computes the same values (eager's bits: the Notes say why); it does not schedule,
generate code or know any layout but C-contiguous. The runner applies it to graphs bound
for C (``config.layout_rewrites``); generated NumPy code takes transposes as views.
"""
from __future__ import annotations

import math

import numpy as np

from .._core import passes
from .._core.ir import Const, Node, Var
from . import config, gemm
from .simplify import MOVEMENT_RULES

# Note [Transposes sink to products]
# vmap moves batch dims with transposes, so a batched MLP (the compiled ensemble:
# ``vmap(functional_call)`` over 10 stacked models) computes its first layer as one product
# of shape (batch, models, hidden) and transposes it to (models, batch, hidden) before the
# bias and the ReLU. The kernel doing bias + ReLU then reads the product with stride
# ``models * hidden`` and writes the transposed copy that the second layer's batched
# product needs as its operand. But a pointwise node does the same arithmetic in any
# layout: ``f(transpose(a), transpose(b)) == transpose(f(a, b))`` element by element. So a
# pointwise node whose operands are transposes of the same permutation (or broadcasts
# and constants, which are re-indexed for free: a broadcast gets the permuted shape and
# dims, a constant a transpose that the kernel inlines) computes on the untransposed
# values, and its result is transposed instead. Repeated along a chain, the transpose
# reaches the chain's consumers. Only nodes whose value a product reads (through pointwise
# nodes) move it: elsewhere nothing would take the transpose, and a reduction of a
# transposed product (``(x.t() * y).sum(-1)``) would no longer be seen as a sum of
# products (Note [Sums of products], codegen.py). A ``dot_general`` takes it as dimension
# numbers: its contracting and batch dims are renamed, which is exact when the operand's
# free dims keep their order (the output's dims are then the same), and only when the
# backend still runs the product in its segment (``gemm.plan`` or ``gemm.blas_plan`` accepts the new
# dimension numbers: the product loops read any strides, and BLAS takes a transposed
# matrix as a flag). Any other consumer (a graph output, a reduction, an extern) reads the
# transpose as before, with the pointwise chain inlined at the transposed index: the same
# kernel as without the rewrite. Only transposes of materialised values move (a product's
# output, an input): a transpose of a broadcast or a constant costs no reads, and moving
# those could undo what the rule did (two rules fighting over one node).
# Bits: a pointwise node computes the same element from the same operand elements, and
# the product loops sum over k in the same order whatever the operands' strides (Note
# [Small products in C]): those do not change. A BLAS product that takes a transpose gets
# it as a transpose flag where it got a transposed copy, and OpenBLAS sums some shapes in
# another order under another flag (NT against NN: 15-25% of random shapes differ in the
# last bit); but the flag is the one ``np.matmul`` passes for eager's transposed view, so
# the result has eager's bits, which the copy did not promise. test_layouts.py compares
# with the compile without the rewrite (the loops) and with eager (BLAS) bit for bit.
#
# Note [Products in BLAS's faster orientation]
# The ensemble's first product is x (64, 784) times the stacked weights W (10, 128, 784)
# contracted on their last dims: one GEMM, ``x @ W.T`` (M = 64 rows, N = 1280 columns),
# whose output the graph transposes to (models, batch, hidden). Computing its transpose
# ``W @ x.T`` (M = 1280, N = 64) is the same call of NumPy's OpenBLAS with the operands
# swapped, and it is faster: at 1 thread, CPU time, medians, 1540 against 1904 us in one
# run and 1782 against 2122 in another (the flags are the same, row-major "NT", both
# ways; OpenBLAS's blocking favours the long side as rows). Over shapes x (M, K) times
# y (N, K).T (ratio swapped / as written): (64, 1280, 784) 0.84, (128, 512, 784) 0.81,
# (64, 128, 784) 0.87, (32, 512, 512) 0.67, (64, 4096, 512) 0.75; but (128, 256, 512)
# 1.07, (128, 128, 128) 1.00, (256, 1280, 784) 1.02, and (512, 64, 784) 1.10 (the same
# gain, read the other way round). So a product is swapped when (1) its only consumer is
# a transpose that puts a dim of the second operand first (the swapped output is then
# closer to what is read: its outer dim is the consumer's), (2) both operands are
# contracted on their last dim (the measured "NT" form) with no batch dims, (3) the first
# operand's rows are at most a quarter of the second's (N >= 4 M), (4) both orientations
# go to BLAS (neither is small enough for the product loops, Note [Small products in C]),
# and (5) the dtype is float32. The transpose left over (``W @ x.T`` is (models, hidden,
# batch)) then sinks to the next product (Note [Transposes sink to products]).
# Bits: OpenBLAS's sgemm gave the same bits both ways in every shape tried (1 and 2
# threads: 160 shapes of a grid with M from 2 to 128, N from 4 M to 4096, K from 64 to 784,
# and 500 random shapes with odd sizes), as it should: each element is one chain of fused
# multiply-adds over k, in blocks of k that do not depend on which operand is which, and
# fma(a, b, c) is fma(b, a, c). Its dgemm did not: about 20% of the same grid differed in
# the last bit (its edge kernels, at sizes like 33 or 700, sum in another order), so
# float64 products keep their orientation and eager's bits. This is what OpenBLAS does,
# not what it promises; test_layouts.py checks the float32 bits against ``np.matmul`` on
# shapes of both kinds at 1 and 2 threads, so a BLAS that sums otherwise is caught there.
SWAP_RATIO = 4       # N >= SWAP_RATIO * M (Note [Products in BLAS's faster orientation])


def choose_layouts(graph):
    """``graph`` with products in BLAS's faster orientation and transposes moved to the
    products that take them (Notes [Products in BLAS's faster orientation] and
    [Transposes sink to products]); the same values, the same bits."""
    readers = {}
    for n in graph.nodes:
        for v in n.ins:
            readers.setdefault(id(v), []).append(n)
    uses = {k: len(v) for k, v in readers.items()}       # readers, and the graph's outputs
    for o in graph.outputs:
        uses[id(o)] = uses.get(id(o), 0) + 1
    pointwise = {n.prim.name for n in graph.nodes if _pointwise(n)}
    feeds = set()           # pointwise values a product reads through pointwise nodes
    for n in reversed(graph.nodes):
        if _pointwise(n) and len(n.outs) == 1 and any(
                r.prim.name == "dot_general" or id(r.outs[0]) in feeds
                for r in readers.get(id(n.outs[0]), ())):
            feeds.add(id(n.outs[0]))

    def inheriting(rule):           # a replacement has its node's readers
        def replace(node, rw):
            out = rule(node, rw)
            if out is not None:
                uses[id(out)] = uses.get(id(node.outs[0]), 0)
            return out
        return replace

    rules = (passes.Rule("transpose", lambda node, rw: _swap(node, rw, uses)),
             passes.Rule("dot_general", inheriting(_absorb)),
             *(passes.Rule(name, inheriting(_sink), lambda node, rw: id(node.outs[0]) in feeds)
               for name in sorted(pointwise)),
             *MOVEMENT_RULES)
    return passes.dce(passes.cse(passes.rewrite(graph, rules)))


def _pointwise(node):
    return getattr(getattr(node.prim, "lower", None), "kind", None) == "pointwise"


def _prims():
    from .._prims.contraction import dot_general
    from .._prims.shape import broadcast_in_dim, transpose
    return dot_general, transpose, broadcast_in_dim


def _made_by(v, rw, name):
    p = rw.producer(v)
    return p if p is not None and p.prim.name == name else None


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _sink(node, rw):
    """A pointwise node on transposes: the node on the untransposed values, transposed
    (Note [Transposes sink to products]); None to keep it."""
    if len(node.outs) != 1 or node.is_effect():
        return None
    perm, moved = None, False
    for v in node.ins:
        t = _made_by(v, rw, "transpose")
        if t is not None:
            if perm is not None and tuple(t.params["permutation"]) != perm:
                return None
            perm = tuple(t.params["permutation"])
            src = t.ins[0]
            made = rw.producer(src)
            moved = moved or (isinstance(src, Var) and (made is None or getattr(
                getattr(made.prim, "lower", None), "kind", None) != "movement"))
        elif not (isinstance(v, Const) or _made_by(v, rw, "broadcast_in_dim")):
            return None
    if not moved:
        return None
    _, transpose, _ = _prims()
    out = rw.emit(node.prim, *(_untransposed(v, perm, rw) for v in node.ins), **node.params)
    return rw.emit(transpose, out, permutation=perm)


def _untransposed(v, perm, rw):
    """The value ``u`` with ``transpose(u, perm) == v``, read for free: a transpose's
    operand, a broadcast with permuted dims, or a transpose that the kernel inlines."""
    _, transpose, broadcast_in_dim = _prims()
    t = _made_by(v, rw, "transpose")
    if t is not None:          # _sink checked that its permutation is perm
        return t.ins[0]
    inv = _inverse(perm)
    b = _made_by(v, rw, "broadcast_in_dim")
    if b is not None:
        shape = tuple(b.params["shape"])
        dims = tuple(perm[d] for d in b.params["broadcast_dimensions"])
        if list(dims) == sorted(set(dims)):
            return rw.emit(broadcast_in_dim, b.ins[0], shape=tuple(shape[i] for i in inv),
                           broadcast_dimensions=dims)
    return rw.emit(transpose, v, permutation=inv)


def _absorb(node, rw):
    """A product of a transposed operand as a product of the operand itself, with its
    dimension numbers renamed (Note [Transposes sink to products]); None to keep it."""
    dot_general, _, _ = _prims()
    ins = list(node.ins)
    (xc, yc), (xb, yb) = node.params["contracting"], node.params["batch"]
    dims = [[tuple(xc), tuple(xb)], [tuple(yc), tuple(yb)]]
    changed = False
    for i in (0, 1):
        t = _made_by(ins[i], rw, "transpose")
        if t is None:
            continue
        perm = tuple(t.params["permutation"])
        c, b = dims[i]
        free = [perm[d] for d in range(len(perm)) if d not in c and d not in b]
        if free != sorted(free):        # the output's dims would come out in another order
            continue
        trial_ins = ins.copy()
        trial_ins[i] = t.ins[0]
        trial_dims = [list(d) for d in dims]
        trial_dims[i] = [tuple(perm[d] for d in c), tuple(perm[d] for d in b)]
        params = {"contracting": (trial_dims[0][0], trial_dims[1][0]),
                  "batch": (trial_dims[0][1], trial_dims[1][1])}
        trial = Node(node.prim, trial_ins, params, node.outs)
        if gemm.plan(trial) or gemm.blas_plan(trial):
            ins, dims, changed = trial_ins, trial_dims, True
    if not changed:
        return None
    return rw.emit(dot_general, *ins, contracting=(dims[0][0], dims[1][0]),
                   batch=(dims[0][1], dims[1][1]))


def _swap(node, rw, uses):
    """The transpose of a product computed with its operands swapped (Note [Products in
    BLAS's faster orientation]), as a product or a transpose of one; None to keep it."""
    dot_general, transpose, _ = _prims()
    d = _made_by(node.ins[0], rw, "dot_general")
    if d is None or uses.get(id(node.ins[0])) != 1:
        return None
    (xc, yc), (xb, yb) = d.params["contracting"], d.params["batch"]
    x, y = d.ins
    xs, ys = tuple(_shape(x)), tuple(_shape(y))
    if xb or yb or len(xc) != 1 or xc[0] != len(xs) - 1 or yc[0] != len(ys) - 1 or \
            not all(type(n) is int for n in xs + ys) or len(xs) < 2 or len(ys) < 2:
        return None
    if np.dtype(node.outs[0].dtype).name != "float32":       # (5): the bits
        return None
    nx, ny = len(xs) - 1, len(ys) - 1
    perm = tuple(node.params["permutation"])
    if perm[0] < nx or math.prod(ys[:-1]) < SWAP_RATIO * math.prod(xs[:-1]):     # (1), (3)
        return None
    swapped = Node(dot_general, (y, x), {"contracting": (tuple(yc), tuple(xc)),
                                         "batch": ((), ())},
                   [Var("probe", ys[:-1] + xs[:-1], node.outs[0].dtype)])
    if gemm.plan(d) or gemm.plan(swapped):
        return None
    out = rw.emit(dot_general, y, x, contracting=(tuple(yc), tuple(xc)), batch=((), ()))
    where = [ny + j for j in range(nx)] + list(range(ny))     # dim j of d is dim where[j]
    left = tuple(where[p] for p in perm)
    if left == tuple(range(len(left))):
        return out
    return rw.emit(transpose, out, permutation=left)


def _shape(v):
    return v.shape if isinstance(v, Var) else tuple(v.value.shape)

