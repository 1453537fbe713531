"""``nn.functional.interpolate`` (and ``upsample``): resampling of the spatial dims of a
``(N, C, *spatial)`` tensor — nearest, nearest-exact, linear/bilinear/trilinear, bicubic
and area.

Every mode is separable: it resamples one spatial dim at a time by gathering input rows
at indices computed from the sizes alone (``index_select``) and mixing them with constant
weights. The indices and weights are NumPy arrays computed here from shapes, never from
tensor values, so autograd, vmap, jvp and compile see ordinary ops and need no rules of
their own. This file must not define primitives.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .._ops import shape as S
from .._ops._common import check_tensor
from .._ops.creation import tensor as _tensor
from .._ops.index import index_select

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_INTERPOLATING = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Down/up samples the input to either the given ``size`` or the given ``scale_factor``.

    The algorithm used for interpolation is determined by ``mode``. Currently temporal,
    spatial and volumetric sampling are supported, i.e. expected inputs are 3-D, 4-D or 5-D
    in shape. The input dimensions are interpreted in the form: `mini-batch x channels x
    [optional depth] x [optional height] x width`. The modes available for resizing are:
    `nearest`, `linear` (3D-only), `bilinear`, `bicubic` (4D-only), `trilinear` (5D-only),
    `area`, `nearest-exact`.

    ``align_corners``: geometrically, we consider the pixels of the input and output as
    squares rather than points. If set to ``True``, the input and output tensors are
    aligned by the center points of their corner pixels, preserving the values at those
    pixels. If set to ``False``, they are aligned by the corner points of their corner
    pixels, and the interpolation uses edge value padding for out-of-boundary values.
    Only for the interpolating modes; default ``False``.
    ``recompute_scale_factor``: if ``True``, ``scale_factor`` only computes the output
    size, and the interpolation uses the ratio of the sizes; otherwise ``scale_factor``
    itself is used.
    """
    check_tensor(input, "input", "interpolate")
    if mode not in _MODES:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not implemented in numtorch")
    dim = input.ndim - 2
    if dim not in (1, 2, 3):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})")
    if mode in _INTERPOLATING and _INTERPOLATING[mode] != dim:
        needs = {"linear": "3D", "bilinear": "4D", "bicubic": "4D", "trilinear": "5D"}[mode]
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {needs} input")
    in_sizes = tuple(input.shape[2:])
    out_sizes, scales = _output_sizes(in_sizes, size, scale_factor, dim, recompute_scale_factor)
    if mode != "area" and (min(out_sizes) <= 0 or min(in_sizes) <= 0):
        names = ("D", "H", "W")[3 - dim:]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input ("
                           + ", ".join(f"{n}: {v}" for n, v in zip(names, in_sizes)) + ") output ("
                           + ", ".join(f"{n}: {v}" for n, v in zip(names, out_sizes)) + ")")
    if mode == "area":
        from .._ops import conv
        pool = (conv.adaptive_avg_pool1d, conv.adaptive_avg_pool2d, conv.adaptive_avg_pool3d)[dim - 1]
        return pool(input, out_sizes)
    out = input
    for d, (n_in, n_out, scale) in enumerate(zip(in_sizes, out_sizes, scales)):
        axis = 2 + d
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest(n_in, n_out, scale, mode == "nearest-exact")
            out = index_select(out, axis, _tensor(idx, device=input.device))
        else:
            idx, w = (_cubic if mode == "bicubic" else _linear)(n_in, n_out, scale, align_corners,
                                                                input.dtype)
            out = _mix(out, axis, idx, w)
    return out


