"""Everyday scans, searches, quantiles and distances of ``torch``: ``cummax``/``cummin``,
``logcumsumexp``, ``searchsorted``/``bucketize``, ``quantile``/``nanquantile``, ``cdist``,
``dist``; and the top-level spellings PyTorch keeps of functional ops (``torch.dropout``,
``torch.layer_norm``, ``torch.embedding`` …).

Every function is a composition of existing ops (so autograd, vmap, meta and compile come
from their rules); this file must not define primitives. Docstrings follow PyTorch's.

Note [Scans as masked reductions]
``cummax``, ``cummin`` and ``logcumsumexp`` have no scan primitive to build on, so each
output position i reduces the masked row ``x[j] for j <= i``: an (n, n) mask along the
scanned dimension. That costs n**2 work and memory per slice, fine for the lengths scripts
scan (sequence lengths, a few thousand at most), and keeps every transform rule for free.
The indices of cummax/cummin are the last position reaching the running extreme (PyTorch's
choice on ties); the values are gathered at them, so the gradient flows to that position
only, as PyTorch's backward scatters it.
"""
from __future__ import annotations

import math as _pymath

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from . import creation, index as _index, math, reduce, shape, sorting
from ._common import canonical_dim, check_tensor, scalar_type_name, to_tensor
from .. import return_types as _rt

__all__ = ["cummax", "cummin", "logcumsumexp", "searchsorted", "bucketize", "quantile",
           "nanquantile", "cdist", "dist"]



def _scan_mask(n, device):
    """mask[i, j] = j <= i (Note [Scans as masked reductions])."""
    j = creation.arange(n, device=device)
    return math.le(shape.unsqueeze(j, 0), shape.unsqueeze(j, 1))


def _cum_extreme(input, dim, largest, fn, result):
    check_tensor(input, "input", fn)
    if input.dim() == 0:
        return result(input.clone(), creation.zeros((), dtype=_dt.int64, device=input.device))
    d = canonical_dim(dim, input.dim())
    x = shape.movedim(input, d, -1)
    n = x.shape[-1]
    if n == 0:
        return result(input.clone(), creation.zeros(tuple(input.shape), dtype=_dt.int64,
                                                    device=input.device))
    mask = _scan_mask(n, input.device)
    rows = shape.unsqueeze(x, -2).detach()                       # [..., 1, n]: x[j]
    if input.dtype is _dt.bool_:
        rows = rows.to(_dt.int64)
    fill = ((-_pymath.inf if largest else _pymath.inf) if rows.dtype.is_floating_point
            else _dt_limit(rows.dtype, largest))
    masked = math.where(mask, rows, to_tensor(fill, rows.dtype))
    ext = (reduce.amax if largest else reduce.amin)(masked, -1, True)   # [..., n, 1]
    hit = math.logical_and(mask, math.logical_or(
        math.eq(rows, ext), math.logical_and(math.isnan(rows), math.isnan(ext))))
    j = creation.arange(n, device=input.device)
    idx = reduce.amax(math.where(hit, j, to_tensor(-1, _dt.int64)), -1)   # last such j
    values = _index.gather(x, -1, idx)
    return result(shape.movedim(values, -1, d), shape.movedim(idx, -1, d))


def _dt_limit(d, largest):
    import numpy as np
    info = np.iinfo(d.np)
    return int(info.min) if largest else int(info.max)


def cummax(input, dim):
    """Returns a namedtuple (values, indices) where ``values`` is the cumulative maximum of
    elements of ``input`` in the dimension ``dim`` and ``indices`` is the index location of
    each maximum value found in the dimension ``dim``."""
    return _cum_extreme(input, dim, True, "cummax", _rt.cummax)


def cummin(input, dim):
    """Returns a namedtuple (values, indices) where ``values`` is the cumulative minimum of
    elements of ``input`` in the dimension ``dim`` and ``indices`` is the index location of
    each minimum value found in the dimension ``dim``."""
    return _cum_extreme(input, dim, False, "cummin", _rt.cummin)


