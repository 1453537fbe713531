"""Tensor methods and operators: each forwards to the op of the same name.

This file owns only the method spelling of ops (``x.sum(1)``, ``x @ y``, ``x.add_(y)``);
it must contain no math of its own.
"""
from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.printing import tensor_repr
from .._core.tensor import TENSOR_TYPES, Tensor, device as _device
from . import (_threaded, creation, index, inplace as _inplace, linalg, math, reduce,
               shape, sorting)
from .._core.primitive import STACK, grad_mode
from .._prims import _onepass, elementwise as E
from ._common import (_fast_operand, broadcast_pair, check_fits, convert, fast_result_dtype, number_array,
                      result_type, scalar_type_name, to_tensor)


# Ops whose method form is f(self, *args, **kwargs).
_FORWARDED = {
    math: """add sub subtract mul multiply div divide true_divide floor_divide pow fmod remainder
        maximum minimum fmax fmin atan2 arctan2 neg negative abs absolute sign sgn floor ceil
        trunc fix round frac exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin
        arcsin acos arccos atan arctan sinh cosh tanh asinh arcsinh acosh arccosh atanh arctanh
        sigmoid erf erfc erfinv sinc i0 lgamma digamma reciprocal square logit xlogy lerp hypot logaddexp clamp clip clamp_min
        clamp_max eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and
        logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not
        bitwise_left_shift bitwise_right_shift isnan
        isinf isfinite isclose allclose equal where conj conj_physical resolve_conj real imag
        float_power relu""",
    reduce: """sum nansum mean nanmean prod amax amin max min argmax argmin aminmax var std
        logsumexp softmax log_softmax cumsum cumprod all any count_nonzero""",
    shape: """reshape view view_as reshape_as flatten ravel unflatten squeeze unsqueeze permute
        transpose swapaxes swapdims t adjoint movedim moveaxis expand expand_as broadcast_to
        narrow select split chunk tensor_split unbind flip fliplr flipud roll repeat tile
        repeat_interleave contiguous clone detach diagonal diag diag_embed tril triu""",
    index: """gather take_along_dim scatter scatter_add index_select index_add masked_fill
        masked_select masked_scatter nonzero argwhere unique index_put""",
    linalg: "matmul mm bmm mv dot vdot inner outer ger cross trace addmm",
}

def _new(cls, *args, **kwargs):
    """``Tensor(data)`` is ``torch.tensor(data)``; ``Tensor(*sizes)`` is ``torch.empty``."""
    if args and not isinstance(args[0], (int, np.integer)):
        return creation.tensor(*args, **kwargs)
    return creation.empty(*args, **kwargs)


# The constructor and repr build on this layer and on printing, so they are attached here
# like every other method: the core (`_core/tensor.py`) never imports upwards.
Tensor.__new__ = staticmethod(_new)
Tensor.__repr__ = Tensor.__str__ = tensor_repr

for _module, _names in _FORWARDED.items():
    for _name in _names.split():
        # Plain functions become methods as they are: no wrapper on the hot path.
        setattr(Tensor, _name, getattr(_module, _name))



def _where(self, condition, y):
    """``torch.where(condition, self, y)`` (the method's operand order, as in PyTorch)."""
    return math.where(condition, self, y)


Tensor.where = _where


def _polygamma(self, n):
    """``torch.polygamma(n, self)`` (the method takes the order after ``self``)."""
    return math.polygamma(n, self)


Tensor.polygamma = _polygamma
def _linalg_methods():
    # Imported here: linalg_ops builds on the ops above (no import cycle at module load).
    from . import linalg_ops as L
    for name, fn in (("inverse", L.inverse), ("det", L.det), ("logdet", L.logdet),
                     ("slogdet", L.slogdet_top), ("cholesky", L.cholesky_top),
                     ("pinverse", L.pinverse), ("matrix_power", L.matrix_power),
                     ("svd", L.svd_top), ("qr", L.qr), ("norm", L.norm_top)):
        setattr(Tensor, name, fn)


_linalg_methods()
for _name in "sort argsort msort topk kthvalue median".split():
    setattr(Tensor, _name, getattr(sorting, _name))
Tensor.__getitem__ = index.getitem
Tensor.__setitem__ = index.setitem
Tensor.T = property(shape.reversed_dims)
Tensor.mT = property(lambda self: shape.transpose(self, -2, -1))
Tensor.H = property(lambda self: math.conj(shape.transpose(self, 0, 1)) if self.ndim == 2 else self)
Tensor.mH = property(lambda self: math.conj(shape.transpose(self, -2, -1)))
Tensor.real = property(math.real)
Tensor.imag = property(math.imag)


