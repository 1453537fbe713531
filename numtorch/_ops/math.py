"""Pointwise math with PyTorch semantics: arithmetic, unary functions, comparisons, where.

Each op promotes and broadcasts its operands (``_common``) and binds one primitive, or
decomposes into a few. Docstrings follow PyTorch's.
"""
from __future__ import annotations

import builtins
import math

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core import primitive as _prim
from .._core.primitive import STACK, bind, grad_mode
from .._core.tensor import TENSOR_TYPES, Tensor, wrap_array
from .._prims import _onepass, elementwise as E
from .._prims import shape as S
from ._common import (OPMATH, _PROMOTE_CACHE, _fast_ranges, _promotion_key,
                      broadcast_shapes, broadcast_to, check_fits, check_param, check_tensor,
                      convert, eager_array, elementwise_binary, elementwise_operands,
                      float_dtype_for, is_scalar, match_device, number_array, result_type,
                      scalar_type_name, to_tensor, unary_float)
from ._backward_names import backward_name


# ---------------------------------------------------------------------------------------
# Arithmetic

def add(input, other, *, alpha=1, out=None):
    """Adds ``other``, scaled by ``alpha``, to ``input``: out = input + alpha * other."""
    if alpha != 1:
        check_param(alpha, (input, other))   # Note [Scalars that must fit]
        other = mul(other, alpha)
    if out is None:
        return elementwise_binary(E.add, input, other)
    return _out(elementwise_binary(E.add, input, other), out)


def sub(input, other, *, alpha=1, out=None):
    """Subtracts ``other``, scaled by ``alpha``, from ``input``."""
    if _is_bool(input) or _is_bool(other):
        _bool_subtraction(input, other)
    if alpha != 1:
        check_param(-alpha, (input, other))   # PyTorch adds other times -alpha
        other = mul(other, alpha)
    if out is None:
        return elementwise_binary(E.sub, input, other)
    return _out(elementwise_binary(E.sub, input, other), out)


subtract = sub


def _bool_subtraction(input, other):
    """PyTorch's errors for a bool operand of sub (a Python bool counts as a bool tensor)."""
    if not (isinstance(input, Tensor) or isinstance(other, Tensor)):
        return
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                       "If you are trying to invert a mask, use the `~` or `logical_not()` "
                       "operator instead.")


def _is_bool(x):
    return x._data.dtype.kind == "b" if isinstance(x, Tensor) else x.__class__ is bool


@backward_name(lambda input, other, **kw: "RsubBackward0" if isinstance(other, Tensor)
               else "RsubBackward1")
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    return sub(other, input, alpha=alpha)


def mul(input, other, *, out=None):
    """Multiplies ``input`` by ``other`` elementwise, with broadcasting and type promotion."""
    if out is None:
        return elementwise_binary(E.mul, input, other)
    return _out(elementwise_binary(E.mul, input, other), out)


multiply = mul


def _true_div_dtype(d):
    return float_dtype_for(d)


def div(input, other, *, rounding_mode=None, out=None):
    """Divides ``input`` by ``other``; ``rounding_mode`` None (true), 'trunc' or 'floor'."""
    if rounding_mode is None:
        if out is None:
            return elementwise_binary(E.div, input, other, compute_dtype=_true_div_dtype)
        return _out(elementwise_binary(E.div, input, other, compute_dtype=_true_div_dtype), out)
    return _out(_div_rounded(input, other, rounding_mode), out)


@backward_name("DivBackward2")
def _div_rounded(input, other, rounding_mode):
    if rounding_mode == "floor":
        # Note [Floor division of floats]: Python's and PyTorch's a // b is not floor(a / b)
        # (1.0 // 0.1 is 9.0: 0.1 is a little more than a tenth, and the quotient rounds up to
        # 10.0 before the floor); NumPy's floor_divide computes the same fmod-based quotient
        # as PyTorch's div_floor, infinities and signed zeros included.
        _real_only("div_floor", input, other)
        return elementwise_binary(E.floor_divide, input, other)
    if rounding_mode == "trunc":
        if result_type(input, other).is_floating_point:
            return trunc(div(input, other))
        _real_only("div_trunc", input, other)
        q = elementwise_binary(E.floor_divide, input, other)
        r = elementwise_binary(E.fmod, input, other)
        fix = logical_and(ne(r, 0), ne(lt(r, 0), lt(to_tensor(other) if is_scalar(other) else other, 0)))
        return where(fix, q + 1, q)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


