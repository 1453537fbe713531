"""Normalization: one primitive, `batch_norm`, training-mode normalization by batch statistics.

batch_norm(x, weight, bias, axes, eps) normalizes ``x`` over the reduced ``axes`` with the
statistics of ``x`` itself and applies the per-channel affine map; the channels are the
kept (non-reduced) dims, in order, and ``weight``/``bias`` have their shape. It returns
``(out, mean, var)``: ``mean`` and the biased ``var`` have the channels' shape, so the nn
layer can update running statistics from them (PyTorch's ``native_batch_norm``, which
returns ``save_mean`` and ``save_invstd``). Eval mode, with running statistics, is not a
primitive (Note [Batch norm primitive]). This module must not know PyTorch's argument
conventions (optional weight, momentum, running buffers): ``nn.functional.batch_norm``
turns those into these operands.
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive
from ._helpers import T, bdim_size, move_bdim

# Note [Batch norm primitive]
# Decomposed into primitives, training-mode batch norm (mean, x - mean, square, mean,
# rsqrt, multiply, weight, bias) leaves two full-size intermediates saved for backward:
# the centred x (read by the square and by the multiply with rsqrt) and the normalized x
# (read by the weight multiply). Under MAML's vmap over inner grad steps every step's
# graph holds both for every BatchNorm, which was most of the memory above PyTorch's. As
# one primitive, backward reads only x and the two per-channel statistics (the output is
# replaced by a stand-in, Note [Saved values] in autograd/engine.py), the centred x is
# recomputed in backward, and the forward makes one pass fewer over x.
#
# The vjp is written with numtorch ops, so grad of grad (MAML's outer step through inner
# steps) differentiates it like any other rule; it reads the `mean` and `var` outputs,
# which at an outer level are outputs of the same node, so it also takes their cotangents
# (d mean/dx = 1/n, d var/dx = 2 (x - mean)/n): the second order needs them, and so does a
# user who differentiates through the returned statistics.
#
# Eval mode normalizes with given statistics: out = x * scale + shift with per-channel
# scale = weight * rsqrt(running_var + eps) and shift = bias - running_mean * scale, which
# is how ATen's CPU kernel computes it too. Decomposed that way, backward already saves
# only x (read by the multiply) and the per-channel scale, and the forward makes the same
# two passes a fused impl would, so a second primitive would add rules and no saving.


def _kept(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def _count(shape, axes):
    n = 1
    for a in axes:
        n = n * shape[a]
    return n


def _inv_count(shape, axes):
    """1/n for the rules (NaN for an empty batch, as the statistics are)."""
    n = _count(shape, axes)
    return 1.0 / n if n else float("nan")


def _bn_impl(x, w, b, *, axes, eps):
    keep = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    n = _count(x.shape, axes)
    with np.errstate(invalid="ignore", divide="ignore"):   # an empty batch: NaN statistics
        mean = np.add.reduce(x, axis=axes) / n
        out = np.subtract(x, mean.reshape(keep))            # the centred x, then the output
        sq = np.multiply(out, out)
        var = np.add.reduce(sq, axis=axes) / n
        del sq
        scale = w / np.sqrt(var + eps)
    np.multiply(out, scale.reshape(keep), out=out)
    np.add(out, b.reshape(keep), out=out)
    return out, mean.astype(x.dtype, copy=False), var.astype(x.dtype, copy=False)


def _bn_shape(x, w, b, *, axes, eps):
    if x.dtype.kind != "f":
        raise TypeError(f"batch_norm: expected a floating point input, got {x.dtype}")
    if len(set(axes)) != len(axes) or any(not 0 <= a < len(x.shape) for a in axes):
        raise TypeError(f"batch_norm: axes {axes} are not distinct dims of {tuple(x.shape)}")
    kept = tuple(x.shape[i] for i in _kept(len(x.shape), axes))
    for name, t in (("weight", w), ("bias", b)):
        if tuple(t.shape) != kept or t.dtype != x.dtype:
            raise TypeError(f"batch_norm: {name} must have the channels' shape {kept} and dtype "
                            f"{x.dtype}, got {tuple(t.shape)} and {t.dtype}")
    return (tuple(x.shape), x.dtype), (kept, x.dtype), (kept, x.dtype)


def _expand(t, x, kept):
    """A per-channel tensor ``t`` as a zero-stride view of ``x``'s shape."""
    return broadcast_in_dim.bind(t, shape=tuple(x.shape), broadcast_dimensions=kept)


