"""OpInfo entries: pointwise math — unary functions, arithmetic, comparisons, logic, where, clamp."""
from __future__ import annotations

import math

import numpy as np

import numtorch as torch

from .. import opinfo as O
from ..opinfo import (ALL_REAL, BOOL, FLOAT, FLOAT_INPUT, FLOATING, INTEGRAL, PROMOTE, SAME,
                      OpInfo, SampleInput, binary_samples, make, make_mask, register,
                      unary_samples)

_EDGE = (0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30)
_INT_AND_BOOL = INTEGRAL + (torch.bool,)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _erfinv(x):
    """mpmath's erfinv in float64 (inf at +-1, nan outside [-1, 1], as PyTorch's)."""
    import mpmath

    def one(v):
        if math.isnan(v) or abs(v) > 1:
            return math.nan
        return math.copysign(math.inf, v) if abs(v) == 1 else float(mpmath.erfinv(v))
    return np.vectorize(one, otypes=[np.float64])(x) if np.size(x) else np.asarray(x, np.float64)


def _in_float(ref):
    """The reference computed in float64 for integer and bool inputs (NumPy would pick float16)."""
    return lambda x: ref(x.astype(np.float64) if x.dtype.kind in "biu" else x)


def _unary_float(name, ref, *, low=None, high=None, aliases=(), edge=_EDGE, **kw):
    """A floating-point unary function: integers and bools compute in the default dtype."""
    return OpInfo(name, ref=_in_float(ref), dtypes=kw.pop("dtypes", ALL_REAL), result_dtype=FLOAT_INPUT,
                  sample_inputs=unary_samples(low=low, high=high, edge=edge), aliases=aliases,
                  **kw)


# Functions checked in half precision and complex128 too (values and vs PyTorch).
_WITH_COMPLEX = ALL_REAL + (torch.float16, torch.complex128)

register(
    _unary_float("exp", np.exp, low=-4, high=4, dtypes=_WITH_COMPLEX),
    _unary_float("exp2", np.exp2, low=-4, high=4),
    _unary_float("expm1", np.expm1, low=-4, high=4, dtypes=_WITH_COMPLEX),
    _unary_float("log", np.log, low=0.1, high=9, dtypes=_WITH_COMPLEX),
    _unary_float("log2", np.log2, low=0.1, high=9, dtypes=_WITH_COMPLEX),
    _unary_float("log10", np.log10, low=0.1, high=9, dtypes=_WITH_COMPLEX),
    _unary_float("log1p", np.log1p, low=-0.9, high=9, dtypes=_WITH_COMPLEX),
    _unary_float("sqrt", np.sqrt, low=0.1, high=9, dtypes=_WITH_COMPLEX),
    _unary_float("rsqrt", lambda x: 1 / np.sqrt(x), low=0.1, high=9, dtypes=_WITH_COMPLEX),
    _unary_float("sin", np.sin, dtypes=_WITH_COMPLEX),
    _unary_float("cos", np.cos, dtypes=_WITH_COMPLEX),
    _unary_float("tan", np.tan, low=-1.3, high=1.3, dtypes=_WITH_COMPLEX),
    _unary_float("asin", np.arcsin, low=-0.95, high=0.95, aliases=("arcsin",), dtypes=_WITH_COMPLEX),
    _unary_float("acos", np.arccos, low=-0.95, high=0.95, aliases=("arccos",), dtypes=_WITH_COMPLEX),
    _unary_float("atan", np.arctan, aliases=("arctan",), dtypes=_WITH_COMPLEX),
    _unary_float("sinh", np.sinh, low=-4, high=4, dtypes=_WITH_COMPLEX),
    _unary_float("cosh", np.cosh, low=-4, high=4, dtypes=_WITH_COMPLEX),
    _unary_float("tanh", np.tanh, low=-4, high=4, dtypes=_WITH_COMPLEX),
    _unary_float("asinh", np.arcsinh, aliases=("arcsinh",), dtypes=_WITH_COMPLEX),
    _unary_float("acosh", np.arccosh, low=1.1, high=9, aliases=("arccosh",), dtypes=_WITH_COMPLEX),
    _unary_float("atanh", np.arctanh, low=-0.95, high=0.95, aliases=("arctanh",), dtypes=_WITH_COMPLEX),
    _unary_float("sigmoid", lambda x: 1 / (1 + np.exp(-x)), dtypes=_WITH_COMPLEX),
    _unary_float("erf", _erf, low=-3, high=3),
    _unary_float("erfc", lambda x: 1 - _erf(x), low=-3, high=3),
    _unary_float("erfinv", lambda x: _erfinv(x), low=-0.99, high=0.99,
                 edge=(0.0, -0.0, 1.0, -1.0, 1.5, math.nan, 1 - 2 ** -53, 1e-30)),
    _unary_float("i0", np.i0, low=-8, high=8, edge=(0.0, -0.0, 1e-30, 30.0, -700.0, math.nan)),
    _unary_float("sinc", np.sinc, low=-4, high=4, edge=(0.0, -0.0, 1.0, -2.0, 1e-4, math.inf, math.nan)),
    _unary_float("reciprocal", lambda x: 1 / x, low=0.5, high=9, dtypes=_WITH_COMPLEX),
    _unary_float("logit", lambda x: np.log(x / (1 - x)), low=0.05, high=0.95, edge=(0.0, 0.5, 1.0)),
)