divide = true_divide = div


def floor_divide(input, other):
    """``floor(input / other)`` (PyTorch ≥ 1.13 semantics)."""
    return div(input, other, rounding_mode="floor")


_POW_EXPONENT = {np.dtype(np.float32): np.dtype(np.float64)}   # Note [Scalars that must fit]


def pow(input, exponent):
    """Takes the power of each element in ``input`` with ``exponent``."""
    if isinstance(input, Tensor):
        if exponent.__class__ is int and exponent < 0 and input._data.dtype.kind in "iu":
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        check_param(exponent, (input, exponent), _POW_EXPONENT)   # Note [Scalars that must fit]
    return elementwise_binary(E.pow, input, exponent)


float_power = lambda input, exponent: pow(to_tensor(input, _dt.float64) if isinstance(
    input, Tensor) else input, to_tensor(exponent, _dt.float64) if isinstance(exponent, Tensor)
    else exponent)  # noqa: E731


def fmod(input, other):
    """C-style remainder (sign of the dividend)."""
    _real_only("fmod", input, other)
    return elementwise_binary(E.fmod, input, other)


def remainder(input, other):
    """Python-style modulus (sign of the divisor)."""
    _real_only("remainder", input, other)
    return elementwise_binary(E.remainder, input, other)


def _real_only(kernel, input, other):
    """PyTorch's error for a complex operand of an op without a complex kernel (NumPy has
    none either: checked here, so the primitive only ever sees dtypes it computes)."""
    for x in (input, other):
        if (x._data.dtype.kind == "c") if isinstance(x, Tensor) else x.__class__ is complex:
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for "
                                      f"'{scalar_type_name(result_type(input, other))}'")


def maximum(input, other):
    """Elementwise maximum of ``input`` and ``other``."""
    _ordered("maximum", input, other)
    return elementwise_binary(E.maximum, input, other)


def minimum(input, other):
    """Elementwise minimum of ``input`` and ``other``."""
    _ordered("minimum", input, other)
    return elementwise_binary(E.minimum, input, other)


def _ordered(name, input, other):
    """PyTorch's error for an order-based op on complex numbers, which have no order (NumPy
    would compare them lexicographically)."""
    for x in (input, other):
        if x._data.dtype.kind == "c" if isinstance(x, Tensor) else x.__class__ is complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")


@backward_name("FmaxBackward0")
def fmax(input, other):
    """Elementwise maximum that ignores NaN: NaN only where both operands are NaN."""
    _ordered("fmax", input, other)
    return _nan_ignoring(maximum, input, other)


@backward_name("FminBackward0")
def fmin(input, other):
    """Elementwise minimum that ignores NaN: NaN only where both operands are NaN."""
    _ordered("fmin", input, other)
    return _nan_ignoring(minimum, input, other)


def _nan_ignoring(fn, input, other):
    x, y = elementwise_operands(input, other)
    if x._data.dtype.kind not in "fc":
        return fn(x, y)
    return where(isnan(y), x, where(isnan(x), y, fn(x, y)))


def atan2(input, other):
    """Elementwise arctangent of ``input / other`` with the quadrant chosen by the signs."""
    check_tensor(input, "input", "atan2")
    check_tensor(other, "other", "atan2")
    _real_only("atan2", input, other)
    return elementwise_binary(E.atan2, input, other, compute_dtype=float_dtype_for)


arctan2 = atan2


def neg(input):
    """Returns the negative of the elements of ``input``."""
    check_tensor(input, "input", "neg")
    if input._data.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return bind(E.neg, input)


negative = neg


def positive(input):
    return input


def abs(input):
    """Computes the absolute value of each element."""
    check_tensor(input, "input", "abs")
    if input._data.dtype.kind == "c":
        # |z| = sqrt(re^2 + im^2); the inner where keeps sqrt's derivative finite at z = 0
        # (PyTorch's gradient there is 0), the outer one gives the exact value 0.
        r2 = real(input) ** 2 + imag(input) ** 2
        zero = r2 == 0
        return where(zero, 0.0, sqrt(where(zero, 1.0, r2)))
    return bind(E.abs, input)


