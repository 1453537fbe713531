"""Dropout modules: active in training mode, the identity in eval mode."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d"]


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """During training, zeroes elements with probability ``p`` and scales the rest by 1/(1-p)."""
    _fn = F.dropout


class Dropout1d(_DropoutNd):
    """During training, zeroes whole channels of ``(N, C, L)`` inputs with probability ``p``."""
    _fn = F.dropout1d


class Dropout2d(_DropoutNd):
    """During training, zeroes whole channels of ``(N, C, H, W)`` inputs with probability ``p``."""
    _fn = F.dropout2d
