"""Convolution: one primitive, `conv`, for N-d grouped, strided, dilated, padded convolution.

conv(x, w, stride, padding, lhs_dilation, rhs_dilation, groups) takes x in (N, C, *spatial)
and w in (O, C // groups, *kernel) layout and returns (N, O, *out_spatial); it is a
cross-correlation, as PyTorch's conv is. `padding` is one (lo, hi) pair per spatial dim and
may be negative (a crop); `lhs_dilation` inserts zeros between input elements (the
transposed convolution), `rhs_dilation` between kernel taps (PyTorch's `dilation`) — JAX's
`lax.conv_general_dilated` with fixed dimension numbers. Both vjps are `conv`s again
(Note [Conv transposes]), so grad-of-grad and vmap-of-grad need nothing more. This module
must not know PyTorch's argument conventions (ints vs tuples, 'same', bias): `_ops/conv.py`
turns those into these params.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._core.primitive import Primitive
from ._helpers import T, move_bdim


def _dilated(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def _out_size(n, k, stride, lo, hi, lhs_d, rhs_d):
    span = _dilated(n, lhs_d) + lo + hi - _dilated(k, rhs_d)
    return max(0, span // stride + 1) if span >= 0 else 0


# ---------------------------------------------------------------------------------------
# Note [Conv impl paths]
# Two NumPy algorithms, chosen by shapes (the result is the same):
# * im2col: dilate and pad x once, view its windows with as_strided, copy them into
#   columns (n*K*Cin*P elements) and do one batched matmul — the forward conv.
# * scatter (col2im): for unit stride, multiply every input element by every tap first
#   (one matmul, n*K*Cout*I elements), then add tap k's products into the output at
#   a*i + lo - k*d with one strided add per tap. It never touches the zeros of a dilated
#   input (transposed convs, input gradients of strided convs).
# The intermediate's size decides, and the multiply-adds are in the same ratio: scatter
# when Cout*I < Cin*P (I input, P output positions; P counts a dilated input's zeros).
# That is the input gradient of a forward conv (fewer channels out, as many positions)
# and a transposed conv, but not a weight gradient, whose "kernel" is the output
# gradient (K = a whole feature map) and whose output is the small kernel: deciding
# by channels alone sent vmap's batch-folded weight gradients (Cout 256 of Cin 300) to
# scatter with a 1.3 GB intermediate against im2col's 84 MB, which was most of the
# maml_omniglot benchmark's peak memory (benchmarks/memory.py).


def _dilate_and_pad(x, lhs_dilation, padding):
    """Insert zeros between elements, then pad (crop where a pad is negative)."""
    if all(d == 1 for d in lhs_dilation) and all(lo == 0 and hi == 0 for lo, hi in padding):
        return x
    spatial = [_dilated(s, d) for s, d in zip(x.shape[2:], lhs_dilation)]
    full = [n + max(lo, 0) + max(hi, 0) for n, (lo, hi) in zip(spatial, padding)]
    out = np.zeros(x.shape[:2] + tuple(full), dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(max(lo, 0), max(lo, 0) + n, d) for n, d, (lo, _)
                                           in zip(spatial, lhs_dilation, padding))] = x
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        out = out[(slice(None), slice(None)) + tuple(slice(max(-lo, 0), f - max(-hi, 0))
                                                     for f, (lo, hi) in zip(full, padding))]
    return out


def _conv_impl(x, w, *, stride, padding, lhs_dilation, rhs_dilation, groups):
    out_shape, _ = _conv_shape(x, w, stride=stride, padding=padding, lhs_dilation=lhs_dilation,
                               rhs_dilation=rhs_dilation, groups=groups)
    if 0 in out_shape or 0 in w.shape:
        return np.zeros(out_shape, dtype=x.dtype)
    if all(s == 1 for s in stride) and (
            w.shape[0] * math.prod(x.shape[2:]) < x.shape[1] * math.prod(out_shape[2:])):
        return _scatter_conv(x, w, padding, lhs_dilation, rhs_dilation, groups, out_shape)
    xp = _dilate_and_pad(x, lhs_dilation, padding)
    n, g = x.shape[0], groups
    o, cg, ksize = w.shape[0], w.shape[1], w.shape[2:]
    osize = out_shape[2:]
    sn, sc, *ss = xp.strides
    # windows[n, g, c, k..., p...] = xp[n, g*cg + c, p*stride + k*rhs_dilation]
    windows = as_strided(
        xp, (n, g, cg) + tuple(ksize) + tuple(osize),
        (sn, sc * cg, sc) + tuple(d * s for d, s in zip(rhs_dilation, ss))
        + tuple(st * s for st, s in zip(stride, ss)), writeable=False)
    kk, pp = math.prod(ksize), math.prod(osize)
    if pp >= kk:
        # Many output positions (a forward conv): per example W (Og, Cg*K) @ cols (Cg*K, P);
        # the copy runs along output positions, which are contiguous in x for stride 1.
        cols = windows.reshape(n, g, cg * kk, pp)            # the one im2col copy
        wm = w.reshape(1, g, o // g, cg * kk)
        return np.matmul(wm, cols).reshape(out_shape)    # (n, g, o/g, p) is (n, o, p...)
    # A large kernel and few outputs (the weight gradient, Note [Conv transposes]): one
    # (N*P, Cg*K) @ (Cg*K, Og) product per group; the copy runs along kernel taps.
    nd = len(ksize)
    axes = (1, 0) + tuple(range(3 + nd, 3 + 2 * nd)) + (2,) + tuple(range(3, 3 + nd))
    cols = windows.transpose(axes).reshape(g, n * pp, cg * kk)
    res = np.matmul(cols, w.reshape(g, o // g, cg * kk).transpose(0, 2, 1))   # (g, n*p, o/g)
    return np.ascontiguousarray(res.reshape(g, n, pp, o // g).transpose(1, 0, 3, 2)).reshape(out_shape)


def _scatter_conv(x, w, padding, lhs_dilation, rhs_dilation, groups, out_shape):
    """A unit-stride conv of a dilated input (a transposed conv) without the zeros: every
    input element times every tap (one matmul), scattered to output a*i + lo - k*d by one
    strided add per kernel tap (col2im) — a**nd times less work than im2col over zeros."""
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    o, cg, ksize = w.shape[0], w.shape[1], w.shape[2:]
    og, kk = o // groups, math.prod(ksize)
    wm = w.reshape(groups, og, cg, kk).transpose(0, 3, 1, 2).reshape(1, groups, kk * og, cg)
    z = np.matmul(wm, x.reshape(n, groups, cg, math.prod(spatial)))   # (n, g, k*og, i)
    z = z.reshape((n, groups, kk, og) + tuple(spatial))
    out = np.zeros((n, groups, og) + tuple(out_shape[2:]), dtype=z.dtype)
    for t, offset in enumerate(np.ndindex(*ksize)):
        src, dst = [], []
        for i_n, q_n, k, (lo, _), a, d in zip(spatial, out_shape[2:], offset, padding,
                                              lhs_dilation, rhs_dilation):
            shift = lo - k * d                  # output q = a*i + shift, kept if 0 <= q < q_n
            first = max(0, -(shift // a))
            last = min(i_n - 1, (q_n - 1 - shift) // a)
            if last < first:
                break
            src.append(slice(first, last + 1))
            dst.append(slice(a * first + shift, a * last + shift + 1, a))
        else:
            out[(Ellipsis,) + tuple(dst)] += z[(slice(None), slice(None), t, slice(None)) + tuple(src)]
    return out.reshape(out_shape)


def _conv_shape(x, w, *, stride, padding, lhs_dilation, rhs_dilation, groups):
    nd = len(x.shape) - 2
    if len(w.shape) != nd + 2 or nd < 1:
        raise TypeError(f"conv: operand ranks differ or too small: {x.shape} vs {w.shape}")
    if not (len(stride) == len(padding) == len(lhs_dilation) == len(rhs_dilation) == nd):
        raise TypeError(f"conv: one stride/padding/dilation per spatial dim ({nd}) expected")
    if x.dtype != w.dtype:
        raise TypeError(f"conv: dtypes differ: {x.dtype} vs {w.dtype}")
    if x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        raise TypeError(f"conv: channels of {x.shape} and {w.shape} do not fit groups={groups}")
    spatial = tuple(_out_size(n, k, s, lo, hi, ld, rd) for n, k, s, (lo, hi), ld, rd in
                    zip(x.shape[2:], w.shape[2:], stride, padding, lhs_dilation, rhs_dilation))
    return (x.shape[0], w.shape[0]) + spatial, x.dtype


# ---------------------------------------------------------------------------------------
# Note [Conv transposes]
# With y = conv(x, w) (stride s, padding (lo, hi), lhs dilation a, rhs dilation d, G
# groups), both cotangents are convolutions:
#
# * dx is a "transposed convolution" of g: dilate g by s (lhs_dilation=s), correlate with
#   the spatially flipped kernel whose in/out channels are swapped within each group
#   ((G*Og, Cg, K) -> (G*Cg, Og, K)), stepping by a (stride=a). Padding before is the
#   dilated kernel extent minus lo minus 1; padding after is whatever makes the output
#   exactly the input's size (this is where strides that do not divide evenly end up).
# * dw correlates x with g: roles swap so that the *batch* N becomes the feature dim that
#   is contracted and the input channels become the batch: x -> (Cg, G*N, S), g -> (O, N, P)
#   used as the kernel with rhs_dilation=s, stride=d, G groups. The hi padding is reduced by
#   the input positions no window touched, so the output is exactly the kernel's size.
#
# Both are `conv` binds, hence differentiable and batchable again; the engine evaluates
# each only when that input needs a gradient (Note [Lazy cotangents]).


def _conj(t):
    return t.conj() if t.is_complex() else t


def _grad_lhs(g, x, w, stride, padding, lhs_dilation, rhs_dilation, groups):
    nd = x.ndim - 2
    o, cg, ksize = w.shape[0], w.shape[1], tuple(w.shape[2:])
    og = o // groups
    wt = T.flip(_conj(w), tuple(range(2, 2 + nd)))
    wt = wt.reshape((groups, og, cg) + ksize).transpose(1, 2).reshape((groups * cg, og) + ksize)
    pads = []
    for n, k, p, s, (lo, hi), a, d in zip(x.shape[2:], ksize, g.shape[2:], stride, padding,
                                           lhs_dilation, rhs_dilation):
        before = _dilated(k, d) - lo - 1
        pads.append((before, _dilated(n, a) + _dilated(k, d) - 1 - _dilated(p, s) - before))
    return conv.bind(g, wt, stride=tuple(lhs_dilation), padding=tuple(pads),
                     lhs_dilation=tuple(stride), rhs_dilation=tuple(rhs_dilation), groups=groups)


def _grad_rhs(g, x, w, stride, padding, lhs_dilation, rhs_dilation, groups):
    nd = x.ndim - 2
    n, c = x.shape[0], x.shape[1]
    cg, spatial = c // groups, tuple(x.shape[2:])
    xt = _conj(x).reshape((n, groups, cg) + spatial).permute((2, 1, 0) + tuple(range(3, 3 + nd)))
    xt = xt.reshape((cg, groups * n) + spatial)
    gt = g.transpose(0, 1)
    pads = []
    for size, k, p, s, (lo, hi), a, d in zip(spatial, w.shape[2:], g.shape[2:], stride, padding,
                                             lhs_dilation, rhs_dilation):
        unused = _dilated(size, a) + lo + hi - ((p - 1) * s + _dilated(k, d))
        pads.append((lo, hi - unused))
    out = conv.bind(xt, gt, stride=tuple(rhs_dilation), padding=tuple(pads),
                    lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(stride), groups=groups)
    return out.transpose(0, 1)


def _conv_vjp(g, out, x, w, **params):
    if 0 in tuple(g.shape):     # an empty output (the kernel outgrows the input): no gradient
        return (lambda: T.zeros_like(x)), (lambda: T.zeros_like(w))
    p = tuple(params[k] for k in ("stride", "padding", "lhs_dilation", "rhs_dilation", "groups"))
    return (lambda: _grad_lhs(g, x, w, *p)), (lambda: _grad_rhs(g, x, w, *p))


def _conv_jvp(primals, tangents, **params):
    (x, w), (tx, tw) = primals, tangents
    out = conv.bind(x, w, **params)
    parts = []
    if tx is not None:
        parts.append(conv.bind(tx, w, **params))
    if tw is not None:
        parts.append(conv.bind(x, tw, **params))
    return out, parts[0] if len(parts) == 1 else parts[0] + parts[1]


# ---------------------------------------------------------------------------------------
# batch: fold the vmapped dim into N (x batched) or into the groups (w batched).

def _conv_batch(values, bdims, *, groups, **params):
    (x, w), (bx, bw) = values, bdims
    if bw is None:                       # (B, N, C, S) -> (B*N, C, S)
        x = move_bdim(x, bx, 0)
        b, n = x.shape[0], x.shape[1]
        out = conv.bind(x.reshape((b * n,) + tuple(x.shape[2:])), w, groups=groups, **params)
        return out.reshape((b, n) + tuple(out.shape[1:])), 0
    w = move_bdim(w, bw, 0)
    b, o = w.shape[0], w.shape[1]
    og, rest = o // groups, tuple(w.shape[2:])
    if bx is None:
        # Each group's B*Og outputs must be contiguous: (B, G, Og) -> (G, B, Og).
        wg = w.reshape((b, groups, og) + rest).transpose(0, 1).reshape((groups * b * og,) + rest)
        out = conv.bind(x, wg, groups=groups, **params)
        n, spatial = out.shape[0], tuple(out.shape[2:])
        out = out.reshape((n, groups, b, og) + spatial).transpose(1, 2)
        return out.reshape((n, b, o) + spatial), 1
    # Both batched: per-example weights become B*G groups over (N, B*C, S).
    x = move_bdim(x, bx, 0)
    n, c, spatial = x.shape[1], x.shape[2], tuple(x.shape[3:])
    xs = x.transpose(0, 1).reshape((n, b * c) + spatial)
    out = conv.bind(xs, w.reshape((b * o,) + rest), groups=b * groups, **params)
    return out.reshape((n, b, o) + tuple(out.shape[2:])), 1


conv = Primitive("conv", impl=_conv_impl, shape=_conv_shape, jvp=_conv_jvp, vjp=_conv_vjp,
                 batch=_conv_batch)


# Note [What backward reads] (autograd/engine.py): each operand's cotangent reads the other.
conv.vjp_needs = ((1,), (0,))

# Lower rule (Note [Lower rules], _lower.py)
from ._lower import extern  # noqa: E402

conv.lower = extern("convolution: BLAS through NumPy")