def logcumsumexp(input, dim, *, dtype=None):
    """Returns the logarithm of the cumulative summation of the exponentiation of elements
    of ``input`` in the dimension ``dim``: y_i = log(sum_{j<=i} exp(x_j))."""
    check_tensor(input, "input", "logcumsumexp")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")
    if input.dim() == 0:
        return input.clone()
    d = canonical_dim(dim, input.dim())
    x = shape.movedim(input, d, -1)
    n = x.shape[-1]
    if n == 0:
        return input.clone()
    masked = math.where(_scan_mask(n, input.device), shape.unsqueeze(x, -2),
                        to_tensor(-_pymath.inf, x.dtype))
    return shape.movedim(reduce.logsumexp(masked, -1), -1, d)


# ---------------------------------------------------------------------------------------
# Searching sorted sequences

def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Find the indices from the innermost dimension of ``sorted_sequence`` such that, if
    the corresponding values in ``input`` were inserted before the indices, the order of the
    innermost dimension would be preserved. ``right`` (or ``side="right"``) returns the last
    such index instead of the first."""
    check_tensor(sorted_sequence, "sorted_sequence", "searchsorted")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    values = to_tensor(input) if scalar else input
    seq = sorted_sequence
    if sorter is not None:
        seq = _index.gather(seq, -1, sorter)
    if seq.dim() > 1 and (seq.dim() != values.dim() or tuple(seq.shape[:-1]) != tuple(
            values.shape[:-1])):
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
    # count of boundaries below (left) or not above (right) each value
    b = shape.unsqueeze(seq, -2) if seq.dim() > 1 else seq
    v = shape.unsqueeze(values, -1)
    below = math.le(b, v) if right else math.lt(b, v)
    out = reduce.sum(below, -1)
    return out.to(_dt.int32) if out_int32 else out


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """Returns the indices of the buckets to which each value in ``input`` belongs, where
    the boundaries of the buckets are set by the 1-D ``boundaries``."""
    check_tensor(boundaries, "boundaries", "bucketize")
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---------------------------------------------------------------------------------------
# Quantiles

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(fn, input, q, dim, keepdim, interpolation, ignore_nan):
    check_tensor(input, "input", fn)
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{fn}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{fn}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    q_scalar = not isinstance(q, Tensor)
    qs = creation.tensor(float(q), dtype=input.dtype, device=input.device) if q_scalar else q
    if not q_scalar:
        if qs.dim() > 1:
            raise RuntimeError(f"{fn}() q must be a scalar or 1D tensor")
        if qs.dtype != input.dtype:
            raise RuntimeError(f"{fn}() q tensor must be same dtype as the input tensor")
    qv = qs._data
    import numpy as np
    if qv.__class__ is np.ndarray and qv.size and (qv.min() < 0 or qv.max() > 1):
        raise RuntimeError(f"{fn}() q values must be in the range [0, 1]" if not q_scalar
                           else f"{fn}() q must be in the range [0, 1] but got {q}")
    if dim is None or input.dim() == 0:
        x = shape.reshape(input, (-1,))
    else:
        x = shape.movedim(input, canonical_dim(dim, input.dim()), -1)
    n = x.shape[-1]
    if n == 0:
        raise RuntimeError(f"{fn}() input tensor must be non-empty")
    srt = sorting.sort(x, -1).values                       # NaN sorts last
    nans = math.isnan(x)
    count = reduce.sum(math.logical_not(nans), -1, True) if ignore_nan else None
    qflat = shape.reshape(qs, (-1,))                        # [Q]
    last = (math.sub(count, 1).to(input.dtype) if ignore_nan     # [..., 1]
            else float(n - 1))
    # all-NaN rows give -q (clamped to 0); the upper clamp keeps rounding inside the row
    pos = math.clamp(math.mul(qflat, last), min=0.0, max=float(n - 1))
    pos = pos.expand(*x.shape[:-1], qflat.shape[0])          # [..., Q]
    lo = math.floor(pos)
    hi = math.ceil(pos)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = math.round(pos)
    lo_i, hi_i = lo.to(_dt.int64).detach(), hi.to(_dt.int64).detach()
    a, b = _index.gather(srt, -1, lo_i), _index.gather(srt, -1, hi_i)
    if interpolation == "midpoint":
        out = math.add(a, math.mul(math.sub(b, a), 0.5))
        out = math.where(math.eq(lo, hi), a, out)
    elif interpolation == "linear":
        out = math.lerp(a, b, math.sub(pos, lo.detach()))   # differentiable in q too
    else:
        out = a
    nan = creation.full((), _pymath.nan, dtype=input.dtype, device=input.device)
    bad = math.eq(count, 0) if ignore_nan else reduce.any(nans, -1, True)
    out = math.where(bad, nan, out)
    out = shape.movedim(out, -1, 0)                          # [Q, ...]
    if keepdim:
        if dim is None:
            out = shape.reshape(out, (out.shape[0],) + (1,) * input.dim())
        elif input.dim():
            out = shape.unsqueeze(out, canonical_dim(dim, input.dim()) + 1)
    return shape.select(out, 0, 0) if q_scalar or qs.dim() == 0 else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """Computes the q-th quantiles of each row of ``input`` along ``dim`` (of all elements
    if ``dim`` is None), interpolating between the two nearest sorted values as
    ``interpolation`` says. A NaN in a row makes its quantiles NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """A variant of ``quantile`` that "ignores" NaN values, computing the quantiles as if
    NaN values in ``input`` did not exist (all-NaN rows give NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ---------------------------------------------------------------------------------------
# Distances

def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Computes batched the p-norm distance between each pair of the two collections of row
    vectors: x1 is [B, P, M], x2 is [B, R, M], the result [B, P, R]."""
    check_tensor(x1, "x1", "cdist")
    check_tensor(x2, "x2", "cdist")
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    from .linalg_ops import vector_norm
    diff = math.sub(shape.unsqueeze(x1, -2), shape.unsqueeze(x2, -3))   # [..., P, R, M]
    return vector_norm(diff, p, -1)


