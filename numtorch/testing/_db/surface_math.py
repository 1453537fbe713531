"""OpInfo entries: the everyday pointwise and product functions (_ops/_surface_math.py)."""
from __future__ import annotations

import math

import numpy as np

from ..opinfo import (BOOL, FLOAT, FLOAT_INPUT, FLOATING, INTEGRAL, PROMOTE, SAME, OpInfo,
                      SampleInput, binary_samples, make, register, tensor_of, unary_samples)


def _m(dtype, requires_grad):
    return lambda shape, **kw: make(shape, dtype, requires_grad, **kw)


def _addc_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    yield SampleInput(m((2, 3)), (m((2, 3)), m((2, 3), exclude_zero=True, low=0.5, high=2)))
    yield SampleInput(m((2, 1)), (m((3,)), m((2, 3), low=0.5, high=2)), dict(value=0.5),
                      name="broadcast")
    yield SampleInput(m(()), (m(()), m((), low=0.5, high=2)), dict(value=2), name="0d")


def _addcmul_ref(x, a, b, value=1):
    return x + value * a * b


def _addcdiv_ref(x, a, b, value=1):
    return x + value * a / b


def _mm_samples(kind):
    def gen(dtype, requires_grad):
        m = _m(dtype, requires_grad)
        if kind == "addmv":
            yield SampleInput(m((2,)), (m((2, 3)), m((3,))))
            yield SampleInput(m(()), (m((2, 3)), m((3,))), dict(beta=0.5, alpha=2), name="scaled")
            yield SampleInput(m((2,)), (m((2, 3)), m((3,))), dict(beta=0), name="beta0")
        elif kind == "addr":
            yield SampleInput(m((2, 3)), (m((2,)), m((3,))))
            yield SampleInput(m((3,)), (m((2,)), m((3,))), dict(beta=2, alpha=0.5), name="scaled")
        elif kind == "baddbmm":
            yield SampleInput(m((2, 2, 4)), (m((2, 2, 3)), m((2, 3, 4))))
            yield SampleInput(m((2, 4)), (m((2, 2, 3)), m((2, 3, 4))), dict(beta=0.5, alpha=2),
                              name="scaled")
        else:
            yield SampleInput(m((2, 4)), (m((3, 2, 3)), m((3, 3, 4))))
            yield SampleInput(m((4,)), (m((3, 2, 3)), m((3, 3, 4))), dict(beta=0, alpha=2),
                              name="beta0")
    return gen


def _addmv_ref(x, a, v, beta=1, alpha=1):
    return (beta * x if beta else 0) + alpha * (a @ v)


def _addr_ref(x, a, b, beta=1, alpha=1):
    return beta * x + alpha * np.outer(a, b)


def _baddbmm_ref(x, a, b, beta=1, alpha=1):
    return beta * x + alpha * (a @ b)


def _addbmm_ref(x, a, b, beta=1, alpha=1):
    return np.broadcast_to((beta * x if beta else 0) + alpha * (a @ b).sum(0), (a.shape[1], b.shape[2]))


_EDGE = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -2.0]


def _nan_to_num_samples(dtype, requires_grad):
    yield from unary_samples()(dtype, requires_grad)
    if dtype.is_floating_point:
        yield SampleInput(tensor_of(_EDGE, dtype), name="edge")
        yield SampleInput(tensor_of(_EDGE, dtype), (2.0,), dict(posinf=1.0, neginf=-3.0),
                          name="values")


