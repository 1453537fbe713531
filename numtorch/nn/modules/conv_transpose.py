"""Transposed convolution layers: ``ConvTranspose1d``, ``ConvTranspose2d``,
``ConvTranspose3d``. The arithmetic is ``nn.functional.conv_transpose1d/2d/3d``
(numtorch._ops.conv); this file owns the parameters, PyTorch's initialization and argument
checks, and ``output_size``."""
from __future__ import annotations

from .. import functional as F
from ._utils import register_weight_bias, reset_fan_in_uniform
from .conv import _ConvNd
from .module import Module

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvTransposeNd(Module):
    """Transposed convolution: parameters and PyTorch's initialization (the weight is
    (in_channels, out_channels // groups, *kernel_size)); ``F.conv_transpose{n}d``."""
    _n = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        tup = (lambda x: tuple(x) if isinstance(x, (tuple, list)) else (x,) * self._n)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.padding = tup(kernel_size), tup(stride), tup(padding)
        self.output_padding, self.dilation = tup(output_padding), tup(dilation)
        self.padding_mode, self.transposed = padding_mode, True
        register_weight_bias(self, (in_channels, out_channels // groups) + self.kernel_size,
                             out_channels, bias=bias, device=device, dtype=dtype)
        reset_fan_in_uniform(self.weight, self.bias)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        output_size = list(output_size)[-self._n:]
        spatial = input.shape[-self._n:]
        pads = []
        for i in range(self._n):
            smallest = ((spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
                        + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            extra = output_size[i] - smallest
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {smallest} to "
                                 f"{smallest + max(self.stride[i], self.dilation[i]) - 1}")
            pads.append(extra)
        return tuple(pads)

    def forward(self, input, output_size=None):
        fn = getattr(F, f"conv_transpose{self._n}d")
        return fn(input, self.weight, self.bias, self.stride, self.padding,
                  self._output_padding(input, output_size), self.groups, self.dilation)

    extra_repr = _ConvNd.extra_repr   # the same fields, output_padding included


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over an input of shape (N, C_in, L)."""
    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over an input of shape (N, C_in, H, W)."""
    _n = 2



class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over an input of shape (N, C_in, D, H, W)."""
    _n = 3
