"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, casts.

All are strict: operands have equal shapes and dtypes (the ops layer broadcasts and
promotes). One helper per family makes each primitive a line or two.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._core.primitive import STACK, Primitive
from .._core.tensor import wrap
from . import _onepass, _small, _special_math as _special
from ._helpers import T, batch_all_to_front, same_shape

# ---------------------------------------------------------------------------------------
# Family helpers


def _elementwise_batch(prim):
    def batch(values, bdims, **params):
        # Every operand batched at one position (the common case: unary ops, or two
        # tensors of one vmap level) needs no moving: checked without a comprehension.
        b = bdims[0]
        if b is not None:
            for d in bdims:
                if d != b:
                    break
            else:
                return prim.bind(*values, **params), b
        return prim.bind(*batch_all_to_front(values, bdims), **params), 0
    return batch


def unary(name, impl, deriv=None, *, nondiff=False, shape=same_shape):
    """An elementwise unary primitive; ``deriv(x, out)`` is dy/dx, giving both jvp and vjp."""
    p = Primitive(name, impl=impl, shape=shape, nondiff=nondiff)
    p.batch = _elementwise_batch(p)
    if deriv is not None:
        def jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            out = p.bind(x)
            return out, t * deriv(x, out)
        p.jvp = jvp
        p.vjp = lambda g, out, x: (g * _conj(deriv(x, out)),)
    return p


def _conj(t):
    return t.conj() if t._data.dtype.kind == "c" else t


def binary(name, impl, vjp=None, jvp=None, *, nondiff=False, shape=same_shape):
    """An elementwise binary primitive with its rules given explicitly."""
    p = Primitive(name, impl=impl, shape=shape, vjp=vjp, jvp=jvp, nondiff=nondiff)
    p.batch = _elementwise_batch(p)
    p.ufunc = impl if isinstance(impl, np.ufunc) else None   # lets in-place ops write `out=`
    return p


def _linear_jvp(prim):
    """jvp of a bilinear-free linear op (add, sub): apply the op to the tangents."""
    def jvp(primals, tangents):
        ts = [t if t is not None else T.zeros_like(x) for x, t in zip(primals, tangents)]
        return prim.bind(*primals), prim.bind(*ts)
    return jvp


# Note [Silent floating-point errors]
# PyTorch returns inf/nan for log(0), 1/0, sqrt(-1) without a warning; NumPy warns. The
# impls of such primitives run with NumPy's error handling set to "ignore". `np.errstate`
# costs ~1 µs per call, as much as the ufunc on a small array, so when NumPy exposes the
# context variable behind it we set that directly (~0.15 µs), keeping errstate otherwise.
# The ops whose impls are bare ufuncs on the eager fast path (add, mul, matmul, casts) meet
# an error only at the ends of the range (1e30 * 1e30, a float16 cast of 7e4, a product
# with a NaN), where even 0.15 µs per call would be paid by every x + y for nothing; for
# them a warnings filter, scoped to warnings raised from numtorch's own modules, keeps
# PyTorch's silence at no cost per call. A user's own NumPy code still warns. The filter
# lives in the process's filter list, so a `warnings.catch_warnings` block that imports
# numtorch (pytest's collection does) drops it on exit: there these rare warnings show.
warnings.filterwarnings(
    "ignore", message=r"(overflow|underflow|invalid value|divide by zero) encountered",
    category=RuntimeWarning, module=r"numtorch\.")
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _EXTOBJ
    with np.errstate(all="ignore"):
        _IGNORE = _EXTOBJ.get()
except (ImportError, AttributeError):  # pragma: no cover - other NumPy versions
    _EXTOBJ = None


def _errstate(fn):
    if _EXTOBJ is None:  # pragma: no cover
        def impl(*args):
            with np.errstate(all="ignore"):
                return fn(*args)
    else:
        def impl(*args):
            token = _EXTOBJ.set(_IGNORE)
            try:
                return fn(*args)
            finally:
                _EXTOBJ.reset(token)
    impl.__name__ = getattr(fn, "__name__", "impl")
    impl.__wrapped__ = fn       # the ufunc itself, for numtorch._inductor's NumPy fallback
    return impl


