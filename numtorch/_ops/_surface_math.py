"""Everyday pointwise and product functions of ``torch`` that scripts reach for:
``addcmul``/``addcdiv``, ``addmv``/``addr``/``baddbmm``/``addbmm``, ``nan_to_num``,
``deg2rad``/``rad2deg``, ``copysign``, ``heaviside``, ``signbit``, ``isposinf``/``isneginf``/
``isreal``, ``logaddexp2``, ``frexp``/``ldexp``.

Every function here is a composition of existing ops, so autograd, vmap, meta and
compile come from their rules; this file must not define primitives. Docstrings follow
PyTorch's.
"""
from __future__ import annotations

import math as _pymath

from .._core import dtypes as _dt
from .._core.tensor import Tensor

from . import creation, linalg, math, reduce, shape
from ._common import (OPMATH, broadcast_shapes, check_param, check_tensor, convert, is_scalar,
                      result_type, scalar_type_name, to_tensor)
from .. import return_types as _rt

__all__ = ["addcmul", "addcdiv", "addmv", "addr", "baddbmm", "addbmm", "nan_to_num",
           "deg2rad", "rad2deg", "copysign", "heaviside", "signbit", "isposinf", "isneginf",
           "isreal", "logaddexp2", "frexp", "ldexp"]


def _tensor(x, name, fn):
    return to_tensor(x) if is_scalar(x) else check_tensor(x, name, fn)


def _float_input(x):
    """Integral and bool tensors as the default float dtype (floating functions)."""
    return x if x.dtype.is_floating_point or x.dtype.is_complex else convert(
        x, _dt.get_default_dtype())


# ---------------------------------------------------------------------------------------
# Fused multiply-adds

def addcmul(input, tensor1, tensor2, *, value=1):
    """Performs the element-wise multiplication of ``tensor1`` by ``tensor2``, multiplies
    the result by the scalar ``value`` and adds it to ``input``:
    out = input + value * tensor1 * tensor2."""
    for name, x in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_tensor(x, name, "addcmul")
    d = result_type(input, tensor1, tensor2)
    check_param(value, (input, tensor1, tensor2), OPMATH)   # Note [Scalars that must fit]
    if not (d.is_floating_point or d.is_complex) and isinstance(value, float):
        value = int(value)   # PyTorch casts `value` to the integral result type
    prod = math.mul(tensor1, tensor2)
    return math.add(input, prod if value == 1 else math.mul(prod, value))


def addcdiv(input, tensor1, tensor2, *, value=1):
    """Performs the element-wise division of ``tensor1`` by ``tensor2``, multiplies the
    result by the scalar ``value`` and adds it to ``input``:
    out = input + value * tensor1 / tensor2."""
    for name, x in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_tensor(x, name, "addcdiv")
    if not (tensor1.dtype.is_floating_point or tensor1.dtype.is_complex) and not (
            tensor2.dtype.is_floating_point or tensor2.dtype.is_complex):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    check_param(value, (input, tensor1, tensor2), OPMATH)   # Note [Scalars that must fit]
    quot = math.div(tensor1, tensor2)
    return math.add(input, quot if value == 1 else math.mul(quot, value))


def _scaled_sum(input, product, beta, alpha):
    """beta * input + alpha * product; beta = 0 ignores ``input`` (NaN and inf in it are
    not propagated), as PyTorch documents for the addmm family."""
    if alpha != 1:
        product = math.mul(product, alpha)
    if beta == 0:
        return _broadcast_like(product, input)
    return math.add(input if beta == 1 else math.mul(input, beta), product)


def _broadcast_like(product, input):
    # beta == 0: the result is `product`, broadcast against `input`'s shape and promoted
    # to the common dtype (PyTorch's shape checks still apply to `input`).
    out = shape.broadcast_to(product, broadcast_shapes(tuple(input.shape), tuple(product.shape)))
    d = result_type(input, product)
    return out if out.dtype == d else convert(out, d)


