"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``.

The arithmetic is ``nn.functional.conv1d/conv2d/conv3d`` (numtorch._ops.conv, Note [Convolution
ops] in functional.py). This file owns the parameters, PyTorch's initialization and
argument checks, and the padding logic: ``padding='same'`` that cannot be split evenly and
``padding_mode`` other than 'zeros' are applied with ``F.pad`` before an unpadded
convolution, so the convolution op only ever sees integer padding.
"""
from __future__ import annotations

from .. import functional as F
from ._utils import register_weight_bias, reset_fan_in_uniform
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d"]


def _ntuple(n, name):
    def parse(x):
        if isinstance(x, (tuple, list)):
            if len(x) != n:
                raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {x}")
            return tuple(x)
        return (x,) * n
    return parse


class _ConvNd(Module):
    _n = 0
    _fn = None

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        tup = _ntuple(self._n, "kernel_size")
        kernel_size, stride, dilation = tup(kernel_size), tup(stride), tup(dilation)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = tup(padding)
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0,) * self._n
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad order: last dim first, (left, right) per dim.
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * self._n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(self._n - 1, -1, -1)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in (0, 1)]
        register_weight_bias(self, (out_channels, in_channels // groups) + kernel_size,
                             out_channels, bias=bias, device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_fan_in_uniform(self.weight, self.bias)

    def _conv_forward(self, input, weight, bias):
        pads = self._reversed_padding_repeated_twice
        even = all(pads[2 * i] == pads[2 * i + 1] for i in range(self._n))
        if self.padding_mode == "zeros" and even:
            padding = tuple(reversed(pads[::2]))
        else:
            mode = "constant" if self.padding_mode == "zeros" else self.padding_mode
            input = F.pad(input, pads, mode=mode)
            padding = (0,) * self._n
        return type(self)._fn(input, weight, bias, self.stride, padding, self.dilation,
                              self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._n:     # transposed convolutions
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("padding_mode", "zeros")


class Conv1d(_ConvNd):
    """1-D convolution over an input of shape ``(N, C_in, L)`` (or unbatched ``(C_in, L)``)."""
    _n = 1
    _fn = staticmethod(lambda *a: F.conv1d(*a))


class Conv2d(_ConvNd):
    """2-D convolution over an input of shape ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``)."""
    _n = 2
    _fn = staticmethod(lambda *a: F.conv2d(*a))


class Conv3d(_ConvNd):
    """3-D convolution over an input of shape ``(N, C_in, D, H, W)`` (or unbatched
    ``(C_in, D, H, W)``)."""
    _n = 3
    _fn = staticmethod(lambda *a: F.conv3d(*a))
