"""``torch.special``: special functions, modeled after SciPy's ``scipy.special``.

Most names here are the top-level ops under SciPy's spelling (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``, ``psi`` is ``digamma``); the rest are short compositions of
numtorch ops, so autograd, vmap and jvp apply with no rules of their own. This module
must not define primitives: ``lgamma``, ``polygamma``, ``erfinv``, ``i0`` and ``i1`` live in
``_prims/elementwise.py`` (``i1`` has no top-level op, as in PyTorch: it binds its
primitive here).
"""
from __future__ import annotations

import math

from numpy import ndarray

from ._ops import math as _M
from ._ops import reduce as _R
from ._ops._common import (check_tensor, elementwise_operands, float_dtype_for, result_type,
                           unary_float)
from ._prims import elementwise as _E

erf = _M.erf
erfc = _M.erfc
erfinv = _M.erfinv
sinc = _M.sinc
i0 = _M.i0
expit = _M.sigmoid
logit = _M.logit
xlogy = _M.xlogy
gammaln = _M.lgamma
digamma = psi = _M.digamma
polygamma = _M.polygamma
exp2 = _M.exp2
expm1 = _M.expm1
log1p = _M.log1p
logsumexp = _R.logsumexp
softmax = _R.softmax
log_softmax = _R.log_softmax

__all__ = ["erf", "erfc", "erfinv", "sinc", "i0", "i1", "expit", "logit", "xlogy", "xlog1py", "gammaln",
           "digamma", "psi", "polygamma", "multigammaln", "exp2", "expm1", "log1p", "logsumexp", "softmax",
           "log_softmax", "ndtr", "log_ndtr", "entr"]


def xlog1py(input, other):
    """Computes ``input * log1p(other)``, with the value 0 where ``input`` is 0 (NaN if
    ``other`` is NaN), as ``xlogy`` does for ``log``."""
    x, y = elementwise_operands(input, other, dtype=float_dtype_for(result_type(input, other)))
    return _M.where((x == 0) & ~_M.isnan(y), x * 0, x * _M.log1p(y))


def multigammaln(input, p):
    """Computes the multivariate log-gamma function with dimension ``p`` element-wise:
    ``log(pi) * p (p - 1) / 4 + sum_{i=1..p} lgamma(input - (i - 1) / 2)``.

    All elements must be greater than ``(p - 1) / 2``, otherwise the behavior is undefined
    (PyTorch raises; so do we, on concrete values).
    """
    input = check_tensor(input, "input", "multigammaln")
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise RuntimeError(f"multigammaln(input, p): p has to be greater than or equal to 1, got {p!r}")
    d = input._data
    if d.__class__ is ndarray and d.size and not (d > (p - 1) / 2).all():
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    out = sum(_M.lgamma(input - i / 2) for i in range(p))
    return out + p * (p - 1) / 4 * math.log(math.pi)


def i1(input, *, out=None):
    """Computes the first order modified Bessel function of the first kind for each element
    of ``input``."""
    return _M._out(unary_float(_E.i1, input), out)


def ndtr(input):
    """Computes the area under the standard Gaussian probability density function,
    integrated from minus infinity to ``input``, elementwise: ``(1 + erf(x / sqrt(2))) / 2``."""
    # erfc keeps the far left tail accurate (1 + erf(x) cancels there).
    return 0.5 * _M.erfc(-_to_float(input, "ndtr") / math.sqrt(2.0))


def log_ndtr(input):
    """Computes the log of the area under the standard Gaussian probability density
    function, integrated from minus infinity to ``input``, elementwise."""
    x0 = _to_float(input, "log_ndtr")
    x = x0.double()   # float32's erfc underflows near x = -14 already
    # erfc is accurate far into the left tail; below -20 its value nears underflow, and the
    # asymptotic log(phi(x) / -x * series) is exact to double precision there.
    left = x < -20
    xs = _M.where(left, x, -21.0)
    z = 1 / (xs * xs)
    series = 1 - z + 3 * z * z - 15 * z * z * z + 105 * z ** 4
    tail = -0.5 * xs * xs - _M.log(-xs) - 0.5 * math.log(2 * math.pi) + _M.log(series)
    safe = _M.where(left, 0.0, x)
    return _M.where(left, tail, _M.log(0.5 * _M.erfc(-safe / math.sqrt(2.0)))).to(x0.dtype)


def entr(input):
    """Computes the entropy on ``input`` elementwise: ``-x * ln(x)`` for ``x > 0``, ``0`` at
    ``x = 0`` and ``-inf`` for ``x < 0``."""
    x = _to_float(input, "entr")
    pos = _M.where(x > 0, x, 1.0)
    rest = _M.where(x == 0, x * 0, _M.where(_M.isnan(x), x, -math.inf + x * 0))
    return _M.where(x > 0, -pos * _M.log(pos), rest)


def _to_float(input, name):
    x = check_tensor(input, "input", name)
    if not x.dtype.is_floating_point:
        x = x.to(float_dtype_for(x.dtype))
    return x
