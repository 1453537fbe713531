"""Layers scripts reach for next: ``PReLU``, ``RReLU``, ``Hardshrink``, ``Softshrink``,
``PixelShuffle``/``PixelUnshuffle``, the padding layers (``ZeroPad*``, ``ConstantPad*``,
``ReflectionPad*``, ``ReplicationPad*``, ``CircularPad*``), ``CosineSimilarity`` and
``PairwiseDistance``: thin Module wrappers over ``nn.functional``; no math of their own."""
from __future__ import annotations

from ... import _ops
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["PReLU", "RReLU", "Hardshrink", "Softshrink", "PixelShuffle", "PixelUnshuffle",
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d", "CosineSimilarity", "PairwiseDistance"]


class PReLU(Module):
    """Applies ``max(0, x) + a * min(0, x)`` with a learnable ``a`` (one, or one per
    channel), initialised to ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_ops.creation.full((num_parameters,), float(init),
                                                   dtype=dtype, device=device))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU (``F.rrelu``): random negative slopes in training, their mean
    in evaluation."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                           else "")


class _Shrink(Module):
    _fn = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """Applies the hard shrinkage function element-wise (``F.hardshrink``)."""
    _fn = F.hardshrink


class Softshrink(_Shrink):
    """Applies the soft shrinkage function element-wise (``F.softshrink``)."""
    _fn = F.softshrink


class PixelShuffle(Module):
    """Rearranges (*, C * r^2, H, W) to (*, C, H * r, W * r) (``F.pixel_shuffle``)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearranges (*, C, H * r, W * r) to (*, C * r^2, H, W) (``F.pixel_unshuffle``)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


def _pad_tuple(padding, n):
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = tuple(int(p) for p in padding)
    if len(padding) != 2 * n:
        raise ValueError(f"padding must be an int or a tuple of {2 * n} ints, got {padding}")
    return padding


class _PadNd(Module):
    """Pads the last ``_dims`` dimensions with ``F.pad(mode=_mode)``; ``padding`` is an int
    or (left, right[, top, bottom[, front, back]])."""
    _mode = "constant"
    _dims = 1

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _pad_tuple(padding, self._dims)
        self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return (f"padding={self.padding}, value={self.value}" if self._mode == "constant"
                else f"{self.padding}")


def _pad_class(name, mode, dims, doc, zero=False):
    if zero:
        def __init__(self, padding):
            _PadNd.__init__(self, padding, 0.0)

        def extra_repr(self):
            return f"{self.padding}"
        body = {"__init__": __init__, "extra_repr": extra_repr}
    elif mode == "constant":
        def __init__(self, padding, value):
            _PadNd.__init__(self, padding, value)
        body = {"__init__": __init__}
    else:
        def __init__(self, padding):
            _PadNd.__init__(self, padding)
        body = {"__init__": __init__}
    return type(name, (_PadNd,), dict(body, _mode=mode, _dims=dims, __doc__=doc,
                                      __module__=__name__, __qualname__=name))


_DOCS = {"zero": "Pads the input tensor boundaries with zero.",
         "constant": "Pads the input tensor boundaries with a constant value.",
         "reflect": "Pads the input tensor using the reflection of the input boundary.",
         "replicate": "Pads the input tensor using replication of the input boundary.",
         "circular": "Pads the input tensor using circular padding of the input boundary."}

for _d in (1, 2, 3):
    for _prefix, _mode in (("Zero", "zero"), ("Constant", "constant"), ("Reflection", "reflect"),
                           ("Replication", "replicate"), ("Circular", "circular")):
        _name = f"{_prefix}Pad{_d}d"
        globals()[_name] = _pad_class(_name, "constant" if _mode == "zero" else _mode, _d,
                                      _DOCS[_mode], zero=_mode == "zero")
del _d, _prefix, _mode, _name


class CosineSimilarity(Module):
    """Returns the cosine similarity between x1 and x2, computed along ``dim``
    (``F.cosine_similarity``)."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """Computes the pairwise distance between input vectors, or between columns of input
    matrices (``F.pairwise_distance``)."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