# ---------------------------------------------------------------------------------------
# Unary math

neg = unary("neg", np.negative, lambda x, y: T.full_like(x, -1))
exp = unary("exp", _errstate(np.exp), lambda x, y: y)
exp2 = unary("exp2", _errstate(np.exp2), lambda x, y: y * math.log(2.0))
expm1 = unary("expm1", _errstate(np.expm1), lambda x, y: y + 1)
log = unary("log", _errstate(np.log), lambda x, y: 1 / x)
log2 = unary("log2", _errstate(np.log2), lambda x, y: 1 / (x * math.log(2.0)))
log10 = unary("log10", _errstate(np.log10), lambda x, y: 1 / (x * math.log(10.0)))
log1p = unary("log1p", _errstate(np.log1p), lambda x, y: 1 / (x + 1))
sqrt = unary("sqrt", _errstate(np.sqrt), lambda x, y: 0.5 / y)
rsqrt = unary("rsqrt", _errstate(lambda x: 1 / np.sqrt(x)), lambda x, y: -0.5 * y / x)
sin = unary("sin", np.sin, lambda x, y: T.cos(x))
cos = unary("cos", np.cos, lambda x, y: -T.sin(x))
tan = unary("tan", _errstate(np.tan), lambda x, y: 1 + y * y)
asin = unary("asin", _errstate(np.arcsin), lambda x, y: T.rsqrt(1 - x * x))
acos = unary("acos", _errstate(np.arccos), lambda x, y: -T.rsqrt(1 - x * x))
atan = unary("atan", np.arctan, lambda x, y: 1 / (1 + x * x))
sinh = unary("sinh", _errstate(np.sinh), lambda x, y: T.cosh(x))
cosh = unary("cosh", _errstate(np.cosh), lambda x, y: T.sinh(x))
tanh = unary("tanh", np.tanh, lambda x, y: 1 - y * y)
asinh = unary("asinh", np.arcsinh, lambda x, y: T.rsqrt(x * x + 1))
acosh = unary("acosh", _errstate(np.arccosh), lambda x, y: T.rsqrt(x * x - 1))
atanh = unary("atanh", _errstate(np.arctanh), lambda x, y: 1 / (1 - x * x))


def _sigmoid_formula(x):
    return 1 / (1 + np.exp(-x))


# exp(-x) overflows to inf for x < -88 (float32): 1 / inf is sigmoid's 0, not an error.
# `_errstate` ignores it as `np.errstate` would, at a tenth of the cost (nothing else can
# raise: 1 + exp(-x) >= 1).
_sigmoid_numpy = _errstate(_sigmoid_formula)


def _sigmoid_impl(x):
    # One C call with the formula's bits where it applies (Note [Small-tensor kernels],
    # _small.py), so eager, bound and compiled-fallback sigmoids agree; else NumPy's four.
    out = _small.sigmoid(x)
    return out if out is not None else _sigmoid_numpy(x)


sigmoid = unary("sigmoid", _sigmoid_impl, lambda x, y: y * (1 - y))
_erf_vec = np.frompyfunc(math.erf, 1, 1)


_erfc_vec = np.frompyfunc(math.erfc, 1, 1)


def _erf_impl(x):
    # math.erf is correctly rounded in double; NumPy has no erf (see Note [erf]).
    return np.asarray(_erf_vec(x)).astype(x.dtype) if x.size else x.copy()


def _erfc_impl(x):
    # Its own primitive, not 1 - erf(x): that cancels to 0 where erfc(x) ~ 1e-300.
    return np.asarray(_erfc_vec(x)).astype(x.dtype) if x.size else x.copy()