def _nan_to_num_ref(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _copysign_samples(dtype, requires_grad):
    # Away from 0 on the sign side: copysign's derivative in `other` is 0 except at 0.
    yield from binary_samples(exclude_zero=True)(dtype, requires_grad)
    if dtype.is_floating_point:
        yield SampleInput(tensor_of([1.0, 2.0, -3.0, 4.0], dtype),
                          (tensor_of([-0.0, 0.0, 1.0, -math.inf], dtype),), name="signed_zero",
                          grad=False)


def _heaviside_samples(dtype, requires_grad):
    m = _m(dtype, False)
    x = make((6,), dtype)
    yield SampleInput(x, (m((6,)),))
    yield SampleInput(tensor_of([-1, 0, 2, 0], dtype), (tensor_of(3, dtype),), name="zeros")


def _logaddexp2_ref(x, y):
    return np.logaddexp2(x, y)


def _frexp_ref(x):
    return np.frexp(x)


def _frexp_samples(dtype, requires_grad):
    yield from unary_samples()(dtype, requires_grad)
    yield SampleInput(tensor_of([8.0, 0.3, 0.0, -5.5, 1e-30, 2.0 ** -20, 0.75], dtype),
                      name="powers")


def _ldexp_samples(dtype, requires_grad):
    m = _m(dtype, requires_grad)
    from ..opinfo import make_index
    # Non-negative exponents: PyTorch's ldexp backward computes 2**other in integer
    # arithmetic, 0 for negative ones (its bug; tests/test_surface_math.py checks ours).
    yield SampleInput(m((2, 3)), (make_index((2, 3), 5),))
    yield SampleInput(m((3,)), (make_index((2, 1), 3),), name="broadcast")


def _signbit_samples(dtype, requires_grad):
    yield from unary_samples()(dtype, requires_grad)
    if dtype.is_floating_point:
        yield SampleInput(tensor_of([-0.0, 0.0, -1.0, math.inf, -math.inf], dtype), name="zeros")


_BOOL_OUT = dict(result_dtype=BOOL, supports_grad=False)
_INT = FLOATING + INTEGRAL

register(
    OpInfo("addcmul", ref=_addcmul_ref, result_dtype=PROMOTE, sample_inputs=_addc_samples),
    OpInfo("addcdiv", ref=_addcdiv_ref, result_dtype=PROMOTE, sample_inputs=_addc_samples),
    OpInfo("addmv", ref=_addmv_ref, result_dtype=SAME, sample_inputs=_mm_samples("addmv")),
    OpInfo("addr", ref=_addr_ref, result_dtype=SAME, sample_inputs=_mm_samples("addr")),
    OpInfo("baddbmm", ref=_baddbmm_ref, result_dtype=SAME, sample_inputs=_mm_samples("baddbmm")),
    OpInfo("addbmm", ref=_addbmm_ref, result_dtype=SAME, sample_inputs=_mm_samples("addbmm")),
    OpInfo("nan_to_num", ref=_nan_to_num_ref, result_dtype=SAME, dtypes=_INT,
           sample_inputs=_nan_to_num_samples),
    OpInfo("deg2rad", ref=lambda x: np.deg2rad(x.astype(np.float64) if x.dtype.kind in "iu" else x),
           result_dtype=FLOAT_INPUT, dtypes=_INT, sample_inputs=unary_samples()),
    OpInfo("rad2deg", ref=lambda x: np.rad2deg(x.astype(np.float64) if x.dtype.kind in "iu" else x),
           result_dtype=FLOAT_INPUT, dtypes=_INT, sample_inputs=unary_samples()),
    OpInfo("copysign", ref=lambda x, y: np.copysign(x, y), result_dtype=FLOAT, dtypes=_INT,
           sample_inputs=_copysign_samples),
    OpInfo("heaviside", ref=np.heaviside, result_dtype=SAME, dtypes=_INT, supports_grad=False,
           sample_inputs=_heaviside_samples),
    OpInfo("signbit", ref=np.signbit, dtypes=_INT, sample_inputs=_signbit_samples, **_BOOL_OUT),
    OpInfo("isposinf", ref=np.isposinf, dtypes=_INT, sample_inputs=_signbit_samples, **_BOOL_OUT),
    OpInfo("isneginf", ref=np.isneginf, dtypes=_INT, sample_inputs=_signbit_samples, **_BOOL_OUT),
    OpInfo("isreal", ref=np.isreal, dtypes=_INT, sample_inputs=unary_samples(), **_BOOL_OUT),
    OpInfo("logaddexp2", ref=_logaddexp2_ref, result_dtype=PROMOTE,
           sample_inputs=binary_samples(scalars=False, edge=([-math.inf, math.inf, 0.0],
                                                             [-math.inf, 1.0, -math.inf]))),
    OpInfo("frexp", ref=_frexp_ref, sample_inputs=_frexp_samples,
           result_dtype=SAME),
    OpInfo("ldexp", ref=lambda x, e: x * np.power(2.0, e).astype(x.dtype), result_dtype=SAME,
           sample_inputs=_ldexp_samples),
)
