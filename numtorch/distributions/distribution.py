"""``Distribution``, the base class of ``torch.distributions``, and the helpers its
subclasses share (``broadcast_all``, probabilities <-> logits).

Everything is written with numtorch ops, so ``log_prob``, ``rsample`` and ``entropy`` are
differentiable and work under vmap. Argument validation (``validate_args``, on by default
as in PyTorch) reads values, so it runs on concrete tensors only (Note [Validation reads
values]).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Size, Tensor
from .._ops import math as _M
from .._ops import reduce as _R
from .._ops._common import broadcast_shapes, result_type
from .._ops.creation import tensor as _tensor
from .._ops.shape import broadcast_tensors

__all__ = ["Distribution", "broadcast_all", "probs_to_logits", "logits_to_probs"]

# Note [Validation reads values]
# PyTorch checks parameters and samples against their constraints with data-dependent
# Python control flow. Here that check runs when the tensor is concrete (eager values);
# under a transform (vmap, grad of a traced function, make_graph) the values are symbolic
# and the check is skipped, as raising there would make the transforms unusable.


def _concrete(t):
    """The ndarray of ``t``, or None where values are symbolic (Note [Validation reads values])."""
    try:
        return t._concrete("validate_args")
    except Exception:  # noqa: BLE001 - a tracer or meta tensor: no value to check
        return None


def broadcast_all(*values):
    """Broadcasts the given values (Tensors or numbers) to one shape; numbers become
    tensors of the dtype the Tensors give (the default float dtype when there are none)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or "
                         "torch.tensor.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = result_type(*tensors) if tensors else _dt.get_default_dtype()
    if not dtype.is_floating_point:
        dtype = _dt.get_default_dtype()
    device = tensors[0].device if tensors else None
    out = [v if isinstance(v, Tensor) else _tensor(float(v), dtype=dtype, device=device)
           for v in values]
    return tuple(broadcast_tensors(*out))


def probs_to_logits(probs, is_binary=False):
    """Converts probabilities into logits (log-odds if ``is_binary``), clamped away from 0
    and 1 by the dtype's eps as PyTorch does."""
    eps = float(np.finfo(probs.dtype.np).eps)
    p = _M.clamp(probs, eps, 1 - eps)
    return _M.log(p) - _M.log1p(-p) if is_binary else _M.log(p)


def logits_to_probs(logits, is_binary=False):
    """Converts logits into probabilities: sigmoid if ``is_binary``, else softmax over the
    last dim."""
    return _M.sigmoid(logits) if is_binary else _R.softmax(logits, -1)


class Distribution:
    """Distribution is the abstract base class for probability distributions.

    ``batch_shape`` is the shape over which parameters are batched, ``event_shape`` the
    shape of a single sample; ``sample(sample_shape)`` returns ``sample_shape + batch_shape
    + event_shape``.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints: dict = {}
    support = None

    @staticmethod
    def set_default_validate_args(value):
        """Sets whether validation is enabled or disabled by default."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args(): expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             property):
                    continue   # a lazily computed parameter (probs from logits, ...)
                value = getattr(self, param)
                valid = _concrete(constraint.check(value))
                if valid is not None and not valid.all():
                    raise ValueError(
                        f"Expected parameter {param} (Tensor of shape {tuple(value.shape)}) of "
                        f"distribution {self!r} to satisfy the constraint {constraint!r}, but "
                        f"found invalid values:\n{value}")

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation of the distribution."""
        return _M.sqrt(self.variance)

    def sample(self, sample_shape=Size()):
        """Generates a ``sample_shape`` shaped sample (or batch of samples), without
        gradient."""
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Generates a reparameterized sample: gradients flow to the parameters."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n):
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        """The perplexity of the distribution, ``exp(entropy)``."""
        return _M.exp(self.entropy())

    def _extended_shape(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {tuple(self._event_shape)}.")
        try:
            broadcast_shapes(tuple(value.shape), tuple(self._batch_shape) + tuple(self._event_shape))
        except RuntimeError:
            raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                             f"{tuple(value.shape)} vs {tuple(self._batch_shape) + tuple(self._event_shape)}."
                             ) from None
        valid = _concrete(self.support.check(value))
        if valid is not None and not valid.all():
            raise ValueError(f"Expected value argument (Tensor of shape {tuple(value.shape)}) to "
                             f"be within the support ({self.support!r}) of the distribution "
                             f"{self!r}, but found invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for p in names:
            v = self.__dict__[p]
            parts.append(f"{p}: {v.item() if v.numel() == 1 else v.shape}")
        return f"{type(self).__name__}({', '.join(parts)})"


_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))