# Note [erf]
# NumPy ships no erf and SciPy is not a runtime dependency. math.erf element by element is
# exact but slow (~60 ns/element); GELU(exact) pays it. A vectorised rational
# approximation is the planned replacement once it is shown to agree to the last ulp.
erf = unary("erf", _erf_impl, lambda x, y: (2 / math.sqrt(math.pi)) * T.exp(-x * x))
erfc = unary("erfc", _erfc_impl, lambda x, y: (-2 / math.sqrt(math.pi)) * T.exp(-x * x))
lgamma = unary("lgamma", _special.lgamma, lambda x, y: polygamma.bind(x, n=0))
# d erfinv(x)/dx = sqrt(pi)/2 * exp(erfinv(x)^2): the output is all the rule needs.
erfinv = unary("erfinv", _special.erfinv, lambda x, y: (math.sqrt(math.pi) / 2) * T.exp(y * y))
# i0' = i1 and i1' = i0 - i1 / x (1/2 at 0): the pair differentiates to any order.
i0 = unary("i0", _special.i0, lambda x, y: i1.bind(x))
i1 = unary("i1", _special.i1, lambda x, y: T.where(x == 0, 0.5, i0.bind(x) - y / T.where(x == 0, 1.0, x)))


def _polygamma_impl(x, *, n):
    return _special.polygamma(n, x)


# polygamma(x, n=k) is the k-th derivative of digamma (k = 0 is digamma itself); its
# derivative is the next order, so every order differentiates to any depth.
polygamma = Primitive("polygamma", impl=_polygamma_impl, shape=same_shape)
polygamma.batch = _elementwise_batch(polygamma)
polygamma.jvp = lambda p, t, *, n: (polygamma.bind(p[0], n=n),
                                    t[0] * polygamma.bind(p[0], n=n + 1))
polygamma.vjp = lambda g, out, x, *, n: (g * polygamma.bind(x, n=n + 1),)
abs = unary("abs", np.abs, lambda x, y: T.sign(x))
def _sign_impl(x):
    if x.dtype.kind != "f":
        return np.sign(x)
    out = np.sign(x, out=np.empty_like(x))  # an array even for 0-d inputs
    out[np.isnan(x)] = 0  # PyTorch: sign(nan) == 0
    return out


sign = unary("sign", _sign_impl, lambda x, y: T.zeros_like(x))
floor = unary("floor", np.floor, lambda x, y: T.zeros_like(x))
ceil = unary("ceil", np.ceil, lambda x, y: T.zeros_like(x))
round = unary("round", np.round, lambda x, y: T.zeros_like(x))
trunc = unary("trunc", np.trunc, lambda x, y: T.zeros_like(x))


def _zero_derivative(p):
    # Piecewise constant: the derivative is an exact zero (PyTorch's zeros_like), not
    # t * 0, which is NaN for an inf or NaN tangent (log1p(-1).floor() under jvp).
    p.jvp = lambda primals, tangents: (lambda out: (out, T.zeros_like(out)))(p.bind(*primals))
    p.vjp = lambda g, out, x: (T.zeros_like(x),)


for _p in (sign, floor, ceil, round, trunc):
    _zero_derivative(_p)
logical_not = unary("logical_not", np.logical_not, nondiff=True,
                    shape=lambda a: (a.shape, np.dtype(bool)))
bitwise_not = unary("bitwise_not", np.invert, nondiff=True)
isnan = unary("isnan", np.isnan, nondiff=True, shape=lambda a: (a.shape, np.dtype(bool)))
isinf = unary("isinf", np.isinf, nondiff=True, shape=lambda a: (a.shape, np.dtype(bool)))
isfinite = unary("isfinite", np.isfinite, nondiff=True, shape=lambda a: (a.shape, np.dtype(bool)))


def _real_shape(a):
    return a.shape, np.empty(0, a.dtype).real.dtype


conj = unary("conj", np.conj, None)
conj.jvp = lambda primals, tangents: (conj.bind(primals[0]), conj.bind(tangents[0]))
conj.vjp = lambda g, out, x: (conj.bind(g),)
real = unary("real", lambda x: np.real(x).copy(), None, shape=_real_shape)
real.jvp = lambda primals, tangents: (real.bind(primals[0]), real.bind(tangents[0]))
real.vjp = lambda g, out, x: (T.complex(g, T.zeros_like(g)),)
imag = unary("imag", lambda x: np.imag(x).copy(), None, shape=_real_shape)
imag.jvp = lambda primals, tangents: (imag.bind(primals[0]), imag.bind(tangents[0]))
imag.vjp = lambda g, out, x: (T.complex(T.zeros_like(g), g),)

