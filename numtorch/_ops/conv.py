"""Convolution and pooling with PyTorch's semantics: conv1d/2d/3d, conv_transpose1d/2d/3d,
max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d.

Every convolution is one `conv` bind (``_prims/conv.py``) plus a bias add. Pooling is a
decomposition into existing primitives (Note [Pooling by strided slices]), so its
derivatives and batch rules come from theirs. This module owns PyTorch's argument
conventions (int or tuple, 'same'/'valid', unbatched inputs) and its error messages.
"""
from __future__ import annotations

import math

import numpy as np

from .._core.primitive import bind
from .._core.tensor import Tensor
from .._prims import shape as S
from .._prims.conv import conv as _conv_prim
from . import math as M
from . import reduce as R
from . import shape as SH
from .creation import arange, tensor
from ._common import scalar_type_name



def _tuple(value, n, name, fn_dims):
    """An int or a sequence as an n-tuple, with PyTorch's message for a wrong length."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {fn_dims} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _check_args(input, weight, fn):
    for arg, name in ((input, "input"), (weight, "weight")):
        if not isinstance(arg, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(arg).__name__}")


def _batchify(input, nd, fn):
    """(C, *S) -> (1, C, *S); PyTorch's message for any other rank."""
    if input.ndim == nd + 1:
        return input.unsqueeze(0), True
    if input.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, "
                           f"but got input of size: {list(input.shape)}")
    return input, False


def _check_dtypes(input, weight, bias):
    if input.dtype != weight.dtype:
        a, b = (scalar_type_name(t.dtype) for t in (input, weight))
        raise RuntimeError(f"Input type (torch.{a}Tensor) and weight type (torch.{b}Tensor) "
                           "should be the same or input should be a MKLDNN tensor and weight is "
                           "a dense tensor")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_c_name(input)}) and bias type ({_c_name(bias)}) should "
                           "be the same")


def _c_name(t):
    from .linalg import _NAMES
    return _NAMES.get(t.dtype.name, t.dtype.name)


def _conv_params(input, weight, stride, padding, dilation, groups, nd):
    k = weight.ndim - 2
    stride = _tuple(stride, nd, "stride", k)
    dilation = _tuple(dilation, nd, "dilation", k)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    ksize = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            totals = [d * (kk - 1) for d, kk in zip(dilation, ksize)]
            pads = tuple((t // 2, t - t // 2) for t in totals)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple(padding, nd, "padding", k)
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
        pads = tuple((p, p) for p in padding)
    return stride, pads, dilation


def _check_weight_rank(weight, nd, stride):
    if weight.ndim != nd + 2:
        s = _tuple(stride, nd, "stride", nd) if not isinstance(stride, str) else (1,) * nd
        raise RuntimeError(f"expected stride to be a single integer value or a list of "
                           f"{weight.ndim - 2} values to match the convolution dimensions, but "
                           f"got stride={list(s)}")


def _check_bias(weight, bias, out_channels):
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")


def _add_bias(out, bias, nd):
    if bias is None:
        return out
    return out + bias.reshape((bias.shape[0],) + (1,) * nd)


def _convnd(input, weight, bias, stride, padding, dilation, groups, nd, fn):
    _check_args(input, weight, fn)
    x, unbatched = _batchify(input, nd, fn)
    _check_weight_rank(weight, nd, stride)
    stride, pads, dilation = _conv_params(x, weight, stride, padding, dilation, groups, nd)
    o = weight.shape[0]
    if o < groups or o % groups:
        what = "at least" if o < groups else "divisible by"
        raise RuntimeError(f"Given groups={groups}, expected weight to be {what} {groups} at "
                           f"dimension 0, but got weight of size [{list(weight.shape)}] instead")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {weight.shape[1] * groups} channels, "
                           f"but got {x.shape[1]} channels instead")
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)]
    kernel = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(p < k for p, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                           f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be "
                           "greater than actual input size")
    _check_bias(weight, bias, o)
    _check_dtypes(x, weight, bias)
    out = bind(_conv_prim, x, weight, stride=stride, padding=pads, lhs_dilation=(1,) * nd,
               rhs_dilation=dilation, groups=int(groups))
    out = _add_bias(out, bias, nd)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1D convolution over an input signal composed of several input planes.

    >>> conv1d(randn(2, 3, 10), randn(4, 3, 3)).shape
    torch.Size([2, 4, 8])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2D convolution over an input image composed of several input planes.

    >>> conv2d(randn(2, 3, 8, 8), randn(4, 3, 3, 3), padding=1).shape
    torch.Size([2, 4, 8, 8])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 3D convolution over an input image composed of several input planes."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


