"""``Normal`` and ``Uniform``: the two continuous distributions with reparameterized
samples (``rsample``), written with numtorch ops."""
from __future__ import annotations

import math

from .._core.tensor import Size
from .._ops import math as _M
from .._ops.creation import rand, randn
from . import constraints
from .distribution import Distribution, broadcast_all

__all__ = ["Normal", "Uniform"]


class Normal(Distribution):
    """Creates a normal (also called Gaussian) distribution parameterized by ``loc`` (mean)
    and ``scale`` (standard deviation)."""

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
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = randn(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - _M.log(self.scale) \
            - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + _M.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        """The inverse cumulative distribution function: ``loc + scale * sqrt(2) *
        erfinv(2 value - 1)``."""
        return self.loc + self.scale * _M.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + _M.log(self.scale)


class Uniform(Distribution):
    """Generates uniformly distributed random samples from the half-open interval
    ``[low, high)``."""

    arg_constraints = {"low": constraints.less_than(0.0), "high": constraints.greater_than(0.0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        # PyTorch states low < high as low's constraint LessThan(high) (and the mirror for
        # high); the bounds are the other parameter, set here for the check and the repr.
        self.arg_constraints = {"low": _LessThanOther(self.high), "high": _GreaterThanOther(self.low)}
        super().__init__(Size(tuple(self.low.shape)), validate_args=validate_args)

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return _M.log(lb * ub) - _M.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return _M.clamp(result, 0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return _M.log(self.high - self.low)


def _bound_repr(v):
    return v.item() if v.numel() == 1 else v


class _LessThanOther(constraints.Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={_bound_repr(self.upper_bound)})"


class _GreaterThanOther(constraints.Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={_bound_repr(self.lower_bound)})"