def _same_unary(name, ref, *, dtypes=FLOATING + INTEGRAL, edge=_EDGE, result_dtype=SAME, **kw):
    """A unary function that keeps its input's dtype."""
    return OpInfo(name, ref=ref, dtypes=dtypes, result_dtype=result_dtype,
                  sample_inputs=unary_samples(edge=edge), **kw)


def _round_samples(dtype, requires_grad):
    yield from unary_samples(edge=(0.5, 1.5, 2.5, -0.5, -2.5, math.inf, math.nan))(dtype, requires_grad)
    if dtype.is_floating_point:
        yield SampleInput(make((4,), dtype, requires_grad), kwargs=dict(decimals=2), name="decimals")


register(
    _same_unary("neg", np.negative, aliases=("negative",), operators=("__neg__",)),
    _same_unary("positive", lambda x: x, method=None, operators=("__pos__",)),
    _same_unary("abs", np.abs, aliases=("absolute",), operators=("__abs__",)),
    _same_unary("sign", lambda x: x if x.dtype == bool else np.nan_to_num(np.sign(x)),
                aliases=("sgn",), dtypes=ALL_REAL),  # sign(nan) == 0 in PyTorch
    _same_unary("floor", np.floor),
    _same_unary("ceil", np.ceil),
    _same_unary("trunc", np.trunc, aliases=("fix",)),
    OpInfo("round", ref=lambda x, decimals=0: np.round(x, decimals), dtypes=FLOATING + INTEGRAL,
           result_dtype=SAME, sample_inputs=_round_samples),
    _same_unary("relu", lambda x: np.maximum(x, 0), edge=(0.0, -1.0, 1.0, -np.inf, np.nan)),
    _same_unary("frac", lambda x: x - np.trunc(x), dtypes=FLOATING),
    _same_unary("square", np.square, dtypes=ALL_REAL,
                result_dtype=lambda s: torch.int64 if s.input.dtype is torch.bool else s.input.dtype),
)


# ---------------------------------------------------------------------------------------
# Arithmetic


def _alpha_samples(dtype, requires_grad):
    yield from binary_samples()(dtype, requires_grad)
    if dtype is not torch.bool:
        yield SampleInput(make((2, 3), dtype, requires_grad), (make((3,), dtype, requires_grad),),
                          dict(alpha=2), name="alpha")