# ---------------------------------------------------------------------------------------
# Binary arithmetic

# sub, mul and div give lazy cotangents (Note [Lazy cotangents], autograd/engine.py): often
# only one operand needs a gradient (`pred - target`, `lr * g`, `x / n`), and the other's
# would cost a bind (and a node under create_graph) for nothing.
add = binary("add", np.add, vjp=lambda g, out, x, y: (g, g))
add.jvp = _linear_jvp(add)
sub = binary("sub", np.subtract, vjp=lambda g, out, x, y: (g, lambda: -g))
sub.jvp = _linear_jvp(sub)
mul = binary("mul", np.multiply,
             vjp=lambda g, out, x, y: (lambda: g * _conj(y), lambda: g * _conj(x)))
mul.jvp = lambda p, t: (mul.bind(*p), _sum_tangents(
    None if t[0] is None else t[0] * p[1], None if t[1] is None else p[0] * t[1], p[0]))
div = binary("div", _errstate(np.true_divide),
             vjp=lambda g, out, x, y: (lambda: g / _conj(y), lambda: -g * _conj(out) / _conj(y)))
div.jvp = lambda p, t: (lambda out: (out, _sum_tangents(
    None if t[0] is None else t[0] / p[1], None if t[1] is None else -t[1] * out / p[1],
    p[0])))(div.bind(*p))


def _integral(x, y):
    return x.dtype.kind in "iu"   # strict operands: one dtype, arrays only


def _pow_impl(x, y):
    if _integral(x, y):
        negative = np.less(y, 0)
        if negative.any():
            # PyTorch's integer pow: 1/x**n truncated, so 0 but for x = 1 and x = -1 (and 0
            # for x = 0); a negative Python-number exponent raises earlier (math.pow)
            odd = np.bitwise_and(y, 1).astype(bool)
            inverse = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0)).astype(x.dtype)
            return np.where(negative, inverse, _power(x, np.where(negative, 0, y)))
    return _power(x, y)


_power = _errstate(np.power)   # np.errstate's context manager costs ~1 us a call


def _pow_dx(x, y):
    # d/dx x**y = y * x**(y-1), defined as 0 where y == 0 (so 0**0 has gradient 0).
    return T.where(y == 0, T.zeros_like(x), y * x ** (y - 1))


def _pow_dy(x, out):
    # d/dy x**y = log(x) * x**y, defined as 0 where x == 0 and the result is 0.
    return T.where((x == 0) & (out == 0), T.zeros_like(x), T.log(x) * out)


def _pow_x_ct(g, x, y):
    """The cotangent of pow's base (Note [A constant exponent])."""
    d = y._data
    if (d.__class__ is np.ndarray and not y._requires_grad and d.dtype.kind == "f" and d.size
            and not any(d.strides)):
        c = d.item(0)
        if c == 2:
            return g * (x * 2)
        if c != 0:
            return g * (x ** (c - 1) * c)
    return g * _pow_dx(x, y)


# Note [A constant exponent]
# `x ** 2` binds pow with the 2 broadcast to x's shape (primitives are strict). The general
# derivative, where(y == 0, 0, y * x ** (y - 1)), binds six ops, and under
# create_graph=True (MAML's inner steps) each is recorded and differentiated again. An
# exponent that is one number broadcast (a read-only zero-stride array not requiring
# grad: what the ops layer makes of a Python number) has PyTorch's scalar-exponent
# derivative instead, c * x ** (c - 1), and x * 2 for c == 2 (x ** 1 is x); it reads the
# number, so an exponent that could change or carry a gradient takes the general path.
# The base may be anything, a transform's tracer included: under vmap(grad(...)) (MAML's
# inner loss) the exponent is still the ops layer's broadcast number, unbatched, and the
# six-op form would pass through every level of the stack.

pow = binary("pow", _pow_impl,
             vjp=lambda g, out, x, y: (lambda: _pow_x_ct(g, x, y), lambda: g * _pow_dy(x, out)))
pow.jvp = lambda p, t: (lambda out: (out, _sum_tangents(
    None if t[0] is None else t[0] * _pow_dx(*p), None if t[1] is None else t[1] * _pow_dy(p[0], out),
    p[0])))(pow.bind(*p))