absolute = abs


def sign(input):
    """Returns the sign (-1, 0, 1) of each element (a bool tensor is its own sign)."""
    check_tensor(input, "input", "sign")
    if input._data.dtype == np.bool_:
        return input.clone()
    return bind(E.sign, input)


def sgn(input):
    return sign(input)


def _rounding(prim):
    def op(input):
        check_tensor(input, "input", prim.name)
        kind = input._data.dtype.kind
        if kind in "iu":
            return input.clone()
        if kind in "bc":
            _no_rounding_loop(prim.name, input)
        return bind(prim, input)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise {prim.name}; integer tensors are returned unchanged."
    return op


floor, ceil, trunc = _rounding(E.floor), _rounding(E.ceil), _rounding(E.trunc)
fix = trunc


def round(input, *, decimals=0):
    """Rounds half to even, as PyTorch does; ``decimals`` scales before rounding."""
    check_tensor(input, "input", "round")
    kind = input._data.dtype.kind
    if kind in "iu":
        return input.clone()
    if kind in "bc":
        _no_rounding_loop("round", input)
    if decimals:
        scale = 10.0 ** decimals
        return bind(E.round, input * scale) / scale
    return bind(E.round, input)


def _no_rounding_loop(name, input):
    """PyTorch's errors for rounding a bool tensor (no CPU loop) or a complex one."""
    if input._data.dtype.kind == "c" and name != "round":
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    raise NotImplementedError(f"\"{name}_vml_cpu\" not implemented for "
                              f"'{scalar_type_name(input.dtype)}'")


def frac(input):
    return input - trunc(input)


def _unary(prim, doc):
    def op(input, *, out=None):
        return _out(unary_float(prim, input), out)
    op.__name__ = prim.name
    op.__doc__ = doc
    return op


exp = _unary(E.exp, "Returns the exponential of the elements of ``input``.")
exp2 = _unary(E.exp2, "Computes 2 to the power of each element.")
expm1 = _unary(E.expm1, "Computes exp(x) - 1 accurately for small x.")
log = _unary(E.log, "Returns the natural logarithm of the elements of ``input``.")
log2 = _unary(E.log2, "Base-2 logarithm of each element.")
log10 = _unary(E.log10, "Base-10 logarithm of each element.")
log1p = _unary(E.log1p, "Computes log(1 + x) accurately for small x.")
sqrt = _unary(E.sqrt, "Returns the square root of the elements of ``input``.")
rsqrt = _unary(E.rsqrt, "Returns the reciprocal of the square root of each element.")
sin = _unary(E.sin, "Returns the sine of the elements of ``input``.")
cos = _unary(E.cos, "Returns the cosine of the elements of ``input``.")
tan = _unary(E.tan, "Returns the tangent of the elements of ``input``.")
asin = arcsin = _unary(E.asin, "Returns the arcsine of the elements of ``input``.")
acos = arccos = _unary(E.acos, "Returns the arccosine of the elements of ``input``.")
atan = arctan = _unary(E.atan, "Returns the arctangent of the elements of ``input``.")
sinh = _unary(E.sinh, "Hyperbolic sine of each element.")
cosh = _unary(E.cosh, "Hyperbolic cosine of each element.")
tanh = _unary(E.tanh, "Returns the hyperbolic tangent of the elements of ``input``.")
asinh = arcsinh = _unary(E.asinh, "Inverse hyperbolic sine of each element.")
acosh = arccosh = _unary(E.acosh, "Inverse hyperbolic cosine of each element.")
atanh = arctanh = _unary(E.atanh, "Inverse hyperbolic tangent of each element.")
sigmoid = _unary(E.sigmoid, "Computes the logistic sigmoid 1 / (1 + exp(-x)).")
erf = _unary(E.erf, "Computes the error function of each element.")


def reciprocal(input):
    """Returns 1 / input elementwise (integers promote to the default float dtype)."""
    return div(1, input)


@backward_name("PowBackward0")
def square(input):
    """Returns input * input (bool squares to int64, as in PyTorch)."""
    if isinstance(input, Tensor) and input._data.dtype == np.bool_:
        input = convert(input, _dt.int64)
    return mul(input, input)