def _bn_vjp(cts, out, x, w, b, *, axes, eps):
    # With xc = x - mean, invstd = rsqrt(var + eps), xhat = xc * invstd and n reduced
    # elements per channel (gy, gm, gv the cotangents of out, mean, var):
    #   db = sum(gy),  dw = sum(gy * xhat) = sum(gy * xc) * invstd,
    #   dx = w invstd (gy - db/n - xhat dw/n) + gm/n + 2 gv xc/n
    #      = gy * (w invstd) + xc * (2 gv - w invstd^3 sum(gy xc)) / n + (gm - w invstd db) / n
    gy, gm, gv = cts
    mean, var = out[1], out[2]
    kept, inv_n = _kept(x.ndim, axes), _inv_count(x.shape, axes)
    memo = {}

    def db():
        if "db" not in memo:
            memo["db"] = reduce_sum.bind(gy, axes=axes)
        return memo["db"]

    def centred():
        if "xc" not in memo:
            memo["invstd"] = T.rsqrt(var + eps)
            memo["xc"] = xc = x - _expand(mean, x, kept)
            memo["gxc"] = reduce_sum.bind(gy * xc, axes=axes)
        return memo["xc"], memo["invstd"], memo["gxc"]

    def dx():
        xc, invstd, gxc = centred()
        a = w * invstd
        k2 = (gv * 2 - a * invstd * invstd * gxc) * inv_n
        k3 = (gm - a * db()) * inv_n
        return gy * _expand(a, x, kept) + xc * _expand(k2, x, kept) + _expand(k3, x, kept)

    def dw():
        _, invstd, gxc = centred()
        return gxc * invstd

    return dx, dw, db


def _bn_jvp(primals, tangents, *, axes, eps):
    (x, w, b), (tx, tw, tb) = primals, tangents
    out, mean, var = batch_norm.bind(x, w, b, axes=axes, eps=eps)
    kept, inv_n = _kept(x.ndim, axes), _inv_count(x.shape, axes)
    invstd = T.rsqrt(var + eps)
    xc = x - _expand(mean, x, kept)
    parts, t_mean, t_var = [], None, None
    if tx is not None:
        t_mean = reduce_sum.bind(tx, axes=axes) * inv_n
        txc = tx - _expand(t_mean, x, kept)
        t_var = reduce_sum.bind(xc * txc, axes=axes) * (2.0 * inv_n)
        t_invstd = invstd * invstd * invstd * t_var * -0.5
        parts += [txc * _expand(w * invstd, x, kept), xc * _expand(w * t_invstd, x, kept)]
    if tw is not None:
        parts.append(xc * _expand(tw * invstd, x, kept))
    if tb is not None:
        parts.append(_expand(tb, x, kept))
    t_out = parts[0]
    for p in parts[1:]:
        t_out = t_out + p
    return (out, mean, var), (t_out, t_mean, t_var)


def _bn_batch(values, bdims, *, axes, eps):
    # Every operand gets the batch dim in front (an unbatched one as a zero-stride view);
    # the batch dim is then one more channel dim, so per-example statistics stay apart.
    size = bdim_size(values, bdims)
    moved = []
    for v, d in zip(values, bdims):
        if d is None:
            shape = tuple(v.shape)
            moved.append(broadcast_in_dim.bind(v, shape=(size,) + shape,
                                               broadcast_dimensions=tuple(range(1, len(shape) + 1))))
        else:
            moved.append(move_bdim(v, d, 0))
    outs = batch_norm.bind(*moved, axes=tuple(a + 1 for a in axes), eps=eps)
    return outs, (0, 0, 0)


batch_norm = Primitive("batch_norm", impl=_bn_impl, shape=_bn_shape, jvp=_bn_jvp, vjp=_bn_vjp,
                       batch=_bn_batch, multiple_results=True)

from .reduction import reduce_sum  # noqa: E402
from .shape import broadcast_in_dim  # noqa: E402

# Note [What backward reads] (autograd/engine.py): dx reads x, weight, mean and var; dw
# reads x, mean and var; db nothing. The normalized output ("out0") is never read.
batch_norm.vjp_needs = ((0, 1, "out1", "out2"), (0, "out1", "out2"), ())

# Lower rule (Note [Lower rules], _lower.py)
from ._lower import extern  # noqa: E402

batch_norm.lower = extern("batch statistics and normalization: NumPy reductions and ufuncs")
