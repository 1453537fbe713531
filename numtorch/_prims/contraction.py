"""Contraction: dot_general, the one primitive behind matmul, mm, bmm, mv, dot, einsum, linear.

dot_general(x, y, contracting=((xc...), (yc...)), batch=((xb...), (yb...))) contracts the
paired dims, keeps the paired batch dims, and returns dims in the order: batch, free dims of
x (in x's order), free dims of y (in y's order) — JAX's lax.dot_general. The NumPy impl
reduces every case to one BLAS call (tensordot or a batched matmul).
"""
from __future__ import annotations

import math

import numpy as np

from .._core.primitive import Primitive
from .._threads import PENDING, apply_pending
from ._helpers import T, move_bdim
from .shape import transpose as _transpose


def _free(ndim, contract, batch):
    return [d for d in range(ndim) if d not in contract and d not in batch]


# Note [Small GEMMs]
# For two real float matrices np.dot hands the product to BLAS's gemm directly; np.matmul
# reaches the same gemm through its generalized-ufunc machinery, about 0.4 us more per call
# at MLP sizes (10x40 @ 40x40: 1.25 against 1.66 us), and for an inner dimension of 1 (a
# layer with one input, x @ W1.T) it runs its non-BLAS loop on the transposed view
# (2.4 against 1.4 us). The two agree bit for bit on float32 and float64 (checked on 30,000
# random shapes, each operand contiguous or transposed, and x @ x.T, which both give to
# syrk); complex products differ in the last bits at an inner dimension of 1, so complex
# and the other dtypes keep np.matmul.

def _dot_impl(x, y, *, contracting, batch):
    if PENDING[0] is not None:   # Note [Thread counts change on the calling thread], _threads.py
        apply_pending()
    (xc, yc), (xb, yb) = contracting, batch
    if not xb and len(x.shape) == 2 and len(y.shape) == 2 and len(xc) == 1:
        # Two matrices (every eager matmul of an MLP and its backward): the GEMM below,
        # without its reshapes and products of sizes (Note [Small GEMMs]).
        if x.dtype.char in "fd":
            return np.dot(x if xc[0] == 1 else x.T, y if yc[0] == 0 else y.T)
        if x.shape[xc[0]] != 1:
            return np.matmul(x if xc[0] == 1 else x.T, y if yc[0] == 0 else y.T)
    if not xb:
        if len(xc) == 1 and xc[0] in (0, x.ndim - 1) and yc[0] in (0, y.ndim - 1):
            # Note [One GEMM for a contraction]
            # One contracted dim at either end of each operand: fold the other dims of each
            # into one and run a single GEMM, passing transposes to BLAS as flags. tensordot
            # would copy an operand whose contracted dim is last (vmap's batched weights:
            # x @ W.T with W of shape (models, out, in)), and matmul of stacked operands would
            # run one GEMM per leading index.
            k = x.shape[xc[0]]
            x_last, y_first = xc[0] == x.ndim - 1, yc[0] == 0
            xfree = x.shape[:-1] if x_last else x.shape[1:]
            yfree = y.shape[1:] if y_first else y.shape[:-1]
            m, n = math.prod(xfree), math.prod(yfree)   # explicit: -1 is ambiguous at size 0
            xm = x.reshape(m, k) if x_last else x.reshape(k, m).T
            ym = y.reshape(k, n) if y_first else y.reshape(n, k).T
            if k == 1:
                # An outer product (the weight gradient of one example): np.matmul runs its
                # non-BLAS loop on this (m, 1) transposed view (460 us for 512x784 float32);
                # np.dot hands it to BLAS (70 us), and a broadcast multiply takes 115 us
                # for the dtypes BLAS lacks. One product per element: the same values.
                outer = np.dot if xm.dtype.char in "fdFD" else np.multiply
                return outer(xm, ym).reshape(xfree + yfree)
            return np.matmul(xm, ym).reshape(xfree + yfree)
        return np.tensordot(x, y, axes=(xc, yc))
    key = (x.ndim, y.ndim, contracting, batch)
    plan = _IMPL_PLANS.get(key)
    if plan is None:
        plan = _IMPL_PLANS[key] = _batched_impl_plan(x.ndim, y.ndim, contracting, batch)
    x_perm, y_perm, xf, yf = plan
    xs, ys = x.shape, y.shape
    xt = x if x_perm is None else x.transpose(x_perm)
    yt = y if y_perm is None else y.transpose(y_perm)
    bshape = xt.shape[:len(xb)]
    xfree, yfree = tuple([xs[d] for d in xf]), tuple([ys[d] for d in yf])
    m, n = math.prod(xfree), math.prod(yfree)
    k = xs[xc[0]] if len(xc) == 1 else math.prod([xs[d] for d in xc])
    if k == 1:
        # Batched outer products (per-sample weight gradients): a broadcast multiply beats
        # one tiny GEMM per batch element.
        out = np.multiply(xt.reshape(bshape + (m, 1)), yt.reshape(bshape + (1, n)))
    else:
        out = np.matmul(xt.reshape(bshape + (m, k)), yt.reshape(bshape + (k, n)))
    return out.reshape(bshape + xfree + yfree)