# Note [Transposed convolution]
# conv_transpose(x, w) is the gradient of conv with respect to its input, so it is a conv
# of x dilated by the stride (lhs_dilation) with the kernel flipped in space and its
# in/out channels swapped within each group; PyTorch's padding p removes p from the
# "full" padding d*(k-1) on both sides and output_padding adds rows at the end.

def _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation,
                      nd, fn):
    _check_args(input, weight, fn)
    if isinstance(padding, str):
        raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
    x, unbatched = _batchify(input, nd, fn)
    _check_weight_rank(weight, nd, stride)
    stride, pads, dilation = _conv_params(x, weight, stride, padding, dilation, groups, nd)
    output_padding = _tuple(output_padding, nd, "output_padding", nd)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        names = ("height", "width") if nd == 2 else (("depth", "height", "width") if nd == 3 else ("width",))
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))
    cin = weight.shape[0]
    if cin % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size [{list(weight.shape)}] instead")
    if x.shape[1] != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {cin} channels, but got {x.shape[1]} "
                           "channels instead")
    cog, ksize = weight.shape[1], tuple(weight.shape[2:])
    _check_bias(weight, bias, cog * groups)
    _check_dtypes(x, weight, bias)
    w = SH.flip(weight, tuple(range(2, 2 + nd)))
    w = w.reshape((groups, cin // groups, cog) + ksize).transpose(1, 2)
    w = w.reshape((groups * cog, cin // groups) + ksize)
    full = [d * (k - 1) for d, k in zip(dilation, ksize)]
    conv_pads = tuple((f - lo, f - hi + op) for f, (lo, hi), op in zip(full, pads, output_padding))
    out = bind(_conv_prim, x, w, stride=(1,) * nd, padding=conv_pads, lhs_dilation=stride,
               rhs_dilation=dilation, groups=int(groups))
    out = _add_bias(out, bias, nd)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 1D transposed convolution operator (a "deconvolution")."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 2D transposed convolution operator (a "deconvolution").

    >>> conv_transpose2d(randn(1, 4, 5, 5), randn(4, 2, 3, 3), stride=2).shape
    torch.Size([1, 2, 11, 11])
    """
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Applies a 3D transposed convolution operator (a "deconvolution")."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 3, "conv_transpose3d")


# ---------------------------------------------------------------------------------------
# Note [Pooling by strided slices]
# A pooling window of k taps is k strided `slice`s of the padded input, one per kernel
# offset, stacked on a new axis: (N, C, k, *out). The cost is k binds whatever the tensor
# size, and every rule comes from slice/pad/where/reduce_sum. max_pool selects the first
# maximum of each window (argmax, as PyTorch's kernel does) through `where`, so its
# gradient goes to that one element, not split among ties as amax's would be (ties are
# common after a ReLU). avg_pool sums the slices and divides by a divisor that depends
# only on shapes.

def _pool_sizes(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


_WORDS = {2: "two", 3: "three"}


def _pool_tuple(v, nd, name, fn, omit=False):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * nd
    if len(v) == nd:
        return v
    if nd == 1:
        if fn == "max_pool1d":
            raise RuntimeError(f"max_pool1d() {name} must be an int, list of ints or tuple of "
                               f"ints of size 1 but got size {len(v)}")
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(v)})")
    how = "either be omitted, a single int," if omit else "either be a single int,"
    raise RuntimeError(f"{fn}: {name} must {how} or a tuple of {_WORDS[nd]} ints")


def _pool_params(kernel_size, stride, padding, dilation, nd, fn):
    """Kernel, stride, padding, dilation as nd-tuples, checked with PyTorch's messages."""
    k = _pool_tuple(kernel_size, nd, "kernel_size", fn)
    omitted = stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0)
    s = k if omitted else _pool_tuple(stride, nd, "stride", fn, omit=True)
    p, d = _pool_tuple(padding, nd, "padding", fn), _pool_tuple(dilation, nd, "dilation", fn)
    one_d = fn == "max_pool1d"
    letters = ("T", "H", "W")[3 - nd:]
    if any(a <= 0 for a in k):
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k[0]}" if one_d
                           else "kernel size should be greater than zero, but got " +
                           " ".join(f"k{n}: {v}" for n, v in zip(letters, k)))
    if any(a <= 0 for a in s):
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s[0]}"
                           if one_d else "stride should not be zero")
    if any(a <= 0 for a in d):
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d[0]}" if one_d
                           else "dilation should be greater than zero, but got " +
                           " ".join(f"dilation{n}: {v}" for n, v in zip(letters, d)))
    for kk, pp, dd in zip(k, p, d):
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"max_pool1d() padding should be at most half of kernel size, but got "
                f"padding={pp} and kernel_size={kk}" if one_d else
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}")
    return k, s, p, d