erfc = _unary(E.erfc, "Computes the complementary error function ``1 - erf(x)`` of each element.")
lgamma = _unary(E.lgamma, "Computes the natural logarithm of the absolute value of the gamma "
                          "function on ``input``.")
erfinv = _unary(E.erfinv, "Computes the inverse error function of ``input``, defined in the "
                          "range (-1, 1) as ``erfinv(erf(x)) = x`` (inf at 1, nan outside "
                          "[-1, 1]).")
i0 = _unary(E.i0, "Computes the zeroth order modified Bessel function of the first kind for "
                  "each element of ``input``.")


def sinc(input, *, out=None):
    """Computes the normalized sinc of ``input``: ``sin(pi x) / (pi x)``, and 1 at 0."""
    x = check_tensor(input, "input", "sinc")
    if x.dtype.is_complex:
        raise TypeError("sinc(): argument 'input' must be a real tensor in numtorch, got "
                        f"{x.dtype}")
    if not x.dtype.is_floating_point:
        x = convert(x, _dt.get_default_dtype())
    z = x * math.pi
    # Near 0 the Taylor series 1 - z^2/6 + z^4/120 (its next term, z^6/5040, is below
    # 1e-22 there): exact values, and derivatives of every order to the 4th right at 0,
    # where sin(z)/z has none.
    small = abs(z) < 1e-3
    safe = where(small, 1.0, z)
    z2 = where(small, z, 0.0) ** 2
    return _out(where(small, 1 - z2 / 6 + z2 * z2 / 120, sin(safe) / safe), out)


def digamma(input, *, out=None):
    """Computes the logarithmic derivative of the gamma function on ``input``.

    ``digamma(0)`` is ``-inf`` and ``digamma`` of a negative integer is ``nan``, as in PyTorch.
    """
    return polygamma(0, input, out=out)


def polygamma(n, input, *, out=None):
    """Computes the :math:`n^{th}` derivative of the digamma function on ``input``
    (:math:`n \\geq 0` is called the order of the polygamma function)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise RuntimeError(f"polygamma(n, input): n must be a non-negative integer, got {n!r}")
    if input.__class__ is not Tensor:
        input = check_tensor(input, "input", "polygamma") if not is_scalar(input) else to_tensor(input)
    if input.dtype.is_complex:
        raise RuntimeError(f"polygamma(n, input): complex input is not supported, got {input.dtype}")
    if not input.dtype.is_floating_point:
        input = convert(input, _dt.get_default_dtype())
    return _out(bind(E.polygamma, input, n=int(n)), out)


def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clamped to [eps, 1 - eps] when ``eps`` is given."""
    if input._data.dtype.kind in "biu":   # computed in the default float dtype, as PyTorch does
        input = convert(input, float_dtype_for(input.dtype))
    if eps is not None:
        input = clamp(input, eps, 1 - eps)
    return log(input / (1 - input))


@backward_name(lambda input, other: "XlogyBackward1" if not isinstance(input, Tensor) else
               "XlogyBackward0" if isinstance(other, Tensor) else "XlogyBackward2")
def xlogy(input, other):
    """``input * log(other)``, zero where ``input`` is zero (NaN if ``other`` is NaN)."""
    x, y = elementwise_operands(input, other, dtype=float_dtype_for(result_type(input, other)))
    return where((x == 0) & ~isnan(y), _zeros_like(x), x * log(y))


def _zeros_like(x):
    from .creation import zeros_like
    return zeros_like(x)


@backward_name(lambda input, end, weight: "LerpBackward1" if isinstance(weight, Tensor) else "LerpBackward0")
def lerp(input, end, weight):
    """``input + weight * (end - input)``."""
    check_param(weight, (input, end), OPMATH)   # Note [Scalars that must fit]
    return input + weight * (end - input)


@backward_name("HypotBackward0")
def hypot(input, other):
    return sqrt(input * input + other * other)


@backward_name("LogaddexpBackward0")
def logaddexp(input, other):
    m = maximum(input, other)
    m = where(isinf(m), _zeros_like(m), m).detach()
    return m + log(exp(input - m) + exp(other - m))


def real(input):
    """The real part of a complex tensor (the tensor itself for real tensors)."""
    return bind(E.real, input) if input._data.dtype.kind == "c" else input