def _batched_impl_plan(xnd, ynd, contracting, batch):
    """The operand permutations (None for the identity) putting batch, free, contracted
    dims in matmul order, and the free dims: per ranks and dimension numbers (cached: the
    batched impl runs on every matmul under vmap)."""
    (xc, yc), (xb, yb) = contracting, batch
    xf, yf = _free(xnd, xc, xb), _free(ynd, yc, yb)
    x_perm, y_perm = tuple(xb) + tuple(xf) + tuple(xc), tuple(yb) + tuple(yc) + tuple(yf)
    return (None if x_perm == tuple(range(xnd)) else x_perm,
            None if y_perm == tuple(range(ynd)) else y_perm, tuple(xf), tuple(yf))


_IMPL_PLANS: dict = {}


def _dot_shape(x, y, *, contracting, batch):
    (xc, yc), (xb, yb) = contracting, batch
    for a, b in zip(xc, yc):
        if x.shape[a] != y.shape[b]:
            raise TypeError(f"dot_general: contracting sizes differ: {x.shape} dim {a} vs "
                            f"{y.shape} dim {b}")
    for a, b in zip(xb, yb):
        if x.shape[a] != y.shape[b]:
            raise TypeError(f"dot_general: batch sizes differ: {x.shape} vs {y.shape}")
    if x.dtype != y.dtype:
        raise TypeError(f"dot_general: dtypes differ: {x.dtype} vs {y.dtype}")
    xf, yf = _free(len(x.shape), xc, xb), _free(len(y.shape), yc, yb)
    return (tuple(x.shape[d] for d in xb) + tuple(x.shape[d] for d in xf)
            + tuple(y.shape[d] for d in yf)), x.dtype


def _transpose_back(g_dims_in_order, ndim):
    return tuple(g_dims_in_order.index(d) for d in range(ndim))


def _dot_vjp_plan(xnd, ynd, contracting, batch):
    """For each operand's cotangent: whether it contracts (g, other) or (other, g), the
    params of that contraction, and the permutation that puts its result back in the
    operand's dim order (None: none needed); cached, the rule runs on every matmul's
    backward (Note [Cotangent contractions])."""
    key = (xnd, ynd, contracting, batch)
    plan = _VJP_PLANS.get(key)
    if plan is None:
        (xc, yc), (xb, yb) = contracting, batch
        nb = len(xb)
        xf, yf = _free(xnd, xc, xb), _free(ynd, yc, yb)
        g_batch = tuple(range(nb))
        g_xfree = tuple(range(nb, nb + len(xf)))
        g_yfree = tuple(range(nb + len(xf), nb + len(xf) + len(yf)))
        x_from_y = [xc[yc.index(d)] for d in sorted(yc)]   # x's dims left free in y
        y_from_x = [yc[xc.index(d)] for d in sorted(xc)]
        plan = _VJP_PLANS[key] = (
            _cotangent_contraction(list(xb) + xf + x_from_y, list(xb) + x_from_y + xf, xnd,
                                   (g_yfree, tuple(yf)), (g_batch, tuple(yb))),
            _cotangent_contraction(list(yb) + yf + y_from_x, list(yb) + y_from_x + yf, ynd,
                                   (g_xfree, tuple(xf)), (g_batch, tuple(xb))))
    return plan


