"""``Exponential`` and ``Laplace``: continuous distributions with closed-form ``cdf`` and
``icdf``, so ``rsample`` is the inverse cdf of a uniform draw (reparameterized), written
with numtorch ops as PyTorch writes them."""
from __future__ import annotations

import math

import numpy as np

from .._core.tensor import Size
from .._ops import math as _M
from .._ops.creation import rand, zeros_like
from . import constraints
from .distribution import Distribution, broadcast_all

__all__ = ["Exponential", "Laplace"]


class Exponential(Distribution):
    """Creates a Exponential distribution parameterized by ``rate``: density
    ``rate * exp(-rate * x)`` for ``x >= 0``."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size(tuple(self.rate.shape)), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        u = rand(tuple(self._extended_shape(sample_shape)), dtype=self.rate.dtype,
                 device=self.rate.device)
        return -_M.log1p(-u) / self.rate       # u in [0, 1): finite

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _M.log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - _M.exp(-self.rate * value)

    def icdf(self, value):
        return -_M.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - _M.log(self.rate)


class Laplace(Distribution):
    """Creates a Laplace distribution parameterized by ``loc`` and ``scale``: density
    ``exp(-|x - loc| / scale) / (2 scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(Size(tuple(self.loc.shape)), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=Size()):
        # u uniform on (-1, 1): -1 excluded (by the dtype's eps, as PyTorch) so log1p(-|u|)
        # stays finite
        eps = float(np.finfo(self.loc.dtype.np).eps)
        u = rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype,
                 device=self.loc.device) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * _M.sign(u) * _M.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_M.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * _M.sign(value - self.loc) * _M.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * _M.sign(term) * _M.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + _M.log(2 * self.scale)
