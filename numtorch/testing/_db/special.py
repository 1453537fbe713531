"""OpInfo entries: the gamma family (lgamma, digamma, polygamma) and the compositions of
``numtorch.special`` that have no top-level twin (the aliases, ``special.expit`` is
``sigmoid`` and so on, are the same function objects: tests/test_special.py pins that).

References come from mpmath (arbitrary precision, independent of our series) and from
``math``; both are evaluated element by element in float64.
"""
from __future__ import annotations

import math

import numpy as np

import numtorch as torch
import numtorch.special as special

from ..opinfo import (FLOAT_INPUT, FLOATING, INTEGRAL, OpInfo, SampleInput, binary_samples,
                      make, register, tensor_of, unary_samples)


def _elementwise(fn):
    def ref(x, *args):
        x = np.asarray(x, np.float64)
        return np.vectorize(lambda v: float(fn(float(v), *args)), otypes=[np.float64])(x) \
            if x.size else x.copy()
    return ref


def _psi(v, n=0):
    import mpmath
    if v <= 0 and v == math.floor(v):
        return -math.inf if n == 0 and v == 0 else (math.nan if n == 0 else
                                                     math.copysign(math.inf, (-1) ** (n + 1)))
    return float(mpmath.psi(n, v))


def _lgamma(v):
    return math.inf if v <= 0 and v == math.floor(v) else math.lgamma(v)


def _polygamma_samples(dtype, requires_grad):
    for n in (1, 2):
        for shape in ((), (2, 3)):
            yield SampleInput(make(shape, dtype, requires_grad, low=0.3, high=6), (n,))
        yield SampleInput(make((4,), dtype, requires_grad, low=-3.9, high=-0.1), (n,),
                          name="negative")
    if dtype.is_floating_point:
        yield SampleInput(tensor_of([0.0, -1.0, 1e-3, 30.0], dtype), (3,), name="edge", grad=False)


def _special(name, **kw):
    """An entry for ``numtorch.special.<name>`` (no top-level function)."""
    return OpInfo(f"special.{name}", op=getattr(special, name), method=None, inplace=None,
                  torch_op=lambda t: getattr(t.special, name), **kw)


def _ndtr(v):
    return 0.5 * math.erfc(-v / math.sqrt(2))


def _log_ndtr(v):
    import mpmath
    return float(mpmath.log(mpmath.ncdf(v)))


def _i1(v):
    import mpmath
    return v if math.isnan(v) else float(mpmath.besseli(1, v))


def _entr(v):
    return -v * math.log(v) if v > 0 else (0.0 if v == 0 else (v if math.isnan(v) else -math.inf))


def _multigammaln_samples(dtype, requires_grad):
    for p in (1, 3):
        yield SampleInput(make((2, 3), dtype, requires_grad, low=1.5, high=6), (p,))


def _multigammaln_ref(x, p):
    return sum(_elementwise(_lgamma)(np.asarray(x, np.float64) - i / 2) for i in range(p)) \
        + p * (p - 1) / 4 * math.log(math.pi)


register(
    OpInfo("lgamma", ref=_elementwise(_lgamma), dtypes=FLOATING + INTEGRAL,
           result_dtype=FLOAT_INPUT,
           sample_inputs=unary_samples(low=-3.9, high=6, edge=(0.0, -1.0, 0.5, 1.0, 2.0, 1e-8,
                                                                math.inf))),
    OpInfo("digamma", ref=_elementwise(_psi), dtypes=FLOATING + INTEGRAL,
           result_dtype=FLOAT_INPUT,
           sample_inputs=unary_samples(low=-3.9, high=6, edge=(0.0, -2.0, 0.5, 1.0, 1e-6, 1e6,
                                                                math.nan))),
    OpInfo("polygamma", op=lambda x, n: torch.polygamma(n, x),
           torch_op=lambda t: lambda x, n: t.polygamma(n, x), inplace=None,
           ref=lambda x, n: _elementwise(_psi)(x, n), result_dtype=FLOAT_INPUT,
           sample_inputs=_polygamma_samples),
    _special("xlog1py", ref=lambda x, y: np.where((x == 0) & ~np.isnan(y), 0.0,
                                                  x * np.log1p(y)).astype(np.result_type(x, y)),
             result_dtype=FLOAT_INPUT,
             sample_inputs=binary_samples(rhs_low=-0.5, rhs_high=9, scalars=False,
                                          edge=([0.0, 0.0, 1.0], [-1.0, math.nan, 0.0]))),
    _special("multigammaln", ref=_multigammaln_ref, result_dtype=FLOAT_INPUT,
             sample_inputs=_multigammaln_samples),
    _special("ndtr", ref=_elementwise(_ndtr), dtypes=FLOATING + INTEGRAL, result_dtype=FLOAT_INPUT,
             sample_inputs=unary_samples(low=-6, high=6, edge=(-40.0, 0.0, math.inf, -math.inf))),
    _special("log_ndtr", ref=_elementwise(_log_ndtr), result_dtype=FLOAT_INPUT,
             sample_inputs=unary_samples(low=-30, high=6, edge=(-40.0, -20.0, 0.0, 10.0))),
    _special("i1", ref=_elementwise(_i1), dtypes=FLOATING + INTEGRAL, result_dtype=FLOAT_INPUT,
             sample_inputs=unary_samples(low=-8, high=8, edge=(0.0, -0.0, 1e-30, 1.5, 2.0, 30.0,
                                                               -700.0, math.nan))),
    _special("entr", ref=_elementwise(_entr), dtypes=FLOATING + INTEGRAL, result_dtype=FLOAT_INPUT,
             sample_inputs=unary_samples(low=0.05, high=4, edge=(-1.0, 0.0, 0.5, math.nan))),
)