def _mm_checks(fn, input, pairs):
    check_tensor(input, "input", fn)
    for name, x, nd in pairs:
        check_tensor(x, name, fn)
        if x.dim() != nd:
            raise RuntimeError(f"{name} must be a {nd}D tensor" if fn != "addr" else
                               f"addr: Expected 1-D argument {name}, but got {x.dim()}-D")


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """Performs a matrix-vector product of the matrix ``mat`` and the vector ``vec``; the
    vector ``input`` is added to the final result: out = beta * input + alpha * (mat @ vec).
    If ``beta`` is 0, ``input`` is ignored, and nan and inf in it are not propagated."""
    _mm_checks("addmv", input, (("mat", mat, 2), ("vec", vec, 1)))
    if mat.shape[1] != vec.shape[0] or input.shape not in ((), (1,), (mat.shape[0],)):
        raise RuntimeError(f"size mismatch, got input ({_dims(input)}), mat ({_dims(mat)}), "
                           f"vec ({_dims(vec)})")
    return _scaled_sum(input, linalg.mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """Performs the outer-product of vectors ``vec1`` and ``vec2`` and adds it to the matrix
    ``input``: out = beta * input + alpha * (vec1 ⊗ vec2). For bool tensors ``beta`` and
    ``alpha`` act as logical and/or."""
    _mm_checks("addr", input, (("vec1", vec1, 1), ("vec2", vec2, 1)))
    if input.dtype is _dt.bool_:
        outer = math.logical_and(vec1.unsqueeze(1), vec2.unsqueeze(0))
        out = outer if alpha else math.logical_and(outer, False)
        return math.logical_or(out, input) if beta else _broadcast_like(out, input)
    return _scaled_sum(input, linalg.outer(vec1, vec2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """Performs a batch matrix-matrix product of matrices in ``batch1`` and ``batch2``;
    ``input`` is added to the final result: out_i = beta * input_i + alpha * (batch1_i @
    batch2_i). If ``beta`` is 0, ``input`` is ignored."""
    _mm_checks("baddbmm", input, (("batch1", batch1, 3), ("batch2", batch2, 3)))
    return _scaled_sum(input, linalg.bmm(batch1, batch2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """Performs a batch matrix-matrix product of matrices stored in ``batch1`` and
    ``batch2``, with a reduced add step (all matrix multiplications get accumulated along
    the first dimension); ``input`` is added to the final result:
    out = beta * input + alpha * sum_i(batch1_i @ batch2_i)."""
    _mm_checks("addbmm", input, (("batch1", batch1, 3), ("batch2", batch2, 3)))
    return _scaled_sum(input, reduce.sum(linalg.bmm(batch1, batch2), 0), beta, alpha)


def _dims(t):
    return "x".join(str(s) for s in t.shape)


# ---------------------------------------------------------------------------------------
# Pointwise

def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replaces NaN, positive infinity and negative infinity values in ``input`` with the
    values given by ``nan``, ``posinf`` and ``neginf``. By default NaNs are replaced with
    zero, positive infinity with the greatest finite value representable by ``input``'s
    dtype, and negative infinity with the least finite value."""
    check_tensor(input, "input", "nan_to_num")
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        return input.clone()
    if d.is_complex:
        return math.complex(nan_to_num(math.real(input), nan, posinf, neginf),
                            nan_to_num(math.imag(input), nan, posinf, neginf))
    import numpy as np
    info = np.finfo(d.np)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = math.where(math.isnan(input), to_tensor(nan, d), input)
    out = math.where(math.eq(input, _pymath.inf), to_tensor(posinf, d), out)
    return math.where(math.eq(input, -_pymath.inf), to_tensor(neginf, d), out)


def deg2rad(input):
    """Returns a new tensor with each of the elements of ``input`` converted from angles in
    degrees to radians."""
    check_tensor(input, "input", "deg2rad")
    return math.mul(_float_input(input), _pymath.pi / 180)


def rad2deg(input):
    """Returns a new tensor with each of the elements of ``input`` converted from angles in
    radians to degrees."""
    check_tensor(input, "input", "rad2deg")
    return math.mul(_float_input(input), 180 / _pymath.pi)


def signbit(input):
    """Tests if each element of ``input`` has its sign bit set (-0.0 included)."""
    check_tensor(input, "input", "signbit")
    if input.dtype.is_complex:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if not input.dtype.is_floating_point:
        return math.lt(input, 0)
    # x < 0 misses -0.0: its reciprocal is -inf.
    return math.logical_or(math.lt(input, 0), math.logical_and(
        math.eq(input, 0), math.lt(math.reciprocal(input), 0)))


def copysign(input, other):
    """Create a new floating-point tensor with the magnitude of ``input`` and the sign of
    ``other``, elementwise (-0.0 counts as negative)."""
    x = _tensor(input, "input", "copysign")
    y = _tensor(other, "other", "copysign")
    d = result_type(input, other)
    d = d if d.is_floating_point else _dt.get_default_dtype()
    mag = math.abs(convert(x, d) if x.dtype != d else x)
    return math.where(signbit(y), math.neg(mag), mag)


def heaviside(input, values):
    """Computes the Heaviside step function for each element in ``input``: 0 where input < 0,
    ``values`` where input == 0, 1 where input > 0."""
    check_tensor(input, "input", "heaviside")
    check_tensor(values, "values", "heaviside")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    step = convert(math.gt(input, 0), input.dtype)
    return math.where(math.eq(input, 0), values, step).detach()


def isposinf(input):
    """Tests if each element of ``input`` is positive infinity or not."""
    check_tensor(input, "input", "isposinf")
    if input.dtype.is_complex:
        raise RuntimeError("isposinf does not support complex inputs.")
    return math.eq(input, _pymath.inf) if input.dtype.is_floating_point else \
        math.ne(input, input)


def isneginf(input):
    """Tests if each element of ``input`` is negative infinity or not."""
    check_tensor(input, "input", "isneginf")
    if input.dtype.is_complex:
        raise RuntimeError("isneginf does not support complex inputs.")
    return math.eq(input, -_pymath.inf) if input.dtype.is_floating_point else \
        math.ne(input, input)


def isreal(input):
    """Returns a new tensor with boolean elements representing if each element of ``input``
    is real-valued or not (complex values are real when their imaginary part is 0)."""
    check_tensor(input, "input", "isreal")
    if not input.dtype.is_complex:
        return creation.ones_like(input, dtype=_dt.bool_)
    return math.eq(math.imag(input), 0)


def logaddexp2(input, other):
    """Logarithm of the sum of exponentiations of the inputs in base-2:
    log2(2**input + 2**other)."""
    x, y = check_tensor(input, "input", "logaddexp2"), check_tensor(other, "other", "logaddexp2")
    d = result_type(x, y)
    if not d.is_floating_point:
        raise NotImplementedError(f'"logaddexp2_cpu" not implemented for '
                                  f"'{scalar_type_name(d)}'")
    ln2 = _pymath.log(2)
    return math.div(math.logaddexp(math.mul(x, ln2), math.mul(y, ln2)), ln2)


def frexp(input):
    """Decomposes ``input`` into mantissa and exponent tensors such that
    input = mantissa * 2**exponent, the mantissa in the open interval (-1, 1) and the
    exponent an int32. Returns the named tuple (mantissa, exponent)."""
    check_tensor(input, "input", "frexp")
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    a = math.abs(input).detach()
    finite_nonzero = math.logical_and(math.isfinite(a), math.ne(a, 0))
    safe = math.where(finite_nonzero, a, to_tensor(1.0, input.dtype))
    e = math.add(math.floor(math.log2(safe)), 1)
    # log2 rounds near powers of two: fix the exponent so |mantissa| lies in [0.5, 1).
    m = math.div(safe, math.pow(2.0, e))
    e = math.where(math.ge(m, 1), math.add(e, 1), math.where(math.lt(m, 0.5), math.sub(e, 1), e))
    e = math.where(finite_nonzero, e, to_tensor(0.0, input.dtype))
    exponent = convert(e, _dt.int32)
    mantissa = math.div(input, math.pow(2.0, e).detach())
    return _rt.frexp(mantissa, exponent)




def ldexp(input, other):
    """Multiplies ``input`` by 2 ** ``other``."""
    check_tensor(input, "input", "ldexp")
    check_tensor(other, "other", "ldexp")
    return math.mul(input, math.pow(2.0, other))


def _attach_methods():
    from .methods import _inplace_method
    for name in __all__:
        setattr(Tensor, name, globals()[name])
    for name in ("addcmul addcdiv addmv addr baddbmm addbmm nan_to_num deg2rad rad2deg "
                 "copysign heaviside ldexp").split():
        setattr(Tensor, name + "_", _inplace_method(globals()[name], name + "_"))
    Tensor.addmm_ = _inplace_method(linalg.addmm, "addmm_")


_attach_methods()