def _output_sizes(in_sizes, size, scale_factor, dim, recompute):
    """(output sizes, scales for the kernels: 1 / scale_factor, or None for in/out)."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = _per_dim(size, dim, "size", numbers.Integral)
        if any(s < 0 for s in sizes):
            raise ValueError(f"interpolate(): argument 'size' must be non-negative, got {size}")
        return sizes, (None,) * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    factors = _per_dim(scale_factor, dim, "scale_factor", numbers.Real)
    if any(f <= 0 for f in factors):
        raise ValueError(f"interpolate(): argument 'scale_factor' must be positive, got {scale_factor}")
    sizes = tuple(int(math.floor(float(n) * f)) for n, f in zip(in_sizes, factors))
    return sizes, ((None,) * dim if recompute else tuple(1.0 / f for f in factors))


def _per_dim(value, dim, name, kind):
    if isinstance(value, (tuple, list)):
        if len(value) != dim:
            raise ValueError(f"Input and {name} must have the same number of spatial dimensions,"
                             f" but got input with spatial dimensions of {dim} and {name} of "
                             f"length {len(value)}. Please provide input tensor in (N, C, d1, "
                             f"d2, ...,dK) format and {name} in (o1, o2, ...,oK) format.")
        values = tuple(value)
    else:
        values = (value,) * dim
    for v in values:
        if isinstance(v, bool) or not isinstance(v, kind):
            expected = "int" if kind is numbers.Integral else "float"
            raise TypeError(f"interpolate(): argument '{name}' must be {expected} or a tuple of "
                            f"{expected}s, got {type(v).__name__}")
    return values


# Note [Interpolation indices]
# The source coordinate of output index j follows PyTorch's kernels
# (aten/src/ATen/native/UpSample.h): scale = in / out, or 1 / scale_factor when one was
# given and not recomputed; align_corners=True uses (in - 1) / (out - 1) instead. Nearest
# reads floor(j * scale) (nearest-exact floor((j + 0.5) * scale)), computed in float32 as
# PyTorch does whatever the dtype, so index ties round the same way. Linear reads
# src = (j + 0.5) * scale - 0.5 (clamped at 0; j * scale when aligned) and mixes the two
# neighbours; bicubic mixes four with Keys' kernel (A = -0.75), clamping indices at the
# borders. Weights are computed in float64 and cast to the input's dtype.

def _scale(n_in, n_out, scale, align_corners, np_dtype=np.float64):
    if align_corners:
        return np_dtype((n_in - 1) / (n_out - 1)) if n_out > 1 else np_dtype(0.0)
    return np_dtype(scale) if scale is not None and scale > 0 else np_dtype(n_in / n_out)


def _nearest(n_in, n_out, scale, exact):
    s = _scale(n_in, n_out, scale, False, np.float32)
    j = np.arange(n_out, dtype=np.float32)
    src = np.floor((j + np.float32(0.5)) * s if exact else j * s).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _source(n_in, n_out, scale, align_corners, cubic):
    s = _scale(n_in, n_out, scale, align_corners)
    j = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return s * j
    src = s * (j + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _linear(n_in, n_out, scale, align_corners, dtype):
    src = _source(n_in, n_out, scale, align_corners, False)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    return (i0, i1), (1.0 - lam, lam)


def _cubic(n_in, n_out, scale, align_corners, dtype):
    src = _source(n_in, n_out, scale, align_corners, True)
    f = np.floor(src)
    t = src - f
    a = -0.75

    def near(x):   # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):    # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    base = f.astype(np.int64)
    idx = tuple(np.clip(base + k, 0, n_in - 1) for k in (-1, 0, 1, 2))
    return idx, weights


def _mix(x, axis, indices, weights):
    """sum_k x[..., indices[k], ...] * weights[k] along ``axis`` (weights broadcast there)."""
    shape = [1] * x.ndim
    shape[axis] = -1
    np_dtype = x.dtype.np
    out = None
    for idx, w in zip(indices, weights):
        term = index_select(x, axis, _tensor(idx, device=x.device)) * S.reshape(
            _tensor(w.astype(np_dtype), device=x.device), shape)
        out = term if out is None else out + term
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Upsamples the input to the given ``size`` or ``scale_factor`` (deprecated in PyTorch
    in favour of :func:`interpolate`, which this calls)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Upsamples the input using nearest neighbours' pixel values (``interpolate(...,
    mode='nearest')``)."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Upsamples the input using bilinear upsampling with ``align_corners=True``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
