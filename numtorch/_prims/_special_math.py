"""NumPy kernels of the special functions that NumPy does not ship: ``lgamma`` and the
polygamma family (``digamma`` is polygamma of order 0).

Only the ``impl`` rules of ``prims.lgamma`` and ``prims.polygamma`` (elementwise.py) call
these; they take and return ndarrays and know nothing of tensors, dtypes promotion or
autograd. SciPy is not a runtime dependency (Note [erf] in elementwise.py), so the
polygamma functions are computed here (Note [Polygamma by recurrence]).
"""
from __future__ import annotations

import math

import numpy as np


def _lgamma_scalar(v):
    # math.lgamma is accurate to a few ulp but raises at the poles, where PyTorch gives inf.
    if math.isinf(v) or (v <= 0 and v == math.floor(v)):
        return math.inf
    return math.lgamma(v)


_lgamma_vec = np.frompyfunc(_lgamma_scalar, 1, 1)


def lgamma(x):
    """``log(|Gamma(x)|)`` elementwise, in ``x``'s dtype (inf at 0 and negative integers)."""
    if x.size == 0:
        return x.copy()
    return np.asarray(_lgamma_vec(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


# Note [Polygamma by recurrence]
# psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n+1) moves every argument up to x >= 20,
# where the asymptotic series (Abramowitz & Stegun 6.3.18, 6.4.11) with ten Bernoulli terms
# is accurate to double precision for every order n <= 20. Digamma of negative arguments
# uses the reflection psi(x) = psi(1 - x) - pi / tan(pi x) instead, which keeps the number
# of steps bounded. Poles follow PyTorch: digamma(+0) = -inf, digamma(-0) = inf,
# digamma(-k) = nan; order n >= 1 gives (-1)^(n+1) inf there (PyTorch's own order-1 values
# at negative poles are rounding noise, 1e15, which we do not copy). At +inf the higher
# orders are 0, their limit (PyTorch gives nan). The work is in float64 whatever the dtype.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)
_SHIFT_TO = 20.0


def _asymptotic(n, x):
    if n == 0:
        out = np.log(x) - 0.5 / x
        x2 = x * x
        p = x2
        for k, b in enumerate(_BERNOULLI, 1):
            out -= b / (2 * k * p)
            p = p * x2
        return out
    sign = -1.0 if n % 2 == 0 else 1.0   # (-1)^(n+1)
    out = math.factorial(n - 1) / x ** n + math.factorial(n) / (2 * x ** (n + 1))
    for k, b in enumerate(_BERNOULLI, 1):
        out += b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / x ** (2 * k + n)
    return sign * out


def polygamma(n, x):
    """The ``n``-th derivative of the digamma function, elementwise, in ``x``'s dtype."""
    if x.size == 0:
        return x.copy()
    with np.errstate(all="ignore"):
        v = x.astype(np.float64)
        pole = (v <= 0) & (v == np.floor(v))
        reflect = np.zeros_like(v)
        if n == 0:
            neg = v < 0.5
            # psi(x) = psi(1 - x) - pi / tan(pi x)
            reflect = np.where(neg & ~pole, -math.pi / np.tan(math.pi * v), 0.0)
            v = np.where(neg, 1.0 - v, v)
        acc = np.zeros_like(v)
        step = math.factorial(n) * (-1.0 if n % 2 == 0 else 1.0)   # -(-1)^n n!
        finite = np.isfinite(v) & ~pole
        v = np.where(finite, v, _SHIFT_TO)
        low = v < _SHIFT_TO
        while low.any():
            acc = np.where(low, acc + step / v ** (n + 1), acc)
            v = np.where(low, v + 1.0, v)
            low = v < _SHIFT_TO
        out = acc + _asymptotic(n, v) + reflect
        x64 = x.astype(np.float64)
        if n == 0:
            at_zero = np.where(np.signbit(x64), np.inf, -np.inf)
            out = np.where(pole, np.where(x64 == 0, at_zero, np.nan), out)
            out = np.where(x64 == np.inf, np.inf, out)
        else:
            out = np.where(pole, math.copysign(math.inf, step), out)
            out = np.where(x64 == np.inf, 0.0, out)
        out = np.where(np.isnan(x64) | (x64 == -np.inf), np.nan, out)
    return out.astype(x.dtype)