def _alpha_ref(fn):
    return lambda x, y, alpha=1: fn(x, np.multiply(y, alpha))


def _div_samples(dtype, requires_grad):
    yield from binary_samples(exclude_zero=True)(dtype, requires_grad)
    for mode in ("floor", "trunc"):
        yield SampleInput(make((2, 3), dtype, requires_grad),
                          (make((2, 3), dtype, requires_grad, exclude_zero=True),),
                          dict(rounding_mode=mode), name=mode, grad=False)


def _pow_samples(dtype, requires_grad):
    """Positive bases; integer exponents are non-negative (negative ones raise)."""
    low = -2 if dtype.is_floating_point else 0
    yield from binary_samples(low=0.5, high=3, rhs_low=low, rhs_high=2.5)(dtype, requires_grad)
    if dtype.is_floating_point:
        yield SampleInput(2.0, (make((3,), dtype, requires_grad, low=-2, high=2),), name="scalar_base")


def _div_ref(x, y, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(x, y)
    if rounding_mode == "floor":
        return np.floor_divide(x, y)
    q = np.true_divide(x, y)
    return np.trunc(q).astype(np.result_type(x, y))


def _div_dtype(s):
    return PROMOTE(s) if s.kwargs.get("rounding_mode") else FLOAT(s)


register(
    OpInfo("add", ref=_alpha_ref(np.add), dtypes=_WITH_COMPLEX, result_dtype=PROMOTE,
           sample_inputs=_alpha_samples, operators=("__add__", "__radd__", "__iadd__")),
    OpInfo("sub", ref=_alpha_ref(np.subtract), dtypes=FLOATING + INTEGRAL + (torch.complex128,),
           result_dtype=PROMOTE,
           sample_inputs=_alpha_samples, aliases=("subtract",),
           operators=("__sub__", "__rsub__", "__isub__")),
    OpInfo("rsub", ref=lambda x, y, alpha=1: np.subtract(y, np.multiply(x, alpha)),
           dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE, sample_inputs=_alpha_samples),
    OpInfo("mul", ref=np.multiply, dtypes=_WITH_COMPLEX, result_dtype=PROMOTE,
           sample_inputs=binary_samples(), aliases=("multiply",),
           operators=("__mul__", "__rmul__", "__imul__")),
    OpInfo("div", ref=_div_ref, dtypes=FLOATING + INTEGRAL, result_dtype=_div_dtype,
           sample_inputs=_div_samples, aliases=("divide", "true_divide"),
           operators=("__truediv__", "__rtruediv__", "__itruediv__")),
    OpInfo("floor_divide", ref=np.floor_divide, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=binary_samples(exclude_zero=True), supports_grad=False,
           operators=("__floordiv__", "__rfloordiv__", "__ifloordiv__")),
    OpInfo("fmod", ref=np.fmod, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=binary_samples(exclude_zero=True)),
    OpInfo("remainder", ref=np.remainder, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=binary_samples(exclude_zero=True),
           operators=("__mod__", "__rmod__", "__imod__")),
    OpInfo("pow", ref=np.power, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=_pow_samples,
           operators=("__pow__", "__rpow__", "__ipow__")),
    OpInfo("float_power", ref=lambda x, y: np.power(np.asarray(x, np.float64), y),
           dtypes=FLOATING + INTEGRAL, result_dtype=lambda s: torch.float64,
           sample_inputs=binary_samples(low=0.5, high=3, rhs_low=0, rhs_high=2.5)),
    OpInfo("atan2", ref=np.arctan2, dtypes=FLOATING + INTEGRAL, result_dtype=FLOAT,
           sample_inputs=binary_samples(exclude_zero=True, scalars=False), aliases=("arctan2",)),
    OpInfo("hypot", ref=np.hypot, result_dtype=PROMOTE, sample_inputs=binary_samples(scalars=False)),
    OpInfo("logaddexp", ref=np.logaddexp, result_dtype=PROMOTE,
           sample_inputs=binary_samples(scalars=False,
                                        edge=([-math.inf, math.inf, 0.0], [-math.inf, 1.0, -math.inf]))),
    OpInfo("xlogy", ref=lambda x, y: np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y)).astype(
               np.result_type(x, y)),
           dtypes=FLOATING, result_dtype=FLOAT,
           sample_inputs=binary_samples(rhs_low=0.1, rhs_high=9,
                                        edge=([0.0, 0.0, 1.0], [0.0, math.nan, 0.0]))),
)