def imag(input):
    """The imaginary part of a complex tensor."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return bind(E.imag, input)


def conj(input):
    """Complex conjugate (the tensor itself for real tensors)."""
    return bind(E.conj, input) if input._data.dtype.kind == "c" else input


conj_physical = resolve_conj = conj


def complex(real, imag):
    """Builds a complex tensor from real and imaginary parts of the same float dtype."""
    if real.dtype != imag.dtype or not real.dtype.is_floating_point:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype} and {imag.dtype}")
    a, b = elementwise_operands(real, imag)
    return bind(E.complex_, a, b)


def _clamp_name(input, min=None, max=None):
    # PyTorch's clamp.Tensor overload is ClampBackward0, clamp(Scalar) ClampBackward1.
    return "ClampBackward0" if isinstance(min, Tensor) or isinstance(max, Tensor) else "ClampBackward1"


def clamp(input, min=None, max=None):
    """Clamps all elements of ``input`` into the range [min, max]."""
    d = eager_array(input)
    if d is not None and d.dtype.kind in "fiu" and min.__class__ in _BOUNDS and \
            max.__class__ in _BOUNDS and (min is not None or max is not None):
        # Note [Eager clamp]
        key = ("clamp", d.dtype, d.ndim == 0, min.__class__, max.__class__, _dt._default[0])
        cached = _PROMOTE_CACHE.get(key)
        if cached is None:
            dt = _clamp_dtype(d, min, max)
            cached = _PROMOTE_CACHE[key] = (dt, None if dt is None else _fast_ranges(dt))
        dt, fits = cached
        if dt is not None:
            # Note [Scalars that must fit]: a bound outside dt's range raises, as in PyTorch
            if min is not None:
                r = fits[min.__class__]
                if not r[0] <= min <= r[1]:
                    check_fits(min, dt)
                lo = number_array(min, dt)
            else:
                lo = _LIMITS[dt][0]
            if max is not None:
                r = fits[max.__class__]
                if not r[0] <= max <= r[1]:
                    check_fits(max, dt)
                hi = number_array(max, dt)
            else:
                hi = _LIMITS[dt][1]
            return wrap_array(_clip(d if d.dtype is dt else d.astype(dt), lo, hi))
    return _clamp(input, min, max)


# Note [Eager clamp]
# PyTorch's clamp(x, min, max) with Python numbers is min(max(x, min), max) in one pass: a
# NaN in x or in a bound gives NaN, min > max gives max, and a tie keeps x (-0.0 stays
# -0.0 at min=0.0). NumPy's `clip` ufunc is that, bit for bit, for every size and layout
# (`np.maximum`/`np.minimum` are not: their SIMD loops and scalar loop break signed-zero
# ties differently). So a tensor the eager fast path takes (`eager_array`), of a
# floating or integer dtype NumPy has, clamped by numbers, is one `clip` in the dtype the
# general path's promotion gives (`_clamp_dtype`, cached), with a missing bound at the
# dtype's extreme (±inf: a tie there keeps the same bits). The general path binds two
# selects and a NaN fix per bound (Note [Clamp's gradient and NaN]); it makes a fresh NaN
# where the fast path, as PyTorch, keeps the input's (its sign bit): the one difference,
# NaN for NaN. Bounds out of the dtype's range raise on both paths (Note [Scalars that must
# fit]).

_BOUNDS = (int, float, type(None))
_clip = np._core.umath.clip


def _clamp_dtype(d, min, max):
    """The NumPy dtype the general path clamps ``d`` in (each bound promotes in turn), or
    None where NumPy has no such dtype (Note [Eager clamp])."""
    dt = _dt.from_numpy(d.dtype)
    for bound in (min, max):
        if bound is not None:
            dt = result_type(np.zeros((0,) * d.ndim, dt.np), bound)
    return dt.np if _limits(dt.np) is not None else None


def _limits(dt):
    """The lowest and highest values of NumPy dtype ``dt`` as 0-d arrays (±inf for floats;
    cached), or None for a dtype that has no `clip` loop here."""
    limits = _LIMITS.get(dt)
    if limits is None:
        if dt in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
            limits = _LIMITS[dt] = (np.asarray(-np.inf, dt), np.asarray(np.inf, dt))
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            limits = _LIMITS[dt] = (np.asarray(info.min, dt), np.asarray(info.max, dt))
    return limits


_LIMITS: dict = {}   # NumPy dtype -> its lowest and highest value, as 0-d arrays


@backward_name(_clamp_name)
def _clamp(input, min=None, max=None):
    check_tensor(input, "input", "clamp")
    if input._data.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (min, max) if is_scalar(b)]
    if bounds:   # Note [Scalars that must fit]: converted to the result's dtype, checked
        dt = result_type(input, *[b for b in (min, max) if b is not None]).np
        for b in bounds:
            check_fits(b, dt)
    out = input
    if min is not None:
        out = _clamp_bound(out, min, lower=True)
    if max is not None:
        out = _clamp_bound(out, max, lower=False)
    return out


def _clamp_bound(x, bound, lower):
    # Note [Clamp's gradient and NaN]: PyTorch's clamp is not maximum/minimum: on a tie
    # the whole gradient goes to `input` (maximum splits it), and a NaN in `input` or in
    # the bound makes the result NaN with a zero gradient for both (the NaN comes from a
    # constant here, so no derivative flows through it).
    if is_scalar(bound):
        dt = result_type(x, bound)
        x, b = match_device(convert(x, dt), to_tensor(bound, dt))
        b = broadcast_to(b, x._data.shape)
    else:
        x, b = elementwise_operands(x, bound)
    out = where(x >= b, x, b) if lower else where(x <= b, x, b)
    if x.dtype.is_floating_point or x.dtype.is_complex:
        out = where(isnan(x) | isnan(b), _zeros_like(out) + float("nan"), out)
    return out


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


# ---------------------------------------------------------------------------------------
# Comparisons and logic

def _compare(prim):
    def op(input, other):
        return elementwise_binary(prim, input, other)
    op.__name__ = prim.name
    op.__doc__ = f"Computes ``input {prim.name} other`` elementwise, returning a bool tensor."
    return op


eq, ne, lt, le, gt, ge = (_compare(p) for p in (E.eq, E.ne, E.lt, E.le, E.gt, E.ge))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(prim):
    def op(input, other):
        a, b = elementwise_operands(input, other)
        return bind(prim, convert(a, _dt.bool_), convert(b, _dt.bool_))
    op.__name__ = prim.name
    op.__doc__ = f"Computes the elementwise {prim.name} of the operands, treating nonzero as True."
    return op


logical_and, logical_or, logical_xor = (_logical(p) for p in (E.logical_and, E.logical_or, E.logical_xor))


def logical_not(input):
    """Elementwise logical NOT; nonzero is True."""
    return bind(E.logical_not, convert(input, _dt.bool_))


def _bitwise(prim):
    def op(input, other):
        dt = result_type(input, other)
        if dt.is_floating_point or dt.is_complex:
            raise RuntimeError(f"\"{prim.name}_cpu\" not implemented for '{scalar_type_name(dt)}'")
        return elementwise_binary(prim, input, other)
    op.__name__ = prim.name
    return op


bitwise_and, bitwise_or, bitwise_xor = (_bitwise(p) for p in (E.bitwise_and, E.bitwise_or, E.bitwise_xor))


def _shift(prim, kernel):
    def op(input, other):
        dt = result_type(input, other)
        if dt.is_floating_point or dt.is_complex or dt == _dt.bool_:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dt)}'")
        return elementwise_binary(prim, input, other)
    return op


bitwise_left_shift = _shift(E.shift_left, "lshift_cpu")
bitwise_left_shift.__name__ = "bitwise_left_shift"
bitwise_left_shift.__doc__ = """Shifts the bits of ``input`` left by ``other``; a count below 0 or
    not below the dtype's width gives 0."""