def _select_first(x, y):
    # Gradient of max/min: split evenly between equal operands, as PyTorch does.
    return T.where(x == y, T.full_like(x, 0.5), (x > y).to(x.dtype))


def _max_grad(g, x, y):
    # Note [Max/min gradient masks]: the unselected operand gets an exact zero, never
    # 0 * g (g may be NaN or inf: maximum(x, -.5).sqrt() at x = -1); ties split g evenly
    # and a NaN operand passes g to both (PyTorch's masked_fill(self < other, 0)).
    half = T.where(x == y, g * 0.5, g)
    return T.where(x < y, 0.0, half), T.where(y < x, 0.0, half)


maximum = binary("maximum", np.maximum)
maximum.vjp = lambda g, out, x, y: _max_grad(g, x, y)
maximum.jvp = lambda p, t: (maximum.bind(*p), _mix(_select_first(*p), t, p[0]))
minimum = binary("minimum", np.minimum)
minimum.vjp = lambda g, out, x, y: _max_grad(g, y, x)
minimum.jvp = lambda p, t: (minimum.bind(*p), _mix(_select_first(p[1], p[0]), t, p[0]))
atan2 = binary("atan2", np.arctan2)
def _atan2_recip(y, x):
    # 1 / (x² + y²), 0 at the origin: atan2's gradient there is 0 in PyTorch, not 0/0.
    d = x * x + y * y
    zero = d == 0
    return T.where(zero, 0.0, 1 / T.where(zero, 1.0, d))


atan2.vjp = lambda g, out, y, x: (lambda r: (g * x * r, -g * y * r))(_atan2_recip(y, x))
atan2.jvp = lambda p, t: (atan2.bind(*p), (lambda d: _sum_tangents(
    None if t[0] is None else t[0] * p[1] / d, None if t[1] is None else -t[1] * p[0] / d,
    p[0]))(p[0] * p[0] + p[1] * p[1]))


def _fmod_impl(x, y):
    if _integral(x, y) and np.any(np.equal(y, 0)):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(all="ignore"):
        return np.fmod(x, y)


def _remainder_impl(x, y):
    if _integral(x, y) and np.any(np.equal(y, 0)):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(all="ignore"):
        return np.remainder(x, y)


fmod = binary("fmod", _fmod_impl, vjp=lambda g, out, x, y: (g, -g * T.trunc(x / y)))
fmod.jvp = lambda p, t: (fmod.bind(*p), _sum_tangents(
    t[0], None if t[1] is None else -t[1] * T.trunc(p[0] / p[1]), p[0]))
remainder = binary("remainder", _remainder_impl,
                   vjp=lambda g, out, x, y: (g, -g * T.floor(x / y)))
remainder.jvp = lambda p, t: (remainder.bind(*p), _sum_tangents(
    t[0], None if t[1] is None else -t[1] * T.floor(p[0] / p[1]), p[0]))


def _floor_divide_impl(x, y):
    if _integral(x, y) and np.any(np.equal(y, 0)):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(all="ignore"):
        return np.floor_divide(x, y)


# piecewise constant: zero derivative, as PyTorch's div(rounding_mode="floor")
floor_divide = binary("floor_divide", _floor_divide_impl,
                      vjp=lambda g, out, x, y: (T.zeros_like(x), T.zeros_like(y)))
floor_divide.jvp = lambda primals, tangents: (
    lambda out: (out, T.zeros_like(out)))(floor_divide.bind(*primals))
complex_ = binary("complex", lambda re, im: re + 1j * im if re.dtype == np.float64
                  else (re + 1j * im).astype(np.complex64),
                  shape=lambda a, b: (same_shape(a, b)[0],
                                      np.complex128 if a.dtype == np.float64 else np.complex64))
complex_.vjp = lambda g, out, re, im: (T.real(g), T.imag(g))
complex_.jvp = lambda p, t: (complex_.bind(*p), complex_.bind(
    *[ti if ti is not None else T.zeros_like(pi) for pi, ti in zip(p, t)]))


