"""``nn.functional`` activations and rearrangements that scripts reach for next: ``prelu``,
``rrelu``, ``hardshrink``/``softshrink``, ``pixel_shuffle``/``pixel_unshuffle``, and the
trailing-underscore in-place spellings (``elu_``, ``selu_``, ``celu_``, ``leaky_relu_``,
``hardtanh_``, ``threshold_``, ``rrelu_``).

Each is a composition of existing ops; this file must not define primitives. Docstrings
follow PyTorch's.
"""
from __future__ import annotations

from .._ops import math as M, shape as S
from .._ops import creation
from .._ops._common import check_tensor

__all__ = ["prelu", "rrelu", "rrelu_", "hardshrink", "softshrink", "pixel_shuffle",
           "pixel_unshuffle", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_",
           "threshold_"]


def _F():
    from . import functional
    return functional


def prelu(input, weight):
    """Applies element-wise ``max(0, x) + weight * min(0, x)``, ``weight`` one learnable
    slope or one per channel (dimension 1 of ``input``)."""
    check_tensor(input, "input", "prelu")
    check_tensor(weight, "weight", "prelu")
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.dim() >= 2 else 1
        if input.dim() == 0 or n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
        w = S.reshape(weight, (n,) + (1,) * (input.dim() - 2)) if input.dim() >= 2 else weight
    else:
        w = S.reshape(weight, ())
    return M.where(M.gt(input, 0), input, M.mul(w, input))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: negative inputs are scaled by a slope drawn uniformly from
    ``[lower, upper]`` in training, and by ``(lower + upper) / 2`` otherwise."""
    check_tensor(input, "input", "rrelu")
    if training:
        slope = creation.rand_like(input) * (upper - lower) + lower
        fn = lambda x: M.where(M.ge(x, 0), x, M.mul(x, slope))          # noqa: E731
    else:
        fn = lambda x: _F().leaky_relu(x, (lower + upper) / 2)        # noqa: E731
    return _F()._apply(input, fn, inplace, "rrelu_")


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place version of ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)


def _check_lambda(lambd, input, fn):
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{'Double' if input.dtype.name == 'float64' else 'Float'}, but "
                           f"found {lambd:g}")


def hardshrink(input, lambd=0.5):
    """Applies the hard shrinkage function element-wise: x where |x| > lambd, else 0."""
    check_tensor(input, "input", "hardshrink")
    return M.where(M.gt(M.abs(input), lambd), input, M.mul(input, 0))


def softshrink(input, lambd=0.5):
    """Applies the soft shrinkage function element-wise: x - lambd where x > lambd,
    x + lambd where x < -lambd, else 0."""
    check_tensor(input, "input", "softshrink")
    _check_lambda(lambd, input, "softshrink")
    return M.where(M.gt(input, lambd), M.sub(input, lambd),
                   M.where(M.lt(input, -lambd), M.add(input, lambd), M.mul(input, 0)))


def pixel_shuffle(input, upscale_factor):
    """Rearranges elements in a tensor of shape (*, C * r^2, H, W) to a tensor of shape
    (*, C, H * r, W * r), where r is the ``upscale_factor``."""
    check_tensor(input, "input", "pixel_shuffle")
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    nb = len(batch)
    x = S.reshape(input, (*batch, c // (r * r), r, r, h, w))
    x = S.permute(x, *range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return S.reshape(x, (*batch, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """Reverses ``pixel_shuffle``: rearranges a tensor of shape (*, C, H * r, W * r) to a
    tensor of shape (*, C * r^2, H, W), where r is the ``downscale_factor``."""
    check_tensor(input, "input", "pixel_unshuffle")
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not "
                               f"divisible by {r}")
    nb = len(batch)
    x = S.reshape(input, (*batch, c, h // r, r, w // r, r))
    x = S.permute(x, *range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return S.reshape(x, (*batch, c * r * r, h // r, w // r))


# In-place spellings: the functional op with ``inplace=True``.
def elu_(input, alpha=1.0):
    """In-place version of ``elu``."""
    return _F().elu(input, alpha, inplace=True)


def selu_(input):
    """In-place version of ``selu``."""
    return _F().selu(input, inplace=True)


def celu_(input, alpha=1.0):
    """In-place version of ``celu``."""
    return _F().celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place version of ``leaky_relu``."""
    return _F().leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place version of ``hardtanh``."""
    return _F().hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold, value):
    """In-place version of ``threshold``."""
    return _F().threshold(input, threshold, value, inplace=True)