def _is_contiguous(self, memory_format=None):
    d = self._data
    return d.flags.c_contiguous if d.__class__ is np.ndarray else True


Tensor.is_contiguous = _is_contiguous


def _stride(self, dim=None):
    d = self._data
    if d.__class__ is not np.ndarray:
        strides, acc = [], 1
        for s in reversed(d.shape):
            strides.append(acc)
            acc *= s
        st = tuple(reversed(strides))
    else:
        st = tuple(s // d.itemsize for s in d.strides)
    return st if dim is None else st[dim]


Tensor.stride = _stride


# ---------------------------------------------------------------------------------------
# Operators

def _reflected(fn):
    return lambda self, other: fn(other, self)


Tensor.__add__ = math.add
Tensor.__radd__ = _reflected(math.add)
Tensor.__sub__ = math.sub
Tensor.__rsub__ = _reflected(math.sub)
Tensor.__mul__ = math.mul
Tensor.__rmul__ = _reflected(math.mul)
Tensor.__truediv__ = math.div
Tensor.__rtruediv__ = _reflected(math.div)
Tensor.__floordiv__ = math.floor_divide
Tensor.__rfloordiv__ = _reflected(math.floor_divide)
Tensor.__mod__ = math.remainder
Tensor.__rmod__ = _reflected(math.remainder)
Tensor.__pow__ = math.pow
Tensor.__rpow__ = _reflected(math.pow)
Tensor.__matmul__ = linalg.matmul
Tensor.__rmatmul__ = _reflected(linalg.matmul)
Tensor.__neg__ = math.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = math.abs
Tensor.__invert__ = math.bitwise_not
Tensor.__and__ = math.bitwise_and
Tensor.__rand__ = _reflected(math.bitwise_and)
Tensor.__or__ = math.bitwise_or
Tensor.__ror__ = _reflected(math.bitwise_or)
Tensor.__xor__ = math.bitwise_xor
Tensor.__rxor__ = _reflected(math.bitwise_xor)
Tensor.__lshift__ = math.bitwise_left_shift
Tensor.__rlshift__ = _reflected(math.bitwise_left_shift)
Tensor.__rshift__ = math.bitwise_right_shift
Tensor.__rrshift__ = _reflected(math.bitwise_right_shift)
Tensor.__eq__ = math.eq
Tensor.__ne__ = math.ne
Tensor.__lt__ = math.lt
Tensor.__le__ = math.le
Tensor.__gt__ = math.gt
Tensor.__ge__ = math.ge


# ---------------------------------------------------------------------------------------
# In-place variants: ``x.add_(y)`` is ``inplace(x, lambda s: add(s, y))`` (Note [In-place ops]).

def _inplace_method(fn, name):
    def m(self, *args, **kwargs):
        return _inplace.inplace(self, lambda s: fn(s, *args, **kwargs), name)
    m.__name__ = name
    m.__doc__ = f"In-place version of :meth:`{fn.__name__}`."
    return m


for _name in """add sub mul div pow fmod remainder clamp clamp_min clamp_max clip neg abs sign floor
        ceil trunc round frac exp expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan
        sinh cosh tanh sigmoid erf erfinv sinc i0 reciprocal square lerp maximum minimum logical_not
        logical_and logical_or masked_fill float_power atan2 floor_divide relu bitwise_and
        bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift""".split():
    _fn = getattr(math, _name, None) or getattr(index, _name)
    setattr(Tensor, _name + "_", _inplace_method(_fn, _name + "_"))

for _name in "scatter scatter_add index_add index_put masked_scatter".split():
    setattr(Tensor, _name + "_", _inplace_method(getattr(index, _name), _name + "_"))

for _name in "eq ne lt le gt ge".split():
    setattr(Tensor, _name + "_", _inplace_method(getattr(math, _name), _name + "_"))

for _name in "tril triu".split():
    setattr(Tensor, _name + "_", _inplace_method(getattr(shape, _name), _name + "_"))


def _ufunc_inplace(prim, generic):
    """``x.add_(y)`` etc.: with no autograd involved, the ufunc writes into x's buffer.
    (Not ``div_``: its impl is no bare ufunc, it sets NumPy's error state.)"""
    def m(self, other, *args, **kwargs):
        d = self._data
        if not args and d.__class__ is np.ndarray and not (self._requires_grad and grad_mode[0]) \
                and not (STACK and STACK[-1].claims_constants):   # Note [Capture claims constants]
            alpha = kwargs.pop("alpha", 1) if len(kwargs) == (1 if "alpha" in kwargs else 0) else None
            if alpha is not None:
                if alpha != 1:
                    # One pass, NumPy's rounding (Note [One-pass add with alpha], _prims/_onepass.py).
                    if prim is not E.mul and other.__class__ in TENSOR_TYPES and \
                            other._data.__class__ is np.ndarray and \
                            not (other._requires_grad and grad_mode[0]) and \
                            _onepass.axpy(d, other._data, alpha if prim is E.add else -alpha):
                        self._version_counter.value += 1
                        return self
                    other = other * alpha
                fo = _fast_operand(other)
                if fo is not None:
                    dt = fast_result_dtype(self, (d.dtype, d.ndim == 0), other, fo[1])
                    # The ufunc writes d when the result has d's dtype and shape and NumPy
                    # has the kernel (no bool subtraction); else the generic path raises
                    # PyTorch's error (Note [Eager fast path]: checked, not tried).
                    if dt == d.dtype and not (prim is E.sub and dt.kind == "b"):
                        o = fo[0]
                        if o.__class__ is not np.ndarray:
                            o = np.asarray(o, dt) if fo[1] is not int or dt.kind not in "iu" \
                                else number_array(o, dt)
                        s, ds = o.shape, d.shape
                        if s == ds or not s or broadcast_pair(ds, s) == ds:
                            if d.size < _threaded.LARGE:
                                prim.ufunc(d, o, out=d)
                            else:   # Note [Large elementwise ops on numtorch's threads]
                                _threaded.binary_(prim, d, o)
                            self._version_counter.value += 1
                            return self
                kwargs = {}   # alpha is folded into other by now
        return generic(self, other, *args, **kwargs)
    m.__name__, m.__doc__ = generic.__name__, generic.__doc__
    return m


Tensor.add_ = _ufunc_inplace(E.add, Tensor.add_)
Tensor.sub_ = _ufunc_inplace(E.sub, Tensor.sub_)
Tensor.mul_ = _ufunc_inplace(E.mul, Tensor.mul_)
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__iand__ = _inplace_method(math.bitwise_and, "__iand__")
Tensor.__ior__ = _inplace_method(math.bitwise_or, "__ior__")
Tensor.__ixor__ = _inplace_method(math.bitwise_xor, "__ixor__")
Tensor.__ilshift__ = _inplace_method(math.bitwise_left_shift, "__ilshift__")
Tensor.__irshift__ = _inplace_method(math.bitwise_right_shift, "__irshift__")


def copy_(self, src, non_blocking=False):
    """Copies the elements of ``src`` into ``self`` (broadcasting, casting) and returns ``self``."""
    if not isinstance(src, Tensor):
        src = to_tensor(src)
    return _inplace.inplace(self, lambda s: src.to(self.dtype) if src.dtype != self.dtype else src,
                            "copy_")


def zero_(self):
    """Fills ``self`` with zeros."""
    return fill_(self, 0)


def fill_(self, value):
    """Fills ``self`` with ``value``."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return _inplace.inplace(self, lambda s: value.to(self.dtype).expand(tuple(self.shape)), "fill_")
    d = self._data
    check_fits(value, d.dtype if d.__class__ is np.ndarray else self.dtype.np)   # Note [Scalars that must fit]
    if d.__class__ is np.ndarray and not self._requires_grad:
        d.fill(number_array(value, d.dtype) if value.__class__ is int else value)
        self._version_counter.value += 1
        return self
    return _inplace.inplace(self, lambda s: creation.full_like(s, value), "fill_")


def _random_fill(draw):
    def m(self, *args, generator=None, **kwargs):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return _inplace.inplace(self, lambda s: draw(s, *args, generator=generator, **kwargs),
                                    draw.__name__ + "_")
    return m


def _uniform(s, a=0.0, b=1.0, *, generator=None):
    return creation.rand(*s.shape, dtype=s.dtype, generator=generator, device=s.device) * (b - a) + a


def _normal(s, mean=0.0, std=1.0, *, generator=None):
    return creation.randn(*s.shape, dtype=s.dtype, generator=generator, device=s.device) * std + mean


def _bernoulli(s, p=0.5, *, generator=None):
    return (creation.rand(*s.shape, dtype=s.dtype, generator=generator, device=s.device)
            < p).to(s.dtype)


def _random_int(s, low=None, high=None, *, generator=None):
    if low is None:  # PyTorch: [0, 2**mantissa] for floats, the dtype's range for integers
        low, high = 0, (2 ** (np.finfo(s.dtype.np).nmant + 1) + 1 if s.is_floating_point()
                        else np.iinfo(s.dtype.np).max)
    elif high is None:
        low, high = 0, low
    return creation.randint(low, high, tuple(s.shape), dtype=s.dtype, generator=generator,
                            device=s.device)


_uniform.__name__, _normal.__name__, _bernoulli.__name__, _random_int.__name__ = (
    "uniform", "normal", "bernoulli", "random")
Tensor.uniform_ = _random_fill(_uniform)
Tensor.normal_ = _random_fill(_normal)
Tensor.bernoulli_ = _random_fill(_bernoulli)
Tensor.random_ = _random_fill(_random_int)
Tensor.copy_ = copy_
Tensor.zero_ = zero_
Tensor.fill_ = fill_


def _detach_(self):
    self.grad_fn = None
    self._requires_grad = False
    return self


Tensor.detach_ = _detach_


def _set_(self, source):
    if source.dtype != self.dtype:
        raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor of type "
                           f"{self.dtype}")
    self._data = source._data
    self._version_counter = source._version_counter
    return self


Tensor.set_ = _set_


def _resize_as_(self, other):
    from .._core.meta import MetaArray
    shape, dtype = tuple(other.shape), self._data.dtype
    self._data = MetaArray(shape, dtype) if self.is_meta else np.zeros(shape, dtype=dtype)
    return self


Tensor.resize_as_ = _resize_as_


# ---------------------------------------------------------------------------------------
# Conversions: to / type / float / double / …

def to(self, *args, **kwargs):
    """Returns ``self`` converted to a dtype and/or device (``self`` if nothing changes)."""
    if not kwargs and len(args) == 1 and args[0].__class__ is _dt.dtype:
        return convert(self, args[0])   # x.to(torch.float64): the conversion below, directly
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (_dt.dtype, type)) or (isinstance(a, np.dtype)):
            dtype = a
        elif isinstance(a, (str, _device)):
            dev = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    out = self
    if dtype is not None:
        d = _dt.to_dtype(dtype)
        if d.np != self._data.dtype:
            out = convert(self, d)
    if dev is not None:
        target = _device(dev)._check_usable("Tensor.to()")
        if target != out.device:
            out = _to_device(out, target)
    if copy and out is self:
        out = shape.clone(self)
    return out


def _to_device(t, target):
    from .._core.meta import MetaArray
    from .._core.tensor import wrap
    if target.type == "meta":
        out = wrap(MetaArray(tuple(t.shape), t._data.dtype), t._requires_grad and t.is_leaf)
    else:
        if isinstance(t._data, MetaArray):
            raise NotImplementedError("Cannot copy out of meta tensor; no data! Please use "
                                      "torch.nn.Module.to_empty() instead of "
                                      "torch.nn.Module.to() when moving module from meta to a "
                                      "different device.")
        return t
    return out


Tensor.to = to


def _caster(d):
    def m(self, memory_format=None):
        return convert(self, d)   # what `to(self, d)` does, without its argument parsing
    m.__name__ = d.name
    return m


for _name, _d in (("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
                  ("int", _dt.int32), ("long", _dt.int64), ("short", _dt.int16),
                  ("bool", _dt.bool_), ("byte", _dt.uint8), ("char", _dt.int8),
                  ("cfloat", _dt.complex64), ("cdouble", _dt.complex128)):
    setattr(Tensor, _name, _caster(_d))

Tensor.cpu = lambda self, memory_format=None: self
Tensor.cuda = lambda self, device=None, *a, **k: _device("cuda")._check_usable("Tensor.cuda()")


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name (``"torch.FloatTensor"``) with no ``dtype``; else ``self`` cast
    to ``dtype``, a dtype or such a name."""
    if dtype is None:
        return f"torch.{scalar_type_name(self.dtype)}Tensor"
    if isinstance(dtype, str):
        by_name = {f"torch.{scalar_type_name(d)}Tensor": d for d in _dt.ALL}
        if dtype not in by_name:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = by_name[dtype]
    return to(self, dtype)


Tensor.type = type_
Tensor.type_as = lambda self, other: to(self, other.dtype)


def _new(fill):
    def m(self, *size, dtype=None, device=None, requires_grad=False):
        return fill(*size, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)
    return m


Tensor.new_zeros = _new(creation.zeros)
Tensor.new_ones = _new(creation.ones)
Tensor.new_empty = _new(creation.empty)
Tensor.new_full = lambda self, size, fill_value, *, dtype=None, device=None, requires_grad=False: \
    creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)
Tensor.new_tensor = lambda self, data, *, dtype=None, device=None, requires_grad=False: \
    creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

Tensor.result_type = result_type