def _maximum_samples(dtype, requires_grad):
    yield from binary_samples(scalars=False, edge=([1.0, math.nan, math.nan], [math.nan, 2.0, math.nan]))(
        dtype, requires_grad)


register(
    OpInfo("maximum", ref=np.maximum, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=_maximum_samples),
    OpInfo("minimum", ref=np.minimum, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=_maximum_samples),
    OpInfo("fmax", ref=np.fmax, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=_maximum_samples),
    OpInfo("fmin", ref=np.fmin, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=_maximum_samples),
)


def _lerp_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((2, 3)), (m((2, 3)), 0.3))
    yield SampleInput(m((2, 3)), (m((3,)), m((2, 1))), name="tensor_weight")
    yield SampleInput(m(()), (m(()), m(())), name="0d")


register(OpInfo("lerp", ref=lambda x, y, w: x + w * (y - x), result_dtype=SAME,
                sample_inputs=_lerp_samples))


# ---------------------------------------------------------------------------------------
# Comparisons, logic and bitwise ops

def _compare(name, ref, aliases=(), operator=None):
    return OpInfo(name, ref=ref, dtypes=ALL_REAL, result_dtype=BOOL, supports_grad=False,
                  sample_inputs=binary_samples(edge=([1.0, math.nan, math.inf], [1.0, math.nan, math.inf])),
                  aliases=aliases, operators=(operator,) if operator else ())


register(
    _compare("eq", np.equal, operator="__eq__"),
    _compare("ne", np.not_equal, ("not_equal",), "__ne__"),
    _compare("lt", np.less, ("less",), "__lt__"),
    _compare("le", np.less_equal, ("less_equal",), "__le__"),
    _compare("gt", np.greater, ("greater",), "__gt__"),
    _compare("ge", np.greater_equal, ("greater_equal",), "__ge__"),
    OpInfo("logical_and", ref=np.logical_and, dtypes=ALL_REAL, result_dtype=BOOL,
           supports_grad=False, sample_inputs=binary_samples(scalars=False)),
    OpInfo("logical_or", ref=np.logical_or, dtypes=ALL_REAL, result_dtype=BOOL,
           supports_grad=False, sample_inputs=binary_samples(scalars=False)),
    OpInfo("logical_xor", ref=np.logical_xor, dtypes=ALL_REAL, result_dtype=BOOL,
           supports_grad=False, sample_inputs=binary_samples(scalars=False)),
    OpInfo("logical_not", ref=np.logical_not, dtypes=ALL_REAL, result_dtype=BOOL,
           supports_grad=False, sample_inputs=unary_samples()),
    OpInfo("bitwise_and", ref=np.bitwise_and, dtypes=_INT_AND_BOOL, result_dtype=PROMOTE,
           supports_grad=False, sample_inputs=binary_samples(), operators=("__and__", "__rand__", "__iand__")),
    OpInfo("bitwise_or", ref=np.bitwise_or, dtypes=_INT_AND_BOOL, result_dtype=PROMOTE,
           supports_grad=False, sample_inputs=binary_samples(), operators=("__or__", "__ror__", "__ior__")),
    OpInfo("bitwise_xor", ref=np.bitwise_xor, dtypes=_INT_AND_BOOL, result_dtype=PROMOTE,
           supports_grad=False, sample_inputs=binary_samples(), operators=("__xor__", "__rxor__", "__ixor__")),
    OpInfo("bitwise_left_shift", ref=np.left_shift, dtypes=INTEGRAL, result_dtype=PROMOTE,
           supports_grad=False, sample_inputs=binary_samples(),
           operators=("__lshift__", "__rlshift__", "__ilshift__")),
    OpInfo("bitwise_right_shift", ref=np.right_shift, dtypes=INTEGRAL, result_dtype=PROMOTE,
           supports_grad=False, sample_inputs=binary_samples(),
           operators=("__rshift__", "__rrshift__", "__irshift__")),
    OpInfo("bitwise_not", ref=np.invert, dtypes=_INT_AND_BOOL, result_dtype=SAME,
           supports_grad=False, sample_inputs=unary_samples(), operators=("__invert__",)),
    OpInfo("isnan", ref=np.isnan, dtypes=ALL_REAL, result_dtype=BOOL, supports_grad=False,
           sample_inputs=unary_samples(edge=_EDGE)),
    OpInfo("isinf", ref=np.isinf, dtypes=ALL_REAL, result_dtype=BOOL, supports_grad=False,
           sample_inputs=unary_samples(edge=_EDGE)),
    OpInfo("isfinite", ref=np.isfinite, dtypes=ALL_REAL, result_dtype=BOOL, supports_grad=False,
           sample_inputs=unary_samples(edge=_EDGE)),
)


