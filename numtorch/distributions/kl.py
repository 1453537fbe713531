"""``kl_divergence(p, q)`` and ``register_kl``: the closed forms for pairs of the
distributions here (PyTorch's formulas), looked up by the pair of types (the most
specific registered pair wins, as in PyTorch)."""
from __future__ import annotations

import math

from .._ops import math as _M
from .._ops import reduce as _R
from .discrete import Bernoulli, Categorical
from .normal import Normal, Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator to register a pairwise function with :func:`kl_divergence`."""
    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _dispatch(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return None
    # the most specific pair: the one whose classes come earliest in the MROs
    return _KL_REGISTRY[min(matches, key=lambda m: (type_p.__mro__.index(m[0]),
                                                    type_q.__mro__.index(m[1])))]


def kl_divergence(p, q):
    r"""Compute Kullback-Leibler divergence :math:`KL(p \| q)` between two distributions,
    :math:`\int p(x) \log\frac{p(x)}{q(x)} dx`, batched over their batch shapes.

    Raises NotImplementedError if the distribution types have not been registered via
    :func:`register_kl`.
    """
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} "
                                  f"and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - _M.log(var_ratio))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    from ..nn.functional import softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _M.where(q.probs == 0, math.inf, t1)
    t1 = _M.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _M.where(q.probs == 1, math.inf, t2)
    t2 = _M.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _M.where(q.probs == 0, math.inf, t)
    t = _M.where(p.probs == 0, 0.0, t)
    return _R.sum(t, -1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = _M.log((q.high - q.low) / (p.high - p.low))
    return _M.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = _M.log(math.sqrt(math.pi * 2) * q.scale / common_term)
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