def _cotangent_contraction(g_first, other_first, ndim, contracting, batch):
    """(other operand first?, params, permutation back or None) for one cotangent: the
    order of operands whose result needs no transpose, if either does."""
    back = _transpose_back(g_first, ndim)
    if back != tuple(range(ndim)) and _transpose_back(other_first, ndim) == tuple(range(ndim)):
        return True, {"contracting": contracting[::-1], "batch": batch[::-1]}, None
    return False, {"contracting": contracting, "batch": batch}, (
        None if back == tuple(range(ndim)) else back)


_VJP_PLANS: dict = {}

# Note [Cotangent contractions]
# A cotangent of dot_general is another dot_general of the output cotangent g with the
# other operand; its result comes out as (batch, g's free dims, the operand's free dims),
# which may need a transpose into the operand's dim order. Contracting the operands the
# other way round gives (batch, the operand's free dims, g's free dims); the rule picks the
# order that needs no transpose where one does. For `x @ w.T` (w.T a transposed view)
# w.T's cotangent is then x^T g, as PyTorch's mm backward computes it, instead of
# transpose(g^T x): one bind fewer per matmul in backward, and one node fewer under
# create_graph (MAML's inner steps).


def _dot_vjp(g, out, x, y, *, contracting, batch):
    (x_swap, x_params, x_perm), (y_swap, y_params, y_perm) = _dot_vjp_plan(
        len(x._data.shape), len(y._data.shape), contracting, batch)

    # The transpose primitive, not Tensor.permute: a cotangent needs no view bookkeeping.
    def grad_x():
        other = _conj(y)
        r = dot_general.bind(other, g, **x_params) if x_swap else \
            dot_general.bind(g, other, **x_params)
        return r if x_perm is None else _transpose.bind(r, permutation=x_perm)

    def grad_y():
        other = _conj(x)
        r = dot_general.bind(other, g, **y_params) if y_swap else \
            dot_general.bind(g, other, **y_params)
        return r if y_perm is None else _transpose.bind(r, permutation=y_perm)
    return grad_x, grad_y


def _conj(t):
    return t.conj() if t._data.dtype.kind == "c" else t


def _dot_jvp(primals, tangents, *, contracting, batch):
    x, y = primals
    tx, ty = tangents
    out = dot_general.bind(x, y, contracting=contracting, batch=batch)
    parts = []
    if tx is not None:
        parts.append(dot_general.bind(tx, y, contracting=contracting, batch=batch))
    if ty is not None:
        parts.append(dot_general.bind(x, ty, contracting=contracting, batch=batch))
    return out, parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _shift(dims, by=1):
    return tuple(d + by for d in dims)


def _dot_batch(values, bdims, *, contracting, batch):
    (x, y), (bx, by) = values, bdims
    if bx is not None:
        x = move_bdim(x, bx, 0)
    if by is not None:
        y = move_bdim(y, by, 0)
    swap, params, perm, out_bdim = batch_plan(x.shape, y.shape, bx is not None, by is not None,
                                              contracting, batch)
    out = dot_general.bind(y, x, **params) if swap else dot_general.bind(x, y, **params)
    return (out if perm is None else _transpose.bind(out, permutation=perm)), out_bdim


def batch_plan(xs, ys, x_batched, y_batched, contracting, batch):
    """How vmap computes ``dot_general(x, y)`` of per-example operands from the values of
    shapes ``xs``, ``ys`` (each batched one with its batch dim at 0): ``(swap, params,
    perm, out_bdim)``, the product ``dot_general(y, x)`` if ``swap`` else ``(x, y)`` with
    ``params``, then transposed by ``perm`` unless None, its batch dim at ``out_bdim``
    (the batched linear of func/_vmap_linear.py computes the same)."""
    if x_batched != y_batched and not batch[0] and len(contracting[0]) == 1:
        perm = _swap_perm(xs, ys, x_batched, contracting)
        if perm is not None:
            return True, {"contracting": ((len(ys) - 1,), (len(xs) - 1,)),
                          "batch": ((), ())}, perm, 0
    # The params depend on which operands are batched and the ranks only: cached, as the
    # rule runs on every matmul under vmap (MAML: ~90 per meta-step).
    key = (x_batched, y_batched, len(xs), contracting, batch)
    plan = _BATCH_PLANS.get(key)
    if plan is None:
        plan = _BATCH_PLANS[key] = _dot_batch_plan(x_batched, y_batched, len(xs), contracting,
                                                   batch)
    return False, plan[0], None, plan[1]


