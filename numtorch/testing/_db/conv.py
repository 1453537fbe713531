"""OpInfo entries: convolution (conv1d/2d/3d, conv_transpose1d/2d/3d) and pooling (max,
average and adaptive average), with the ``nn.functional``-only variants.

The references are direct NumPy definitions, written from PyTorch's documentation and
independent of ``_ops/conv.py``: a convolution is a sum over kernel taps of strided slices
of the padded input; a transposed convolution scatters every input element times the
kernel into the output; a pooling window is enumerated output position by output
position (with PyTorch's ``ceil_mode`` rule and average divisors).
"""
from __future__ import annotations

import numpy as np

import numtorch as torch
import numtorch.nn.functional as F

from ..opinfo import FLOATING, SAME, OpInfo, SampleInput, make, register


def _m(shape, dtype, requires_grad):
    return make(shape, dtype, requires_grad, low=-2, high=2)


def _ntuple(v, nd):
    return (v,) * nd if isinstance(v, int) else tuple(v) * (nd if len(v) == 1 else 1)


def _strided(tap, dilation, count, stride):
    """Per dim, the slice of ``count`` positions ``tap * dilation + i * stride``."""
    return tuple(slice(t * d, t * d + (n - 1) * s + 1, s)
                 for t, d, n, s in zip(tap, dilation, count, stride))


# ---------------------------------------------------------------------------------------
# Convolution