bitwise_right_shift = _shift(E.shift_right, "rshift_cpu")
bitwise_right_shift.__name__ = "bitwise_right_shift"
bitwise_right_shift.__doc__ = """Shifts the bits of ``input`` right by ``other``, keeping the
    sign; a count below 0 or not below the dtype's width gives 0 or -1."""


def bitwise_not(input):
    if input._data.dtype.kind in "fc":
        raise RuntimeError(f"\"bitwise_not_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    if input._data.dtype == np.bool_:
        return logical_not(input)
    return bind(E.bitwise_not, input)


def isnan(input):
    """Returns a bool tensor that is True where ``input`` is NaN."""
    return bind(E.isnan, input)


def isinf(input):
    return bind(E.isinf, input)


def isfinite(input):
    return bind(E.isfinite, input)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where |input - other| <= atol + rtol * |other| elementwise."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    a, b = elementwise_operands(input, other)
    if a._data.dtype.kind not in "fc":
        a, b = convert(a, _dt.float64), convert(b, _dt.float64)
    close = eq(a, b) | ((abs(a - b) <= atol + rtol * abs(b)) & isfinite(a) & isfinite(b))
    if equal_nan:
        close = close | (isnan(a) & isnan(b))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether all elements of ``input`` and ``other`` are close (see ``isclose``)."""
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other) -> bool:
    """True if the two tensors have the same size and elements."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(eq(input, other).all())


def where(condition, input=None, other=None):
    """Selects from ``input`` where ``condition`` is True, else from ``other``."""
    if input is None and other is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    check_tensor(condition, "condition", "where")
    if condition._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(condition.dtype)}")
    dt = _where_dtype(input, other)
    if not isinstance(input, Tensor):
        check_param(input, (input, other), OPMATH)   # Note [Scalars that must fit]
    if not isinstance(other, Tensor):
        check_param(other, (input, other), OPMATH)
    condition, x, y = match_device(condition, to_tensor(input, dt), to_tensor(other, dt))
    sc, sx, sy = condition._data.shape, x._data.shape, y._data.shape
    if len(sc) == len(sx) and sc == sx and (not sy or sy == sc):   # Note [Comparing shapes]
        shape = sc   # where(c, g, 0.0), as in every ReLU's gradient: broadcast the number only
    else:
        shape = broadcast_shapes(sc, sx, sy)
    return bind(E.select, broadcast_to(condition, shape), broadcast_to(x, shape), broadcast_to(y, shape))