def _dot_batch_plan(x_batched, y_batched, xnd, contracting, batch):
    """(params, out bdim) of the batched contraction, batch dims moved to the front."""
    (xc, yc), (xb, yb) = contracting, batch
    if x_batched and y_batched:
        return {"contracting": (_shift(xc), _shift(yc)),
                "batch": ((0,) + _shift(xb), (0,) + _shift(yb))}, 0
    if x_batched:
        return {"contracting": (_shift(xc), yc), "batch": (_shift(xb), yb)}, len(xb)
    return ({"contracting": (xc, _shift(yc)), "batch": (xb, _shift(yb))},
            len(xb) + len(_free(xnd, xc, xb)))


_BATCH_PLANS: dict = {}


# Note [Rows before columns in a batched product]
# With one operand batched, vmap's product folds the batch into that operand's free dims
# and runs one GEMM (Note [One GEMM for a contraction]): x (m, k) against stacked weights
# W (B, n, k) is x @ W_flat.T, an (m, B*n) product. OpenBLAS (NumPy's) runs a row-major
# product whose two operands contract their last dims 15-30% faster when the result has
# more rows than columns (1 thread, CPU time: m=64, n=1280, k=784 2213 -> 1668 us; m=128,
# n=512 1305 -> 1119; m=4, n=1280 663 -> 332; the other way round, m=1280, n=64, it is
# 1.35x slower). So when both operands contract their last dim and the folded product
# has fewer rows than columns, the rule contracts the operands the other way round, which
# makes W_flat @ x.T, and transposes the result back: a view, so the batched value is the
# transpose of a contiguous array, a layout that the elementwise kernels and the next
# product read without a copy. Each element is the same dot product over k; NumPy's
# OpenBLAS gave the same bits in both orders at every shape measured (the tests check
# the values against a Python loop over the examples). Only stacked operands on the right
# (weights against a shared input) are swapped: with the examples on the left (per-example
# inputs against shared weights) the batch dim of the result becomes its fastest-varying
# one, which per-sample gradients then read with a stride in their outer products
# (per-sample grads of an MLP 784-512-256-10 went 1.15x slower).

def _swap_perm(xs, ys, x_batched, contracting):
    """The permutation that turns ``(y . x)`` back into ``x . y`` where computing the product
    that way round is BLAS's faster order (Note [Rows before columns in a batched
    product]), or None to keep the plan."""
    (xc,), (yc,) = contracting
    xnd, ynd = len(xs), len(ys)   # y, batched, has its batch dim at 0
    if x_batched or xc != xnd - 1 or yc + 1 != ynd - 1:
        return None
    rows, cols = math.prod(xs[:-1]), math.prod(ys[:-1])
    if rows.__class__ is not int or cols.__class__ is not int or rows >= cols:
        return None   # (symbolic sizes: no guard on a layout choice)
    # y . x has dims (B, y's free dims, x's free dims) -> (B, x's free dims, y's free dims)
    ny, nx = ynd - 1, xnd - 1
    return (0,) + tuple(range(ny, ny + nx)) + tuple(range(1, ny))


dot_general = Primitive("dot_general", impl=_dot_impl, shape=_dot_shape, vjp=_dot_vjp,
                        jvp=_dot_jvp, batch=_dot_batch)


# Note [What backward reads] (autograd/engine.py): each operand's cotangent reads the other.
dot_general.vjp_needs = ((1,), (0,))

# Lower rule (Note [Lower rules], _lower.py)
from ._lower import extern  # noqa: E402

dot_general.lower = extern("contraction: BLAS through NumPy")