def _pool_input(input, nd, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        if fn == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                               f"0 dim batch size for input, but got:{list(input.shape)}")
        if fn == "avg_pool1d":
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"avg_pool1d)")
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    if any(n == 0 for n in input.shape[-nd - 1:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    if input.dtype.name == "bool":
        raise NotImplementedError(f'"{fn}" not implemented for \'Bool\'')
    if input.ndim == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _windows(x, k, s, p, d, out, fill):
    """The pooling windows of x (N, C, *S) as (N, C, prod(k), *out) (Note [Pooling by strided slices])."""
    nd = len(k)
    hi = [(o - 1) * st + dd * (kk - 1) + 1 - n - pp
          for o, st, dd, kk, n, pp in zip(out, s, d, k, x.shape[2:], p)]
    if any(p) or any(h > 0 for h in hi):
        cfg = ((0, 0, 0), (0, 0, 0)) + tuple((pp, max(h, 0), 0) for pp, h in zip(p, hi))
        x = bind(S.pad, x, padding_value=fill, config=cfg)
    if tuple(s) == tuple(k) and all(dd == 1 for dd in d):
        # Windows that tile the input (2x2 stride 2): a reshape and one transpose.
        if any(o * kk != n for o, kk, n in zip(out, k, x.shape[2:])):
            x = bind(S.slice_p, x, start_indices=(0,) * (nd + 2),
                     limit_indices=tuple(x.shape[:2]) + tuple(o * kk for o, kk in zip(out, k)),
                     strides=(1,) * (nd + 2))
        split = x.reshape(tuple(x.shape[:2]) + tuple(v for pair in zip(out, k) for v in pair))
        perm = (0, 1) + tuple(3 + 2 * i for i in range(nd)) + tuple(2 + 2 * i for i in range(nd))
        return split.permute(perm).reshape(tuple(x.shape[:2]) + (math.prod(k),) + tuple(out))
    slices = []
    for offset in np.ndindex(*k):
        starts = tuple(o * dd for o, dd in zip(offset, d))
        limits = tuple(st0 + (o - 1) * st + 1 for st0, o, st in zip(starts, out, s))
        slices.append(bind(S.slice_p, x, start_indices=(0, 0) + starts,
                           limit_indices=tuple(x.shape[:2]) + limits, strides=(1, 1) + tuple(s)))
    if len(slices) == 1:
        return slices[0].unsqueeze(2)
    return SH.stack(slices, 2)


def _lowest(dtype):
    if dtype.is_floating_point:
        return -math.inf
    if dtype.name == "bool":
        return False
    return int(np.iinfo(dtype.name).min)


def _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd, fn):
    x, unbatched = _pool_input(input, nd, fn)
    k, s, p, d = _pool_params(kernel_size, stride, padding, dilation, nd, fn)
    spatial = tuple(x.shape[2:])
    out = tuple(_pool_sizes(n, kk, st, pp, dd, ceil_mode) for n, kk, st, pp, dd in zip(spatial, k, s, p, d))
    if any(o <= 0 for o in out):
        raise RuntimeError(_too_small(x, out, fn))
    win = _windows(x, k, s, p, d, out, _lowest(x.dtype))
    idx = R.argmax(win, 2, keepdim=True)
    taps = arange(win.shape[2], device=x.device).reshape((1, 1, -1) + (1,) * nd)
    zero = tensor(0, dtype=x.dtype, device=x.device)   # a meta zero on the meta device
    result = R.sum(M.where(taps == idx, win, zero), 2).to(x.dtype)
    if not return_indices:
        return result.squeeze(0) if unbatched else result
    indices = _flat_indices(idx.squeeze(2), spatial, k, s, p, d, out, x.device)
    if unbatched:
        return result.squeeze(0), indices.squeeze(0)
    return result, indices


def _flat_indices(tap, spatial, k, s, p, d, out, device):
    """Index into the flattened input plane of each window's chosen tap (return_indices)."""
    nd = len(k)
    flat = None
    for axis in range(nd):
        stride_after = math.prod(k[axis + 1:])
        offset = M.remainder(M.floor_divide(tap, tensor(stride_after)), tensor(k[axis]))
        shape = [1] * nd
        shape[axis] = out[axis]
        start = (arange(out[axis], device=device) * s[axis] - p[axis]).reshape(shape)
        pos = start + offset * d[axis]
        flat = pos if flat is None else flat * spatial[axis] + pos
    return flat


def _too_small(x, out, fn):
    if fn == "max_pool1d":
        return f"max_pool1d() Invalid computed output size: {max(out[0], 0)}"
    lead = (x.shape[1], 1) if fn == "avg_pool1d" else (x.shape[1],)
    size = "x".join(str(n) for n in lead + tuple(x.shape[2:]))
    return (f"Given input size: ({size}). Calculated output size: "
            f"({'x'.join(str(n) for n in lead + tuple(max(o, 0) for o in out))}). "
            "Output size is too small")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 1D max pooling over an input signal composed of several input planes."""
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                       1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 2D max pooling over an input signal composed of several input planes.

    >>> max_pool2d(randn(1, 3, 8, 8), 2).shape
    torch.Size([1, 3, 4, 4])
    """
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                       2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Applies a 3D max pooling over an input signal composed of several input planes."""
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                       3, "max_pool3d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool1d`` returning ``(output, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool2d`` returning ``(output, indices)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """``max_pool3d`` returning ``(output, indices)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_divisor(spatial, k, s, p, out, count_include_pad, dtype, device):
    """Per-window divisors (PyTorch's: windows are clipped to the padded input, and also to
    the input itself when padding is not counted), an outer product over the dims."""
    div = np.ones(out)
    for axis, (n, kk, st, pp, o) in enumerate(zip(spatial, k, s, p, out)):
        start = np.arange(o) * st - pp
        end = np.minimum(start + kk, n + pp)
        if not count_include_pad:
            end = np.minimum(end, n) - np.maximum(start, 0)
        else:
            end = end - start
        shape = [1] * len(out)
        shape[axis] = o
        div = div * end.reshape(shape)
    return tensor(div, dtype=dtype, device=device)


def _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, nd, fn):
    x, unbatched = _pool_input(input, nd, fn)
    k, s, p, d = _pool_params(kernel_size, stride, padding, 1, nd, fn)
    spatial = tuple(x.shape[2:])
    out = tuple(_pool_sizes(n, kk, st, pp, 1, ceil_mode) for n, kk, st, pp in zip(spatial, k, s, p))
    if any(o <= 0 for o in out):
        raise RuntimeError(_too_small(x, out, fn))
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    total = R.sum(_windows(x, k, s, p, d, out, 0), 2)
    if divisor_override is not None:
        divisor = divisor_override
    else:
        divisor = _avg_divisor(spatial, k, s, p, out, count_include_pad, x.dtype, x.device)
    if x.dtype.is_floating_point or x.dtype.is_complex:
        result = total / divisor
    else:
        result = M.div(total, divisor, rounding_mode="trunc").to(x.dtype)
    return result.squeeze(0) if unbatched else result


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Applies a 1D average pooling over an input signal composed of several input planes."""
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                       1, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Applies 2D average-pooling operation in kH x kW regions by step size sH x sW steps.

    >>> avg_pool2d(ones(1, 1, 4, 4), 2)
    tensor([[[[1., 1.],
              [1., 1.]]]])
    """
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, 2, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Applies 3D average-pooling operation in kT x kH x kW regions by step size sT x sH x sW."""
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, 3, "avg_pool3d")


# Adaptive average pooling: window i of a dim of size n spans [floor(i*n/o), ceil((i+1)*n/o)).
# An average over a box is a product of per-dim averages, so the whole op is one constant
# averaging matrix per dim, applied with matmul (exact, and every rule comes for free).

def _adaptive_matrix(n, o, dtype, device):
    starts = (np.arange(o) * n) // o
    ends = -((-(np.arange(1, o + 1) * n)) // o)
    cols = np.arange(n)
    m = ((cols >= starts[:, None]) & (cols < ends[:, None])) / (ends - starts)[:, None]
    return tensor(m, dtype=dtype, device=device)


def _adaptive_avg_poolnd(input, output_size, nd, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        raise RuntimeError(f"{fn}: output_size must be {nd}")
    spatial = tuple(input.shape[-nd:])
    sizes = tuple(n if o is None else int(o) for n, o in zip(spatial, output_size))
    if any(o < 0 for o in sizes):
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {list(sizes)}")
    x = input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise NotImplementedError(f'"{fn}" not implemented for \'{scalar_type_name(x.dtype)}\'')
    for axis, (n, o) in enumerate(zip(spatial, sizes)):
        if n == o:
            continue
        dim = x.ndim - nd + axis
        m = _adaptive_matrix(n, o, x.dtype, x.device)            # (o, n)
        x = SH.movedim(SH.movedim(x, dim, -1) @ m.mT, -1, dim)
    return x


def adaptive_avg_pool1d(input, output_size):
    """Applies a 1D adaptive average pooling over an input signal."""
    return _adaptive_avg_poolnd(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """Applies a 2D adaptive average pooling over an input signal.

    >>> adaptive_avg_pool2d(randn(1, 3, 7, 9), (1, 1)).shape
    torch.Size([1, 3, 1, 1])
    """
    return _adaptive_avg_poolnd(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """Applies a 3D adaptive average pooling over an input signal."""
    return _adaptive_avg_poolnd(input, output_size, 3, "adaptive_avg_pool3d")


# ---------------------------------------------------------------------------------------
# unfold (im2col) and fold (col2im, its transpose): the pooling windows again.

def _fold_params(kernel_size, dilation, padding, stride):
    k, d = _pool_tuple(kernel_size, 2, "kernel_size", "unfold"), _pool_tuple(dilation, 2, "dilation", "unfold")
    p, s = _pool_tuple(padding, 2, "padding", "unfold"), _pool_tuple(stride, 2, "stride", "unfold")
    for name, v, bad in (("kernel size", k, 0), ("dilation", d, 0), ("stride", s, 0)):
        if any(a <= bad for a in v):
            key = name.split()[0]
            raise RuntimeError(f"{name} should be greater than zero, but got {key}_height: {v[0]} "
                               f"{key}_width: {v[1]}")
    if any(a < 0 for a in p):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    return k, d, p, s


def _blocks(spatial, k, d, p, s):
    return tuple((n + 2 * pp - dd * (kk - 1) - 1) // st + 1 for n, kk, dd, pp, st in zip(spatial, k, d, p, s))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks from a batched input tensor: (N, C*prod(k), L).

    >>> unfold(randn(1, 2, 4, 4), 2).shape
    torch.Size([1, 8, 9])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    k, d, p, s = _fold_params(kernel_size, dilation, padding, stride)
    x, unbatched = (input.unsqueeze(0), True) if input.ndim == 3 else (input, False)
    out = _blocks(tuple(x.shape[2:]), k, d, p, s)
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of sliding "
                           f"blocks as {out}, but its components must be at least one.")
    win = _windows(x, k, s, p, d, out, 0)
    cols = win.reshape((x.shape[0], x.shape[1] * k[0] * k[1], out[0] * out[1]))
    return cols.squeeze(0) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combines an array of sliding local blocks into a large containing tensor (sums overlaps).

    >>> fold(ones(1, 4, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {list(input.shape)}")
    k, d, p, s = _fold_params(kernel_size, dilation, padding, stride)
    size = _pool_tuple(output_size, 2, "output_size", "fold")
    x, unbatched = (input.unsqueeze(0), True) if input.ndim == 2 else (input, False)
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={x.shape[1]} and kernel_size={k}.")
    out = _blocks(size, k, d, p, s)
    if x.shape[2] != out[0] * out[1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, "
                           f"stride={s}, expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {out[0]} * {out[1]} = "
                           f"{out[0] * out[1]}, but got input.size(2)={x.shape[2]}.")
    n, c = x.shape[0], x.shape[1] // kk
    cols = x.reshape((n, c, kk) + out)
    padded = tuple(m + 2 * pp for m, pp in zip(size, p))
    total = None
    for i, offset in enumerate(np.ndindex(*k)):
        cfg = [(0, 0, 0), (0, 0, 0)]
        for o, dd, st, o_n, full in zip(offset, d, s, out, padded):
            lo = o * dd
            cfg.append((lo, full - lo - (o_n - 1) * st - 1, st - 1))
        part = bind(S.pad, cols.select(2, i), padding_value=0.0, config=tuple(cfg))
        total = part if total is None else total + part
    if any(p):
        total = bind(S.slice_p, total, start_indices=(0, 0) + p,
                     limit_indices=(n, c) + tuple(pp + m for pp, m in zip(p, size)), strides=(1,) * 4)
    return total.squeeze(0) if unbatched else total
