"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d`` (over numtorch._ops.conv, see
Note [Convolution ops] in functional.py), ``AdaptiveAvgPool1d/2d/3d`` and
``AdaptiveMaxPool1d/2d/3d`` (nn/_adaptive_max_pool.py)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)`` inputs."""
    _fn = staticmethod(lambda *a, **k: F.max_pool1d(*a, **k))


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)`` inputs."""
    _fn = staticmethod(lambda *a, **k: F.max_pool2d(*a, **k))


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)`` inputs."""
    _fn = staticmethod(lambda *a, **k: F.max_pool3d(*a, **k))


class AvgPool1d(Module):
    """1-D average pooling over ``(N, C, L)`` inputs."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(AvgPool1d):
    """2-D average pooling over ``(N, C, H, W)`` inputs."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool1d(Module):
    """Average pooling of the last dim into ``output_size`` bins."""
    _fn = staticmethod(lambda x, s: F.adaptive_avg_pool1d(x, s))

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    """Average pooling of the last two dims into an ``output_size`` grid (None keeps a dim)."""
    _fn = staticmethod(lambda x, s: F.adaptive_avg_pool2d(x, s))


class AvgPool3d(AvgPool2d):
    """3-D average pooling over ``(N, C, D, H, W)`` inputs."""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    """Average pooling of the last three dims into an ``output_size`` grid (None keeps a
    dim)."""
    _fn = staticmethod(lambda x, s: F.adaptive_avg_pool3d(x, s))


class _AdaptiveMaxPoolNd(Module):
    """Max pooling of the last dims into ``output_size`` bins (None keeps a dim);
    ``return_indices`` also returns the positions of the maxima."""
    __constants__ = ["output_size", "return_indices"]
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over ``(N, C, L)`` inputs."""
    _fn = staticmethod(lambda *a: F.adaptive_max_pool1d(*a))


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over ``(N, C, H, W)`` inputs."""
    _fn = staticmethod(lambda *a: F.adaptive_max_pool2d(*a))


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over ``(N, C, D, H, W)`` inputs."""
    _fn = staticmethod(lambda *a: F.adaptive_max_pool3d(*a))
