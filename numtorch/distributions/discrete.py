"""``Bernoulli`` and ``Categorical``: the discrete distributions, parameterized by
``probs`` or ``logits`` (exactly one; the other is computed on first use)."""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Size, Tensor
from .._ops import math as _M
from .._ops import reduce as _R
from .._ops.creation import bernoulli as _bernoulli, full, multinomial as _multinomial
from .._ops.index import gather
from .._ops.shape import broadcast_tensors
from ..nn._functional_losses import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution, broadcast_all, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _LazyParams:
    """``probs``/``logits`` where only one was given: the other computed once, on use."""

    _is_binary = False

    @property
    def probs(self):
        if "probs" not in self.__dict__:
            self.__dict__["probs"] = logits_to_probs(self.logits, is_binary=self._is_binary)
        return self.__dict__["probs"]

    @property
    def logits(self):
        if "logits" not in self.__dict__:
            self.__dict__["logits"] = probs_to_logits(self.probs, is_binary=self._is_binary)
        return self.__dict__["logits"]


class Bernoulli(_LazyParams, Distribution):
    """Creates a Bernoulli distribution parameterized by ``probs`` or ``logits`` (but not
    both): samples are binary (0 or 1), 1 with probability ``p``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _is_binary = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        (self.__dict__[name],) = broadcast_all(value)
        super().__init__(Size(tuple(self.__dict__[name].shape)), validate_args=validate_args)

    @property
    def param_shape(self):
        return self.__dict__.get("probs", self.__dict__.get("logits")).shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return _M.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        from ..autograd.grad_mode import no_grad
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _bernoulli(self.probs.expand(tuple(shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_tensors(self.logits, value.to(self.logits.dtype))
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        from .._ops.creation import arange
        values = arange(2, dtype=self.probs.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((2,) + tuple(self.batch_shape)) if expand else values


class _CategoricalSupport(constraints.Constraint):
    is_discrete = True

    def __init__(self, num_events):
        self.inner = constraints.integer_interval(0, num_events - 1)

    def check(self, value):
        return self.inner.check(value)

    def __repr__(self):
        return repr(self.inner)


class Categorical(_LazyParams, Distribution):
    """Creates a categorical distribution parameterized by either ``probs`` or ``logits``
    (but not both): samples are integers from ``{0, ..., K-1}`` where ``K`` is
    ``probs.size(-1)``. ``probs`` need not sum to one (it is normalized over the last dim);
    ``logits`` are unnormalized log probabilities."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if not isinstance(given, Tensor):
            raise TypeError(f"Categorical(): argument '{'probs' if probs is not None else 'logits'}'"
                            f" must be Tensor, not {type(given).__name__}")
        if given.ndim < 1:
            raise ValueError("`probs` parameter must be at least one-dimensional.")
        if not given.dtype.is_floating_point:
            given = given.to(_dt.get_default_dtype())
        if probs is not None:
            self.__dict__["probs"] = given / _R.sum(given, -1, keepdim=True)
        else:
            self.__dict__["logits"] = given - _R.logsumexp(given, -1, keepdim=True)
        self._num_events = given.shape[-1]
        super().__init__(Size(tuple(given.shape[:-1])), validate_args=validate_args)

    @property
    def support(self):
        return _CategoricalSupport(self._num_events)

    @property
    def param_shape(self):
        return self.__dict__.get("probs", self.__dict__.get("logits")).shape

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self):
        return _R.argmax(self.probs, -1)

    @property
    def variance(self):
        return full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape=Size()):
        from ..autograd.grad_mode import no_grad
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            n = int(np.prod(tuple(sample_shape), dtype=np.int64))
            samples_2d = _multinomial(probs_2d, n, True).t()
            return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return gather(log_pmf, -1, value[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(self.logits.dtype.np).min)
        logits = _M.clamp(self.logits, min=min_real)
        return -_R.sum(logits * self.probs, -1)

    def enumerate_support(self, expand=True):
        from .._ops.creation import arange
        values = arange(self._num_events, dtype=_dt.int64)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values