def _isclose_samples(dtype, requires_grad):
    a = make((2, 3), dtype)
    yield SampleInput(a, (a.clone(),), name="equal")
    yield SampleInput(make((2, 3), dtype), (make((2, 3), dtype),))
    if dtype.is_floating_point:
        yield SampleInput(a, (a + 1e-6,), dict(rtol=0, atol=1e-5), name="atol")
        nan = torch.tensor([math.nan, 1.0, math.inf], dtype=dtype)
        yield SampleInput(nan, (nan.clone(),), name="nan")
        yield SampleInput(nan, (nan.clone(),), dict(equal_nan=True), name="equal_nan")


def _equal_samples(dtype, requires_grad):
    a = make((2, 3), dtype)
    yield SampleInput(a, (a.clone(),), name="equal")
    yield SampleInput(a, (make((2, 3), dtype),))
    yield SampleInput(a, (a.clone().reshape(3, 2),), name="shape")


def _equal_ref(x, y):
    return x.shape == y.shape and bool((x == y).all())


register(
    OpInfo("isclose", ref=np.isclose, dtypes=FLOATING + INTEGRAL, result_dtype=BOOL,
           supports_grad=False, sample_inputs=_isclose_samples),
    OpInfo("allclose", ref=np.allclose, dtypes=FLOATING + INTEGRAL, supports_grad=False,
           supports_meta=False, supports_vmap=False, sample_inputs=_isclose_samples),
    OpInfo("equal", ref=_equal_ref, dtypes=ALL_REAL, supports_grad=False, supports_meta=False,
           supports_vmap=False, sample_inputs=_equal_samples),
)


# ---------------------------------------------------------------------------------------
# where and clamp


def _where_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((2, 3)), (make_mask((2, 3)), m((2, 3))))
    yield SampleInput(m((2, 1)), (make_mask((3,)), m((1, 3))), name="broadcast")
    yield SampleInput(m((3,)), (make_mask((3,)), O.scalar_for(dtype)), name="scalar")
    yield SampleInput(m(()), (make_mask(()), m(())), name="0d")


def _where_op(input, condition, other):
    return torch.where(condition, input, other)


def _where_dtype(s):
    return O.ref_result_type(s.input, s.args[1])