def _sum_tangents(a, b, like):
    if a is None:
        return b if b is not None else T.zeros_like(like)
    return a if b is None else a + b


def _mix(m, tangents, like):
    tx, ty = tangents
    return _sum_tangents(None if tx is None else tx * m, None if ty is None else ty * (1 - m), like)


# ---------------------------------------------------------------------------------------
# Comparisons and logical/bitwise ops: boolean or integer results, no derivative.

def _bool_shape(a, b):
    return same_shape(a, b)[0], np.dtype(bool)


eq = binary("eq", np.equal, nondiff=True, shape=_bool_shape)
ne = binary("ne", np.not_equal, nondiff=True, shape=_bool_shape)
lt = binary("lt", np.less, nondiff=True, shape=_bool_shape)
le = binary("le", np.less_equal, nondiff=True, shape=_bool_shape)
gt = binary("gt", np.greater, nondiff=True, shape=_bool_shape)
ge = binary("ge", np.greater_equal, nondiff=True, shape=_bool_shape)
logical_and = binary("logical_and", np.logical_and, nondiff=True, shape=_bool_shape)
logical_or = binary("logical_or", np.logical_or, nondiff=True, shape=_bool_shape)
logical_xor = binary("logical_xor", np.logical_xor, nondiff=True, shape=_bool_shape)
bitwise_and = binary("bitwise_and", np.bitwise_and, nondiff=True)
bitwise_or = binary("bitwise_or", np.bitwise_or, nondiff=True)
bitwise_xor = binary("bitwise_xor", np.bitwise_xor, nondiff=True)
# NumPy's shifts are PyTorch's for every count: a count below 0 or not below the width
# gives 0 (left) or the sign (right), where C's << and >> are undefined.
shift_left = binary("shift_left", np.left_shift, nondiff=True)
shift_right = binary("shift_right", np.right_shift, nondiff=True)

# ---------------------------------------------------------------------------------------
# Select: where(cond, x, y), strict (cond bool, all the same shape).


def _where_shape(c, x, y):
    if c.dtype != np.bool_ or c.shape != x.shape:
        raise TypeError(f"select: condition must be bool of shape {x.shape}, got "
                        f"{c.dtype}{c.shape}")
    return same_shape(x, y)


# Note [Branch-free select]
# np.where branches per element: on a random mask (ReLU's) it runs ~8x slower than an
# arithmetic pass. For large operands of 1/2/4/8-byte dtypes, select blends the bit
# patterns instead: out = y ^ ((x ^ y) & mask), with mask all-ones where c holds. It is
# exact for every value (NaN payloads and infinities included). In NumPy that is five
# passes (the mask's cast and negation, xor, and, xor); where a C compiler works, one C
# pass computes the same bits (`_onepass.select`: (x & mask) | (y & ~mask), vectorized),
# for operands laid out as c is (C-contiguous, or a transpose of a contiguous array, as
# vmap's batched results often are) or one broadcast element. Measured at 128 x 512
# float32 (1 thread, medians): np.where 113 us, the NumPy blend 30-50 us, the C pass 12 us
# with its call; the ReLU of vmap's 10-model ensemble (64 x 10 x 128, transposed layout)
# 126 -> 55 us at load 4. (Eager ReLU has its own one-pass kernels: Note [ReLU's zero].)
# Small arrays keep np.where, whose fixed cost is lower.
_BLEND_MIN_SIZE = 4096
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _select_impl(c, x, y):
    uint = _UINT.get(x.dtype.itemsize)
    if c.size < _BLEND_MIN_SIZE or uint is None:   # c: x or y may be a 0-d (broadcast) operand
        return np.where(c, x, y)
    out = _onepass.select(c, x, y)
    if out is not None:
        return out
    yi = y.view(uint)
    mask = c.astype(uint)
    np.negative(mask, out=mask)
    out = np.bitwise_xor(x.view(uint), yi)
    np.bitwise_and(out, mask, out=out)
    np.bitwise_xor(out, yi, out=out)
    return out.view(x.dtype)


select = Primitive("select", impl=_select_impl, shape=_where_shape)
select.batch = _elementwise_batch(select)
select.vjp = lambda g, out, c, x, y: (None, lambda: _select_ct(c, g, True),
                                      lambda: _select_ct(c, g, False))


