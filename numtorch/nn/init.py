"""``torch.nn.init``: in-place parameter initializers.

Every initializer fills its tensor in place under ``no_grad`` and returns it. On a meta
tensor (``device='meta'``) it is a no-op: there is no data to fill, and a module built on
the meta device keeps its shapes only. Random draws use numtorch's generator, so values
differ from PyTorch's for the same seed; the distributions are the same.
"""
from __future__ import annotations

import math
import warnings

from .._ops import math as M
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_"]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (``'relu'`` → sqrt(2), ``'tanh'`` → 5/3, …)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _skip(tensor):
    return tensor.is_meta


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills ``tensor`` with values drawn from U(a, b)."""
    if _skip(tensor):
        return tensor
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills ``tensor`` with values drawn from N(mean, std²)."""
    if _skip(tensor):
        return tensor
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _erfinv(y):
    # Giles' single-precision approximation of erfinv ("Approximating the erfinv function",
    # GPU Computing Gems, 2011), then one Newton step on erf; accurate to ~1e-9 relative.
    w = -M.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = M.where(small, w, 5.0) - 2.5
    wl = M.sqrt(M.where(small, 5.0, w)) - 3.0
    p_small = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p_small = p_small * ws + c
    p_large = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p_large = p_large * wl + c
    x = M.where(small, p_small, p_large) * y
    step = (M.erf(x) - y) / (M.exp(-x * x) * (2.0 / math.sqrt(math.pi)))
    return M.where(M.isfinite(step), x - step, x)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills ``tensor`` from N(mean, std²) truncated to ``[a, b]`` (inverse-CDF sampling)."""
    if _skip(tensor):
        return tensor

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.copy_(M.clamp(_erfinv(tensor) * (std * math.sqrt(2.0)) + mean, a, b))
        return tensor


def constant_(tensor, val):
    """Fills ``tensor`` with the value ``val``."""
    if _skip(tensor):
        return tensor
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fills ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fills ``tensor`` with zeros."""
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fills the 2-D ``tensor`` with the identity matrix (ones on the diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if _skip(tensor):
        return tensor
    from .._ops.creation import eye
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups=1):
    """Fills a 3-, 4- or 5-D convolution weight with the Dirac delta (identity convolution)."""
    import numpy as np
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if _skip(tensor):
        return tensor
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    delta = np.zeros(tuple(sizes), dtype=tensor._data.dtype)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            delta[(g * out_chans_per_grp + d, d) + centre] = 1
    from .._ops.creation import from_numpy
    with no_grad():
        return tensor.copy_(from_numpy(delta))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def _zero_element(tensor):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``."""
    if _zero_element(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std²) with ``std = gain / sqrt(fan)``."""
    if _zero_element(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fills ``tensor`` (flattened to 2-D) with a (semi-)orthogonal matrix, scaled by ``gain``."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or _skip(tensor):
        return tensor
    try:
        from .. import linalg
        qr = linalg.qr
    except (ImportError, AttributeError):
        raise NotImplementedError("nn.init.orthogonal_ needs numtorch.linalg.qr, which this "
                                  "build does not provide yet") from None
    from .._ops.creation import randn
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = randn(rows, cols, dtype=tensor.dtype, generator=generator)
    if rows < cols:
        flattened = flattened.t()
    q, r = qr(flattened)
    q = q * M.sign(r.diagonal())
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.copy_(q.reshape(tuple(tensor.shape)) * gain)
    return tensor


# Deprecated aliases without the trailing underscore (PyTorch still accepts them).
def _deprecated(fn):
    def alias(*args, **kwargs):
        warnings.warn(f"nn.init.{fn.__name__[:-1]} is now deprecated in favor of "
                      f"nn.init.{fn.__name__}.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    alias.__name__ = fn.__name__[:-1]
    return alias


uniform, normal, constant = _deprecated(uniform_), _deprecated(normal_), _deprecated(constant_)
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