def _clamp_samples(dtype, requires_grad):
    def m(shape, **kw):
        return make(shape, dtype, requires_grad, **kw)
    lo, hi = (-3, 3) if not dtype.is_floating_point else (-3.5, 3.5)
    yield SampleInput(m((2, 3)), (lo, hi))
    yield SampleInput(m((4,)), (lo,), name="min_only")
    yield SampleInput(m((4,)), (None, hi), name="max_only")
    yield SampleInput(m((2, 3)), (m((2, 3), low=-9, high=0), m((3,), low=0, high=9)), name="tensor_bounds")
    yield SampleInput(m(()), (lo, hi), name="0d")
    yield SampleInput(m((0, 2)), (lo, hi), name="empty")
    if dtype.is_floating_point:  # NaN propagates through every bound (PyTorch)
        edge = O.tensor_of([math.nan, math.inf, -math.inf, 0.0, 9.0], dtype)
        yield SampleInput(edge, (-0.5, 0.5), name="nan", grad=False)
        yield SampleInput(edge, (0.1,), name="nan_min", grad=False)
        yield SampleInput(edge, (None, 0.5), name="nan_max", grad=False)
        bound = O.tensor_of([0.0, math.nan, 1.0, 0.0, 9.0], dtype)
        yield SampleInput(edge, (bound,), name="nan_tensor_min", grad=False)
        yield SampleInput(edge, (None, bound), name="nan_tensor_max", grad=False)


def _clamp_ref(x, min=None, max=None):
    out = x
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    return out


register(
    OpInfo("where", op=_where_op, ref=lambda x, c, y: np.where(c, x, y), dtypes=ALL_REAL,
           result_dtype=_where_dtype, sample_inputs=_where_samples,
           torch_op=lambda t: lambda x, c, y: t.where(c, x, y)),
    OpInfo("clamp", ref=_clamp_ref, dtypes=FLOATING + INTEGRAL, result_dtype=PROMOTE,
           sample_inputs=_clamp_samples, aliases=("clip",), method_aliases=("clip", "clip_")),
    OpInfo("clamp_min", ref=lambda x, v: np.maximum(x, v), dtypes=FLOATING + INTEGRAL,
           result_dtype=PROMOTE, sample_inputs=binary_samples(scalars=True)),
    OpInfo("clamp_max", ref=lambda x, v: np.minimum(x, v), dtypes=FLOATING + INTEGRAL,
           result_dtype=PROMOTE, sample_inputs=binary_samples(scalars=True)),
)


# ---------------------------------------------------------------------------------------
# Complex numbers


def _complex_samples(dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype, requires_grad), (make((2, 3), dtype, requires_grad),))
    yield SampleInput(make((), dtype, requires_grad), (make((), dtype, requires_grad),), name="0d")


def _complex_input_samples(dtype, requires_grad):
    """Complex tensors built from random parts (real tensors for real dtypes)."""
    for shape in ((2, 3), ()):
        if dtype.is_complex:
            yield SampleInput(torch.complex(make(shape, dtype.to_real()), make(shape, dtype.to_real())))
        else:
            yield SampleInput(make(shape, dtype, requires_grad))


_COMPLEX = (torch.complex64, torch.complex128)


def _complex_dtype(s):
    return s.input.dtype.to_complex()


def _real_dtype(s):
    return s.input.dtype.to_real()


register(
    OpInfo("complex", ref=lambda re, im: re + 1j * im, result_dtype=_complex_dtype,
           sample_inputs=_complex_samples, supports_gradgrad=False),  # gradcheck: real inputs only
    OpInfo("real", ref=np.real, dtypes=_COMPLEX + FLOATING, result_dtype=_real_dtype,
           sample_inputs=_complex_input_samples, supports_grad=False),
    OpInfo("imag", ref=np.imag, dtypes=_COMPLEX, result_dtype=_real_dtype,
           sample_inputs=_complex_input_samples, supports_grad=False),
    OpInfo("conj", ref=np.conj, dtypes=_COMPLEX + FLOATING, result_dtype=SAME,
           sample_inputs=_complex_input_samples, supports_grad=False,
           aliases=("conj_physical", "resolve_conj")),
)