def _select_ct(c, g, where_true):
    """``where(c, g, 0)`` (or ``where(c, 0, g)``): a select's cotangent, and every ReLU's.

    In eager mode the operands already have one shape and g's dtype is the result's, so
    the zero is bound directly as a broadcast view (`where` would promote, convert and
    broadcast it); under transforms and on meta tensors, `where` does it."""
    d = g._data
    if d.__class__ is not np.ndarray or STACK or c._data.__class__ is not np.ndarray:
        return T.where(c, g, 0.0) if where_true else T.where(c, 0.0, g)
    key = (d.dtype, d.shape)
    zero = _ZERO_VIEWS.get(key)
    if zero is None:   # one shared read-only view per dtype and shape (Note [Saved
        #                numbers] in _ops/_common.py)
        z = _ZERO.get(d.dtype)
        if z is None:
            z = _ZERO[d.dtype] = np.zeros((), d.dtype)
        zero = np.ndarray(d.shape, d.dtype, z, 0, (0,) * d.ndim)   # broadcast_in_dim's view
        zero.setflags(write=False)
        zero = wrap(zero)
        if len(_ZERO_VIEWS) < 1024:
            _ZERO_VIEWS[key] = zero
    return select.bind(c, g, zero) if where_true else select.bind(c, zero, g)


_ZERO: dict = {}        # dtype -> a 0-d zero
_ZERO_VIEWS: dict = {}  # (dtype, shape) -> that zero broadcast, as a Tensor
select.jvp = lambda p, t: (select.bind(*p), select.bind(
    p[0], *[ti if ti is not None else T.zeros_like(pi) for pi, ti in zip(p[1:], t[1:])]))

# ---------------------------------------------------------------------------------------
# Casts


def _convert_impl(x, *, dtype):
    return x.astype(dtype, copy=False) if x.dtype != dtype else x


def _convert_vjp(g, out, x, *, dtype):
    if x._data.dtype.kind not in "fc":
        return (None,)
    if x._data.dtype.kind == "f" and g._data.dtype.kind == "c":
        g = T.real(g)
    return (convert_element_type.bind(g, dtype=x._data.dtype),)


convert_element_type = Primitive(
    "convert_element_type", impl=_convert_impl, shape=lambda a, *, dtype: (a.shape, dtype),
    vjp=_convert_vjp,
    jvp=lambda p, t, *, dtype: (convert_element_type.bind(p[0], dtype=dtype),
                                convert_element_type.bind(t[0], dtype=dtype)
                                if np.dtype(dtype).kind in "fc"
                                else T.zeros_like(convert_element_type.bind(p[0], dtype=dtype))),
    batch=lambda v, d, *, dtype: (convert_element_type.bind(v[0], dtype=dtype), d[0]))


# Note [What backward reads] (autograd/engine.py): the values each VJP rule reads.
_X, _OUT, _BOTH = ((0,),), (("out",),), ((0, "out"),)
for _p, _n in {
        neg: (), sign: (), floor: (), ceil: (), round: (), trunc: (), conj: (), real: (),
        imag: (), exp: _OUT, exp2: _OUT, expm1: _OUT, sqrt: _OUT, tan: _OUT, tanh: _OUT,
        sigmoid: _OUT, rsqrt: _BOTH, log: _X, log2: _X, log10: _X, log1p: _X, sin: _X,
        cos: _X, asin: _X, acos: _X, atan: _X, sinh: _X, cosh: _X, asinh: _X, acosh: _X,
        atanh: _X, erf: _X, erfc: _X, erfinv: _OUT, i0: _X, i1: _BOTH,
        lgamma: _X, polygamma: _X, abs: _X,
        add: (), sub: (), complex_: (), mul: ((1,), (0,)), div: ((1,), (1, "out")),
        pow: ((0, 1), (0, "out")), maximum: ((0, 1), (0, 1)), minimum: ((0, 1), (0, 1)),
        atan2: ((0, 1), (0, 1)), fmod: ((), (0, 1)), remainder: ((), (0, 1)),
        select: ((), (0,), (0,)), convert_element_type: ()}.items():
    _p.vjp_needs = _n