def dist(input, other, p=2):
    """Returns the p-norm of (input - other); the shapes must be broadcastable."""
    check_tensor(input, "input", "dist")
    check_tensor(other, "other", "dist")
    from .linalg_ops import vector_norm
    return vector_norm(math.sub(input, other), p)


def _attach_methods():
    for name in ("cummax cummin logcumsumexp quantile nanquantile dist").split():
        setattr(Tensor, name, globals()[name])


_attach_methods()


# ---------------------------------------------------------------------------------------
# Top-level spellings of functional ops (PyTorch keeps them in ``torch``; same functions,
# ATen's argument order where it differs from ``torch.nn.functional``).

def _functional():
    from ..nn import functional as F
    return F


def dropout(input, p, train):
    """``torch.dropout(input, p, train)``: ``F.dropout(input, p, training=train)``."""
    return _functional().dropout(input, p, training=train)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``torch.layer_norm``: ``F.layer_norm`` (``cudnn_enable`` is accepted and ignored)."""
    return _functional().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``torch.group_norm``: ``F.group_norm`` (``cudnn_enabled`` is accepted and ignored)."""
    return _functional().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """``torch.batch_norm`` (ATen's order: weight and bias before the running statistics):
    ``F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)``."""
    return _functional().batch_norm(input, running_mean, running_var, weight, bias, training,
                                    momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices)`` (ATen's order: the table first):
    ``F.embedding(indices, weight)``; ``padding_idx=-1`` means none."""
    return _functional().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def selu(input):
    """``torch.selu``: ``F.selu``."""
    return _functional().selu(input)


def celu(input, alpha=1.0):
    """``torch.celu``: ``F.celu``."""
    return _functional().celu(input, alpha)


def threshold(input, threshold, value):
    """``torch.threshold``: ``F.threshold``."""
    return _functional().threshold(input, threshold, value)


def relu_(input):
    """``torch.relu_``: ``F.relu_`` (in place)."""
    return _functional().relu_(input)


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """``torch.binary_cross_entropy_with_logits`` (ATen's integer ``reduction``: 0 none,
    1 mean, 2 sum; PyTorch 2.13 defaults it to 0 here, unlike F's "mean"):
    ``F.binary_cross_entropy_with_logits``."""
    red = _REDUCTIONS.get(reduction, reduction)
    return _functional().binary_cross_entropy_with_logits(input, target, weight,
                                                          reduction=red, pos_weight=pos_weight)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """``torch.cosine_similarity``: ``F.cosine_similarity``."""
    return _functional().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    """``torch.pairwise_distance``: ``F.pairwise_distance``."""
    return _functional().pairwise_distance(x1, x2, p, eps, keepdim)


__all__ += ["dropout", "layer_norm", "group_norm", "batch_norm", "embedding", "selu", "celu",
            "threshold", "relu_", "binary_cross_entropy_with_logits", "cosine_similarity",
            "pairwise_distance"]