def _where_dtype(input, other):
    """``result_type(input, other)``, cached per operand kind (where runs in every ReLU)."""
    key = (_promotion_key(input), _promotion_key(other), "where", _dt._default[0])
    dt = _PROMOTE_CACHE.get(key)
    if dt is None:
        dt = _PROMOTE_CACHE[key] = result_type(input, other)
    return dt


def _out(result, out):
    if out is None:
        return result
    out.copy_(result) if tuple(out.shape) == tuple(result.shape) else out.resize_as_(result).copy_(result)
    return out


def relu(input):
    """Rectified linear unit: ``max(input, 0)``, NaN kept, ``relu(-0.0)`` is -0.0 (eager), and
    the gradient is 0 at 0, as in PyTorch (Note [ReLU's zero])."""
    d = input._data if input.__class__ in TENSOR_TYPES else None
    if d.__class__ is not ndarray or STACK or d.dtype.kind not in "fiu":
        batched = getattr(d, "map_elementwise", None)   # Note [Elementwise composites
        if batched is not None:                          # under vmap], func/_vmap.py
            out = batched(relu)
            if out is not None:
                return out
        if d.__class__ is not ndarray or _claimed() or d.dtype.kind not in "fiu":
            return _relu_general(input)
    # Note [ReLU's zero]: small arrays in one NumPy clip (a C kernel's call costs more)
    out = _onepass.relu(d) if d.size >= _SMALL_RELU else None
    if out is None:
        out = _clip(d, _zero_of(d.dtype), _limits(d.dtype)[1])   # -0.0 and NaN kept
    out = wrap_array(out)
    if not (input._requires_grad and grad_mode[0]):
        return out
    edge = (input.grad_fn, input._output_nr) if input.grad_fn is not None else (input, 0)
    return _prim.record_node(_relu_node, (input,), (edge,), out)


def _claimed():
    """Whether an interpreter takes binds on plain tensors (Note [Capture claims constants],
    Note [Symbolic params]); else they reach eager autograd and NumPy, as relu's fast path
    does."""
    return bool(_prim.SYMBOLIC_OWNERS) or (STACK and STACK[-1].claims_constants)