# ---------------------------------------------------------------------------------------
# Lower rules (Note [Lower rules], _lower.py): one C expression per primitive. Math
# functions are <tgmath.h>'s type-generic names; nt_* helpers live in the kernels' prelude
# (numtorch/_inductor/codegen.py).
from ._lower import FLOAT_ONLY, extern, pointwise  # noqa: E402

_NO_BOOL = dict(b=None)
for _p, _c in {neg: "-{0}", exp: "nt_exp({0})", exp2: "exp2({0})", expm1: "expm1({0})",
               log: "log({0})", log2: "log2({0})", log10: "log10({0})", log1p: "log1p({0})",
               sqrt: "sqrt({0})", rsqrt: "1 / sqrt({0})", sin: "sin({0})", cos: "cos({0})",
               tan: "tan({0})", asin: "asin({0})", acos: "acos({0})", atan: "atan({0})",
               sinh: "sinh({0})", cosh: "cosh({0})", tanh: "tanh({0})", asinh: "asinh({0})",
               acosh: "acosh({0})", atanh: "atanh({0})", sigmoid: "1 / (1 + nt_exp(-{0}))",
               erf: "erf({0})", erfc: "erfc({0})", lgamma: "lgamma({0})", pow: "pow({0}, {1})",
               atan2: "atan2({0}, {1})",
               fmod: "fmod({0}, {1})", remainder: "nt_rem({0}, {1})",
               div: "{0} / {1}"}.items():
    _p.lower = pointwise(_c, **(_NO_BOOL if _p is neg else FLOAT_ONLY))
for _p, _c in {floor: "nt_floor({0})", ceil: "nt_ceil({0})", round: "nt_round({0})",
               trunc: "nt_trunc({0})"}.items():     # Note [Rounding that vectorises]
    _p.lower = pointwise(_c, i="{0}", u="{0}", b="{0}")
abs.lower = pointwise("fabs({0})", i="({0} < 0 ? -{0} : {0})", u="{0}", b="{0}")
sign.lower = pointwise("nt_sign({0})", i="(({0} > 0) - ({0} < 0))", u="({0} > 0)", b="{0}")
isnan.lower = pointwise("isnan({0})", i="0", u="0", b="0")
isinf.lower = pointwise("isinf({0})", i="0", u="0", b="0")
isfinite.lower = pointwise("isfinite({0})", i="1", u="1", b="1")
logical_not.lower = pointwise("!{0}")
bitwise_not.lower = pointwise("~{0}", b="!{0}", f=None)
polygamma.lower = extern("no C polygamma: the NumPy series of _special_math.py")
erfinv.lower = extern("no C erfinv: the NumPy Newton iteration of _special_math.py")
i0.lower = extern("no C i0: NumPy's np.i0")
floor_divide.lower = extern("floor(a / b) is not a // b (Note [Floor division of floats], "
                            "_ops/math.py): NumPy's floor_divide")
for _p in (shift_left, shift_right):
    _p.lower = extern("C's shifts are undefined for negative or too large counts: NumPy's")
i1.lower = extern("no C i1: the NumPy series and quadrature of _special_math.py")
for _p in (conj, real, imag, complex_):
    _p.lower = extern("complex numbers are not generated")
for _p, _op in {add: "+", sub: "-", mul: "*"}.items():
    _p.lower = pointwise(f"{{0}} {_op} {{1}}", **_NO_BOOL)
maximum.lower = pointwise("nt_max({0}, {1})")
minimum.lower = pointwise("nt_min({0}, {1})")
for _p, _op in {eq: "==", ne: "!=", lt: "<", le: "<=", gt: ">", ge: ">=", logical_and: "&&",
                logical_or: "||", bitwise_and: "&", bitwise_or: "|", bitwise_xor: "^"}.items():
    _p.lower = pointwise(f"({{0}} {_op} {{1}})")
logical_xor.lower = pointwise("(!{0} != !{1})")
select.lower = pointwise("({0} ? {1} : {2})")
convert_element_type.lower = pointwise("({T}){0}")   # to bool: codegen writes `!= 0`
