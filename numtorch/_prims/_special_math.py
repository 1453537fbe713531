"""NumPy kernels of the special functions that NumPy does not ship: ``lgamma``, the
polygamma family (``digamma`` is polygamma of order 0), ``erfinv`` and the Bessel ``i1``
(and ``i0``, NumPy's, with its dtype kept).

Only the ``impl`` rules of the primitives of the same names (elementwise.py) call
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


# Note [erfinv by Newton]
# Giles' single-precision approximation ("Approximating the erfinv function", GPU Computing
# Gems, 2011: a polynomial in w = -log(1 - x^2), one for w < 5 and one in sqrt(w) beyond)
# gives ~1e-7 relative accuracy; two Newton steps on erf(y) = x, with math.erf/math.erfc
# correctly rounded, square that error twice, to double precision; where x is within
# ~1e-8 of +-1, beyond what Giles' tail was made for, a few more steps get there (the loop
# stops when no step moves y).
# The equation is solved for |x|; for |x| >= 0.5 as log(erfc(y)) = log(1 - |x|): 1 - |x| is
# exact there, while erf(y) - |x| near 1 cancels every digit the tail has (x = 1 - 2**-53
# needs y = 5.86), and the log keeps Newton's steps well scaled where Giles' tail, made for
# single precision, starts far off. x = +-1 gives +-inf; |x| > 1 and NaN give NaN.
_erf_vec = np.frompyfunc(math.erf, 1, 1)
_erfc_vec = np.frompyfunc(math.erfc, 1, 1)
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefficients, w):
    p = np.full_like(w, coefficients[0])
    for c in coefficients[1:]:
        p = c + p * w
    return p


def erfinv(x):
    """The inverse error function elementwise, in ``x``'s dtype (Note [erfinv by Newton])."""
    if x.size == 0:
        return x.copy()
    a = x.astype(np.float64)
    inside = np.abs(a) < 1
    u = np.where(inside, np.abs(a), 0.0)
    w = -np.log((1.0 - u) * (1.0 + u))
    y = u * np.where(w < 5.0, _horner(_GILES_CENTRAL, w - 2.5),
                     _horner(_GILES_TAIL, np.sqrt(w) - 3.0))
    upper = u >= 0.5
    log_tail = np.log(np.where(upper, 1.0 - u, 1.0))
    for _ in range(8):
        density = 2.0 / math.sqrt(math.pi) * np.exp(-y * y)    # d erf(y) / dy
        c = np.asarray(_erfc_vec(np.where(upper, y, 0.0)), dtype=np.float64)
        # upper: Newton on log(erfc(y)) = log(1 - u); else on erf(y) = u
        step = np.where(upper, (np.log(c) - log_tail) * c,
                        u - np.asarray(_erf_vec(np.where(upper, 0.0, y)), dtype=np.float64))
        step = step / density
        y = y + step
        if not (np.abs(step) > 1e-15 * np.abs(y)).any():   # a few ulp: converged
            break
    y = np.copysign(y, a)       # erfinv is odd; keeps -0.0
    with np.errstate(invalid="ignore"):
        y = np.where(inside, y, np.where(np.abs(a) == 1, np.copysign(np.inf, a), np.nan))
    return y.astype(x.dtype)


# Note [Modified Bessel functions]
# i0 is NumPy's np.i0 (Cephes' Chebyshev expansions). NumPy has no i1: for |x| < 2 its
# power series x/2 sum_k (x^2/4)^k / (k! (k+1)!) (20 terms: the next is below 1e-30);
# beyond, the integral i1(x) = 1/pi int_0^pi exp(x cos t) cos t dt by the midpoint rule,
# which converges geometrically for a periodic analytic integrand (256 points reach double
# precision up to x = 700, where i1 overflows), scaled by exp(-|x|) inside so nothing
# overflows before the final factor.
_MIDPOINTS = (np.arange(256) + 0.5) * (np.pi / 256)


def i0(x):
    """The modified Bessel function of the first kind of order 0, in ``x``'s dtype."""
    if x.size == 0:
        return x.copy()
    with np.errstate(over="ignore"):
        return np.i0(x.astype(np.float64)).astype(x.dtype)


def i1(x):
    """The modified Bessel function of the first kind of order 1, in ``x``'s dtype (Note
    [Modified Bessel functions])."""
    if x.size == 0:
        return x.copy()
    a = x.astype(np.float64).reshape(-1)    # 1-d: a 0-d array's arithmetic gives scalars
    ax = np.abs(a)
    small = ax < 2
    q = np.where(small, a * a / 4, 0.0)
    term, series = np.where(small, a / 2, 0.0), np.zeros_like(a)
    for k in range(20):
        series = series + term
        term = term * q / ((k + 1) * (k + 2))
    big = ax[~small]
    out = series
    if big.size:
        cos_t = np.cos(_MIDPOINTS)
        scaled = (np.exp(big[:, None] * (cos_t - 1)) * cos_t).mean(-1)
        with np.errstate(over="ignore"):
            out = out.copy()
            out[~small] = np.copysign(scaled * np.exp(big), a[~small])
    out = np.where(np.isnan(a), a, out)
    return out.astype(x.dtype).reshape(x.shape)