@backward_name("ReluBackward0")
def _relu_general(input):
    """relu under transforms, on meta tensors and for other dtypes: one select of
    ``input <= 0`` (Note [ReLU's zero])."""
    check_tensor(input, "input", "relu")
    d = input._data
    if d.dtype == np.bool_:
        raise RuntimeError("\"clamp_min_cpu\" not implemented for 'Bool'")
    if d.dtype.kind not in "fiu":
        return where(input <= 0, 0, input)
    _, zero = match_device(input, to_tensor(0, _dt.from_numpy(d.dtype)))
    zero = broadcast_to(zero, d.shape)
    return bind(E.select, bind(E.le, input, zero), zero, input)


def _relu_vjp(g, out, x):
    """ReluBackward0: ``g`` where the output is > 0 (or NaN), 0 where it is <= 0, which is
    where the input is <= 0 (Note [ReLU's zero])."""
    def grad_x():
        gd, yd = g._data, out._data
        if STACK or gd.__class__ is not ndarray or yd.__class__ is not ndarray:
            return where(out <= 0, 0.0, g)
        if grad_mode[0]:   # create_graph: a select node, differentiated again in g
            return E._select_ct(wrap_array(E.le.impl(yd, _zero_of(yd.dtype))), g, False)
        r = _onepass.relu_grad(yd, gd)
        if r is None:
            zero = _zero_of(yd.dtype)
            r = E.select.impl(E.le.impl(yd, zero), zero, gd)
        return wrap_array(r)
    return (grad_x,)


def _zero_of(dtype):
    """A cached 0-d zero of ``dtype``."""
    zero = _ZEROS.get(dtype)
    if zero is None:
        zero = _ZEROS[dtype] = np.zeros((), dtype)
    return zero


# PyTorch's ReluBackward0 (Node.name capitalizes the primitive's name) saves the output only
_relu_node = _prim.Primitive("relu", vjp=_relu_vjp, register=False)
_relu_node.vjp_needs = (("out",),)   # Note [What backward reads]


# Note [ReLU's zero]
# ReLU is `where(input <= 0, 0, input)`, PyTorch's value at 0 and its NaN (kept), with the
# gradient 0 at 0. In eager mode it is PyTorch's ReluBackward0: the value is computed
# in one pass (`_onepass.relu`, where a C compiler works; else a comparison and a select
# on a cached 0-d zero) and one node is recorded that saves the output only (the input,
# if large, is not kept: Note [Saved values]); the gradient is computed from the output
# in one pass too (`_onepass.relu_grad`), g where the output is > 0 or NaN, 0 elsewhere.
# Reading the output makes an in-place write to it an error at backward, as in PyTorch.
# In the MLP 784-512-256-10 SGD step this replaced a comparison, a select and a second
# comparison (the mask) forward and a bound select backward.
# The eager value is `where(input < 0, 0, input)`, PyTorch's clamp_min: relu(-0.0) is
# -0.0 there, as in PyTorch (`<=` would give +0.0), while the gradient's test is `<= 0`
# (the output is <= 0 exactly where the input is), which gives PyTorch's gradient 0 at
# both zeros; the two tests agree as numbers everywhere, so the node is the derivative
# of the value computed. Under vmap relu is the same op on the batched value (Note
# [Elementwise composites under vmap], func/_vmap.py), so an eager value's -0.0 stays.
# Under other transforms and on meta tensors relu is the one select of
# `input <= 0` (+0.0 at -0.0), binding one broadcast zero for both uses: the sign there
# would need a second select with a stop_gradient, two binds more per ReLU at every
# level, for a value equal to the other as a number.
# Below `_SMALL_RELU` elements the eager value is NumPy's clip to [0, +inf] (or the
# integer dtype's maximum), one ufunc call that is exactly `where(input < 0, 0, input)`:
# clip keeps the input on a tie (-0.0 at the bound 0.0) and its NaN (Note [Eager clamp]);
# the one-pass kernel's call through ctypes costs more than the pass on so few elements.
_ZEROS: dict = {}
_SMALL_RELU = 4096


# `from ._ops.math import *` (numtorch/__init__.py) exports the ops defined here, never the
# helpers this module imports (bind, np, check_tensor, ...).
__all__ = [_n for _n, _v in list(globals().items()) if not _n.startswith("_") and callable(_v)
           and getattr(_v, "__module__", None) == __name__]