def _conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation: out[n, o, p] = sum over taps k and group channels c of
    xpadded[n, g*cg + c, p*stride + k*dilation] * w[o, c, k]."""
    nd = w.ndim - 2
    unbatched = x.ndim == nd + 1
    x = x[None] if unbatched else x
    s, d, k = _ntuple(stride, nd), _ntuple(dilation, nd), w.shape[2:]
    if padding == "valid":
        pads = [(0, 0)] * nd
    elif padding == "same":
        pads = [(dd * (kk - 1) // 2, dd * (kk - 1) - dd * (kk - 1) // 2) for dd, kk in zip(d, k)]
    else:
        pads = [(p, p) for p in _ntuple(padding, nd)]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    out = [(n - dd * (kk - 1) - 1) // ss + 1 for n, dd, kk, ss in zip(xp.shape[2:], d, k, s)]
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    result = np.zeros([n, groups, o // groups] + out, dtype=np.result_type(x, w))
    for tap in np.ndindex(*k):
        patch = xp[(slice(None), slice(None)) + _strided(tap, d, out, s)]
        patch = patch.reshape([n, groups, c // groups] + out)
        wk = w[(slice(None), slice(None)) + tap].reshape(groups, o // groups, c // groups)
        result += np.einsum("ngc...,goc->ngo...", patch, wk)
    return _finish(result.reshape([n, o] + out), b, unbatched)


def _finish(result, b, unbatched):
    """Add the bias over the channel dim; drop the batch dim of an unbatched input."""
    if b is not None:
        result = result + b.reshape((-1,) + (1,) * (result.ndim - 2))
    return result[0] if unbatched else result


def _conv_transpose_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """out[n, g*og + o, i*stride + k*dilation - padding] += x[n, g*cg + c, i] * w[g*cg + c, o, k],
    the output being (i - 1)*stride - 2*padding + dilation*(k - 1) + output_padding + 1 long."""
    nd = w.ndim - 2
    unbatched = x.ndim == nd + 1
    x = x[None] if unbatched else x
    s, d, p = _ntuple(stride, nd), _ntuple(dilation, nd), _ntuple(padding, nd)
    op, k = _ntuple(output_padding, nd), w.shape[2:]
    n, c, size = x.shape[0], x.shape[1], x.shape[2:]
    og = w.shape[1]
    full = [(i - 1) * ss + dd * (kk - 1) + 1 + oo for i, ss, dd, kk, oo in zip(size, s, d, k, op)]
    result = np.zeros([n, groups, og] + full, dtype=np.result_type(x, w))
    xg = x.reshape((n, groups, c // groups) + size)
    for tap in np.ndindex(*k):
        wk = w[(slice(None), slice(None)) + tap].reshape(groups, c // groups, og)
        scattered = np.einsum("ngc...,gco->ngo...", xg, wk)
        result[(slice(None),) * 3 + _strided(tap, d, size, s)] += scattered
    crop = tuple(slice(pp, f - pp) for pp, f in zip(p, full))
    result = result[(slice(None),) * 3 + crop]
    return _finish(result.reshape((n, groups * og) + result.shape[3:]), b, unbatched)


def _conv_samples(*cases, transposed=False):
    """cases: (input shape, weight shape, bias?, kwargs, name)."""
    def gen(dtype, requires_grad):
        for x, w, bias, kwargs, name in cases:
            args = (_m(w, dtype, requires_grad),)
            if bias:
                out_channels = w[1] * kwargs.get("groups", 1) if transposed else w[0]
                args += (_m((out_channels,), dtype, requires_grad),)
            yield SampleInput(_m(x, dtype, requires_grad), args, kwargs, name=name)
    return gen


_CONV1D = _conv_samples(
    ((2, 4, 6), (2, 4, 3), True, {}, "bias"),
    ((1, 2, 5), (3, 2, 2), False, dict(stride=2, padding=1), "stride_padding"),
    ((2, 4, 6), (4, 2, 2), False, dict(dilation=2, groups=2), "dilation_groups"),
    ((2, 5), (2, 2, 3), False, dict(padding="same", dilation=2), "unbatched_same"),
)
_CONV2D = _conv_samples(
    ((2, 2, 4, 4), (3, 2, 3, 3), True, {}, "bias"),
    ((1, 2, 6, 5), (2, 2, 2, 2), False, dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
     "stride_padding_dilation"),
    ((1, 4, 4, 4), (4, 2, 2, 2), True, dict(groups=2, padding="valid"), "groups_valid"),
)
_CONV3D = _conv_samples(
    ((1, 2, 3, 3, 2), (2, 2, 2, 2, 2), True, {}, "bias"),
    ((1, 2, 4, 3, 3), (2, 1, 2, 2, 1), False, dict(stride=2, padding=1, groups=2),
     "stride_padding_groups"),
)
_CONV_TRANSPOSE1D = _conv_samples(
    ((2, 4, 5), (4, 2, 3), True, {}, "bias"),
    ((1, 2, 4), (2, 3, 3), False, dict(stride=2, padding=1, output_padding=1), "stride_output_padding"),
    ((1, 4, 4), (4, 1, 2), True, dict(groups=2, dilation=2), "groups_dilation"),
    transposed=True,
)
_CONV_TRANSPOSE2D = _conv_samples(
    ((1, 2, 2, 3), (2, 2, 3, 2), True, dict(stride=2), "bias"),
    ((2, 4, 3, 3), (4, 1, 2, 2), False, dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0),
                                             groups=2, dilation=(1, 2)), "everything"),
    transposed=True,
)
_CONV_TRANSPOSE3D = _conv_samples(
    ((1, 2, 2, 2, 1), (2, 1, 2, 2, 2), True, dict(stride=2), "bias"),
    ((2, 2, 2, 2), (2, 1, 2, 2, 2), False, dict(padding=1, output_padding=(0, 1, 0), stride=2),
     "unbatched_padding"),
    transposed=True,
)


def _conv(name, samples, ref):
    return OpInfo(name, ref=ref, result_dtype=SAME, sample_inputs=samples,
                  dtypes=FLOATING + (torch.complex128,))


register(
    _conv("conv1d", _CONV1D, _conv_ref),
    _conv("conv2d", _CONV2D, _conv_ref),
    _conv("conv3d", _CONV3D, _conv_ref),
    _conv("conv_transpose1d", _CONV_TRANSPOSE1D, _conv_transpose_ref),
    _conv("conv_transpose2d", _CONV_TRANSPOSE2D, _conv_transpose_ref),
    _conv("conv_transpose3d", _CONV_TRANSPOSE3D, _conv_transpose_ref),
)


# ---------------------------------------------------------------------------------------
# Pooling


def _out_size(n, k, s, p, d, ceil_mode):
    """How many windows pooling takes, counted from PyTorch's documentation: windows start at
    o*s - p and must end inside the padded input; ceil_mode adds a last, overhanging window
    when the padded input has a partial step left, unless it would start in the right
    padding."""
    extent = d * (k - 1) + 1
    count = 0
    while count * s - p + extent <= n + p:
        count += 1
    if ceil_mode and (count - 1) * s - p + extent < n + p and count * s - p < n:
        count += 1
    return count


def _windows(x, k, s, p, d, ceil_mode):
    """Yield (output position, [(input position or None, value)]) over the last len(k) dims
    of x; None marks a tap in the padding (or past it, for ceil_mode windows)."""
    nd = len(k)
    spatial = x.shape[-nd:]
    out = [_out_size(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(spatial, k, s, p, d)]
    for q in np.ndindex(*out):
        taps = []
        for t in np.ndindex(*k):
            pos = tuple(qq * ss - pp + tt * dd for qq, ss, pp, tt, dd in zip(q, s, p, t, d))
            if all(0 <= i < n for i, n in zip(pos, spatial)):
                taps.append(pos)
            else:   # counted by count_include_pad only when inside the padded input
                padded = all(-pp <= i < n + pp for i, n, pp in zip(pos, spatial, p))
                taps.append(None if padded else False)
        yield q, out, taps


def _max_pool_ref(nd):
    def ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
            return_indices=False):
        k = _ntuple(kernel_size, nd)
        s = k if stride is None else _ntuple(stride, nd)
        p, d = _ntuple(padding, nd), _ntuple(dilation, nd)
        values = indices = None
        for q, out, taps in _windows(x, k, s, p, d, ceil_mode):
            if values is None:
                values = np.empty(x.shape[:-nd] + tuple(out), x.dtype)
                indices = np.empty(x.shape[:-nd] + tuple(out), np.int64)
            inside = [t for t in taps if t]
            stack = np.stack([x[(Ellipsis,) + t] for t in inside], -1)
            first = np.argmax(stack, -1)          # the first maximum, as PyTorch picks
            values[(Ellipsis,) + q] = np.take_along_axis(stack, first[..., None], -1)[..., 0]
            flat = np.array([np.ravel_multi_index(t, x.shape[-nd:]) for t in inside])
            indices[(Ellipsis,) + q] = flat[first]
        return (values, indices) if return_indices else values
    return ref


def _avg_pool_ref(nd):
    def ref(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
            divisor_override=None):
        k = _ntuple(kernel_size, nd)
        s = k if stride is None else _ntuple(stride, nd)
        p = _ntuple(padding, nd)
        result = None
        for q, out, taps in _windows(x, k, s, p, (1,) * nd, ceil_mode):
            if result is None:
                result = np.empty(x.shape[:-nd] + tuple(out), x.dtype)
            inside = [t for t in taps if t]
            total = sum(x[(Ellipsis,) + t] for t in inside)
            count = len(inside) + (sum(t is None for t in taps) if count_include_pad else 0)
            result[(Ellipsis,) + q] = total / (divisor_override or count)
        return result
    return ref


def _adaptive_avg_pool_ref(nd):
    """Window i of a dim of size n spans [floor(i*n/o), ceil((i+1)*n/o))."""
    def ref(x, output_size):
        sizes = _ntuple(output_size, nd)
        sizes = tuple(n if o is None else o for n, o in zip(x.shape[-nd:], sizes))
        result = np.empty(x.shape[:-nd] + sizes, x.dtype)
        for q in np.ndindex(*sizes):
            box = tuple(slice(i * n // o, -(-(i + 1) * n // o))
                        for i, n, o in zip(q, x.shape[-nd:], sizes))
            result[(Ellipsis,) + q] = x[(Ellipsis,) + box].mean(axis=tuple(range(-nd, 0)))
        return result
    return ref


def _unfold_ref(x, kernel_size, dilation=1, padding=0, stride=1):
    """Column (c, k) of block l holds xpadded[n, c, block position * stride + k * dilation]."""
    k, d, p, s = (_ntuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    xp = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(pp, pp) for pp in p])
    out = [(n - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, ss in zip(xp.shape[-2:], k, d, s)]
    # (..., C, K, oh, ow)
    cols = np.stack([xp[(Ellipsis,) + _strided(t, d, out, s)] for t in np.ndindex(*k)], -3)
    return cols.reshape(x.shape[:-3] + (x.shape[-3] * k[0] * k[1], out[0] * out[1]))


def _fold_ref(cols, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: every column entry added back where unfold took it."""
    size = _ntuple(output_size, 2)
    k, d, p = _ntuple(kernel_size, 2), _ntuple(dilation, 2), _ntuple(padding, 2)
    s = _ntuple(stride, 2)
    c = cols.shape[-2] // (k[0] * k[1])
    shape = cols.shape[:-2] + (c,) + tuple(n + 2 * pp for n, pp in zip(size, p))
    out = [(n - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, ss in zip(shape[-2:], k, d, s)]
    blocks = cols.reshape(cols.shape[:-2] + (c, k[0] * k[1], out[0], out[1]))
    result = np.zeros(shape, cols.dtype)
    for i, t in enumerate(np.ndindex(*k)):
        result[(Ellipsis,) + _strided(t, d, out, s)] += blocks[..., i, :, :]
    return result[..., p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


def _pool_samples(*cases):
    """cases: (input shape, args, kwargs, name)."""
    def gen(dtype, requires_grad):
        for shape, args, kwargs, name in cases:
            yield SampleInput(_m(shape, dtype, requires_grad), args, kwargs, name=name)
    return gen


def _functional(name, **kw):
    """An entry for ``numtorch.nn.functional.<name>`` (no top-level function)."""
    return OpInfo(f"nn.functional.{name}", op=getattr(F, name), method=None,
                  torch_op=lambda t: getattr(t.nn.functional, name), **kw)


_POOL = dict(result_dtype=SAME, dtypes=FLOATING)


def _max_pool(nd, *cases):
    """PyTorch's top-level max_poolNd has no return_indices: compare with nn.functional's."""
    return OpInfo(f"max_pool{nd}d", ref=_max_pool_ref(nd), sample_inputs=_pool_samples(*cases),
                  torch_op=lambda t: getattr(t.nn.functional, f"max_pool{nd}d"), **_POOL)


register(
    _max_pool(1, ((2, 3, 6), (2,), {}, ""),
              ((1, 2, 7), (3, 2, 1), {}, "stride_padding"),
              ((2, 7), (2,), dict(stride=2, dilation=2, ceil_mode=True, return_indices=True),
               "unbatched_dilation_ceil_indices")),
    _max_pool(2, ((1, 2, 4, 4), (2,), {}, ""),
              ((1, 2, 5, 6), ((3, 2), (2, 1), 1), dict(ceil_mode=True), "ceil"),
              ((2, 5, 5), (3,), dict(stride=2, padding=1, return_indices=True), "unbatched_indices")),
    _max_pool(3, ((1, 2, 4, 4, 2), (2,), {}, ""),
              ((1, 1, 3, 3, 3), (3, 2, 1), dict(ceil_mode=True, return_indices=True), "ceil_indices")),
    OpInfo("avg_pool1d", ref=_avg_pool_ref(1), sample_inputs=_pool_samples(
        ((2, 3, 6), (2,), {}, ""),
        ((1, 2, 6), (3, 2, 1), dict(ceil_mode=True), "ceil_past_padding_counted"),
        ((2, 6), (3, 2, 1, True, False), {}, "unbatched_ceil_uncounted")), **_POOL),
    _functional("avg_pool2d", ref=_avg_pool_ref(2), sample_inputs=_pool_samples(
        ((1, 2, 4, 4), (2,), {}, ""),
        ((1, 2, 5, 6), ((3, 2), (2, 1), 1), dict(ceil_mode=True, count_include_pad=False), "ceil"),
        ((2, 5, 5), (3,), dict(stride=2, padding=1, divisor_override=2), "divisor")), **_POOL),
    OpInfo("adaptive_avg_pool1d", ref=_adaptive_avg_pool_ref(1), sample_inputs=_pool_samples(
        ((2, 3, 7), (3,), {}, ""),
        ((1, 2, 5), (5,), {}, "identity"),
        ((2, 4), (6,), {}, "unbatched_upsample")), **_POOL),
    _functional("unfold", ref=_unfold_ref, sample_inputs=_pool_samples(
        ((1, 2, 4, 4), (2,), {}, ""),
        ((2, 5, 4), ((2, 3),), dict(dilation=(2, 1), padding=1, stride=2), "unbatched_everything")),
        **_POOL),
    _functional("fold", ref=_fold_ref, sample_inputs=_pool_samples(
        ((1, 8, 9), ((4, 4), 2), {}, ""),
        ((12, 4), ((4, 3), (2, 3)), dict(dilation=(2, 1), padding=1, stride=2), "unbatched_everything")),
        **_POOL),
    _functional("adaptive_avg_pool2d", ref=_adaptive_avg_pool_ref(2), sample_inputs=_pool_samples(
        ((1, 2, 5, 7), ((2, 3),), {}, ""),
        ((2, 4, 6), ((None, 4),), {}, "unbatched_none")), **_POOL),
)
