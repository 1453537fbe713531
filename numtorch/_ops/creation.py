"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty, ranges, eye, random."""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core.meta import MetaArray
from .._core.primitive import STACK, bind
from .._core.tensor import TENSOR_TYPES, Tensor, device as _device, wrap, wrap_array
from .._core.tensor import _rebuild  # noqa: F401  (plain pickles written before it moved name it here)
from .._core.symbolic import Sym, is_symbolic
from .._prims import creation as C
from .._prims import random as R
from ._common import check_fits, number_array


def _is_meta(device):
    return device is not None and _device(device)._check_usable().type == "meta"


def _finish(arr, dtype=None, device=None, requires_grad=False):
    if _is_meta(device):
        t = wrap(MetaArray(arr.shape, arr.dtype))
    else:
        t = wrap_array(arr)
    if requires_grad:
        t.requires_grad_(True)
    if STACK:
        mark_created_inside(t)
    return t


def mark_created_inside(t):
    """Remember the transforms active when ``t`` was created (Note [Created inside a transform])."""
    t.__dict__["_created_under"] = frozenset(STACK)


def _infer_dtype(arr: ndarray, data) -> _dt.dtype:
    """PyTorch's dtype for Python data: float -> default, complex -> default complex."""
    if isinstance(data, (ndarray, np.generic)):
        return _dt.from_numpy(arr.dtype)
    kind = arr.dtype.kind
    if kind == "f":
        return _dt.get_default_dtype()
    if kind == "c":
        return _dt.get_default_dtype().to_complex()
    if kind == "b":
        return _dt.bool_
    if kind in "iu":
        return _dt.int64
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


_warned_list_of_ndarrays = [False]   # Note [Warn-once user warnings] in _core/tensor.py


def _has_ndarray(seq):
    """Whether a (nested) list or tuple holds a NumPy array anywhere (a set of element
    types per level, so plain number lists stay cheap to check)."""
    kinds = set(map(type, seq))
    if ndarray in kinds:
        return True
    if list in kinds or tuple in kinds:
        return any(_has_ndarray(x) for x in seq if type(x) in (list, tuple))
    return False


def _to_array(data):
    if isinstance(data, Tensor):
        return data._concrete("tensor()")
    if (not _warned_list_of_ndarrays[0] and isinstance(data, (list, tuple))
            and _has_ndarray(data)):
        _warned_list_of_ndarrays[0] = True
        warnings.warn("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                      "consider converting the list to a single numpy.ndarray with numpy.array() "
                      "before converting to a tensor.", UserWarning, stacklevel=3)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        return np.array(_nested_values(data))
    try:
        return np.array(data)
    except (ValueError, TypeError) as e:
        ragged = _ragged(data, 0) if isinstance(data, (list, tuple)) else None
        if ragged:
            raise ragged from None
        raise ValueError(f"tensor(): could not convert data of type {type(data).__name__} "
                         f"to a tensor ({e})") from None


def _ragged(data, dim):
    """PyTorch's error for the first sequence in ``data`` whose length differs from its
    first sibling's (the shape is read off the first elements), or None."""
    seqs = [x for x in data if isinstance(x, (list, tuple))]
    if not seqs:
        return None
    if len(seqs) != len(data):
        return TypeError(f"not a sequence: expected a sequence of length {len(seqs[0])} at "
                         f"dim {dim + 1} (got a scalar)")
    for x in seqs:
        if len(x) != len(seqs[0]):
            return ValueError(f"expected sequence of length {len(seqs[0])} at dim {dim + 1} "
                              f"(got {len(x)})")
    for x in seqs:
        msg = _ragged(x, dim + 1)
        if msg:
            return msg
    return None


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _nested_values(data):
    if isinstance(data, (list, tuple)):
        return [_nested_values(x) for x in data]
    if isinstance(data, Tensor):
        return data._concrete("tensor()")
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Constructs a tensor with no autograd history by copying ``data``."""
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        if data._data.__class__ is not ndarray and not isinstance(data._data, MetaArray):
            out = data.detach().clone()
            return out if dtype is None else out.to(dtype)
    arr = _to_array(data)
    if arr.dtype.kind == "O":
        raise TypeError(f"tensor(): could not infer a numeric dtype from {type(data).__name__}")
    d = _dt.to_dtype(dtype) if dtype is not None else _infer_dtype(arr, data)
    _check_numbers(arr, d, data)
    arr = np.array(arr, dtype=d.np, copy=True)
    return _finish(arr, d, device, requires_grad)


def _check_numbers(arr, d, data):
    """tensor()'s test that Python numbers fit an integer dtype (Note [Scalars that must
    fit]): its message names the dtype as Python does ("int8"). NumPy arrays and tensors are
    cast, wrapping, as in PyTorch."""
    if d.np.kind in "iu" and arr.size and arr.dtype.kind in "iuf" and \
            not isinstance(data, (ndarray, Tensor)):
        for v in (arr.min(), arr.max()):
            check_fits(v.item(), d.np, names={})


def as_tensor(data, dtype=None, device=None):
    """Converts ``data`` to a tensor, sharing memory with NumPy arrays and tensors when possible."""
    if isinstance(data, Tensor):
        out = data if dtype is None else data.to(_dt.to_dtype(dtype))
        return out.to(device) if device is not None else out
    if isinstance(data, ndarray) and (dtype is None or _dt.to_dtype(dtype).np == data.dtype):
        return from_numpy(data) if not _is_meta(device) else _finish(data, None, device)
    arr = _to_array(data)
    d = _dt.to_dtype(dtype) if dtype is not None else _infer_dtype(arr, data)
    _check_numbers(arr, d, data)
    return _finish(np.asarray(arr, dtype=d.np), d, device)


asarray = as_tensor


def from_numpy(ndarray_):
    """Creates a tensor that shares memory with the NumPy array ``ndarray_``."""
    if not isinstance(ndarray_, ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray_).__name__})")
    _dt.from_numpy(ndarray_.dtype)  # raises for unsupported dtypes
    return wrap_array(ndarray_)


def _size(size, fn="zeros"):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if s.__class__ is Sym:
            out.append(s)
            continue
        if not isinstance(s, (numbers.Integral,)) or isinstance(s, bool):
            raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


def _dtype_or_default(dtype, default=None):
    if dtype is None:
        return default or _dt.get_default_dtype()
    return _dt.to_dtype(dtype)


def _filled(fill, size, dtype, device, requires_grad, fn):
    if device is None and not STACK and not requires_grad:
        # Note [Eager fast path]: sizes that are Python ints >= 0 (checked by looking) need
        # none of `_size`'s conversions; anything else takes the general path, with its errors.
        shape = size[0] if len(size) == 1 and size[0].__class__ is tuple else size
        for s in shape:
            if s.__class__ is not int or s < 0:
                break
        else:
            return wrap(fill(shape, _dt._default[0].np if dtype is None else _dt.to_dtype(dtype).np))
    shape = _size(size, fn)
    d = _dtype_or_default(dtype)
    if _is_meta(device):
        t = wrap(MetaArray(shape, d.np))
    elif is_symbolic(shape):
        # a symbolic size: the value is a graph node, computed from the inputs' shapes
        value = fill((), d.np)
        t = C.full.bind(shape=shape, fill_value=value.item(), dtype=d.np)
    else:
        t = wrap_array(fill(shape, d.np))
    if requires_grad:
        t.requires_grad_(True)
    if STACK:
        mark_created_inside(t)
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Returns a tensor filled with 0, of shape ``size``."""
    return _filled(np.zeros, size, dtype, device, requires_grad, "zeros")


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Returns a tensor filled with 1, of shape ``size``."""
    return _filled(np.ones, size, dtype, device, requires_grad, "ones")


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          memory_format=None, pin_memory=False):
    """Returns an uninitialized tensor of shape ``size`` (numtorch fills it with zeros)."""
    return _filled(np.zeros, size, dtype, device, requires_grad, "empty")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None):
    """Returns a tensor of shape ``size`` filled with ``fill_value``."""
    if dtype is None:
        dtype = _dt.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value

    def fill(s, d):
        check_fits(value, d)   # Note [Scalars that must fit]
        return np.full(s, number_array(value, d) if value.__class__ is int else value, dtype=d)
    return _filled(fill, (size,) if not isinstance(
        size, (list, tuple)) else tuple(size), dtype, device, requires_grad, "full")


def _like(fill):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None, layout=None):
        a = input._data if input.__class__ in TENSOR_TYPES else None
        if a.__class__ is ndarray and dtype is None and device is None and not requires_grad \
                and not STACK:   # Note [Eager fast path]: `_filled`'s array, in input's dtype
            return wrap(fill(a.shape, a.dtype))
        d = _dt.to_dtype(dtype) if dtype is not None else input.dtype
        dev = device if device is not None else input.device
        t = _filled(fill, tuple(input.shape), d, dev, requires_grad, fill.__name__)
        return t
    return like


zeros_like = _like(np.zeros)
zeros_like.__doc__ = "Returns a tensor of zeros with the shape (and dtype) of ``input``."
ones_like = _like(np.ones)
ones_like.__doc__ = "Returns a tensor of ones with the shape (and dtype) of ``input``."
empty_like = _like(np.zeros)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """Returns a tensor filled with ``fill_value`` with the shape of ``input``."""
    d = _dt.to_dtype(dtype) if dtype is not None else input.dtype
    return full(tuple(input.shape), fill_value, dtype=d,
                device=device if device is not None else input.device, requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values in [start, end) spaced by ``step``; int64 unless an argument is a float."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        dtype = _dt.int64 if all(isinstance(v, numbers.Integral) or (
            v.__class__ is Sym and not v.floating) for v in vals) else _dt.get_default_dtype()
    d = _dt.to_dtype(dtype)
    if is_symbolic(vals):
        return _symbolic_arange(*vals, d)
    n = builtins.max(0, int(np.ceil((vals[1] - vals[0]) / vals[2])))
    arr = (vals[0] + np.arange(n, dtype=np.float64 if d.is_floating_point else np.int64) * vals[2])
    return _finish(arr.astype(d.np), d, device, requires_grad)


def _symbolic_arange(start, end, step, d):
    """arange with a symbolic bound: ``start + step * iota(n)``, n computed at run time."""
    from . import _common
    if any(isinstance(v, float) or (v.__class__ is Sym and v.floating) for v in (start, end, step)):
        raise NotImplementedError(
            "arange with a symbolic size and floating-point bounds is not supported (its length "
            "would be a ceil of a float expression); use integer bounds")
    n = (end - start + step - (1 if step > 0 else -1)) // step
    r = C.iota.bind(shape=(n,), dtype=np.dtype(np.int64))
    if step != 1:
        r = r * step
    if not (start.__class__ is int and start == 0):
        r = r + start
    return _common.convert(r, d)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    d = _dtype_or_default(dtype)
    if d.np in _LINSPACE_WIDE and int(steps) > 1:
        arr = _linspace_as_pytorch(float(start), float(end), int(steps), d.np)
    else:
        arr = np.linspace(float(start), float(end), int(steps), dtype=np.float64).astype(d.np)
    return _finish(arr, d, device, requires_grad)


# Note [linspace's halves]
# PyTorch's CPU linspace computes step = (end - start) / (steps - 1) in the dtype, then the
# first half as start + step * i and the second half as end - step * (steps - 1 - i), each
# a fused multiply-add (its vectorised loop): so both ends are exact and the values are
# symmetric. NumPy's linspace goes start + step * i all the way and rounds differently in
# the last bit. The fused multiply-add is computed in a wider type: float64 for float32
# (a float32 product is exact there; bit-equal to PyTorch in 2,000 of 2,000 random draws),
# long double for float64 (exact products for up to 2,048 steps, then one double rounding:
# bit-equal in 1,929 of 2,000 draws, the others within one ulp). float16 and the integer
# dtypes keep NumPy's linspace rounded from float64.
_LINSPACE_WIDE = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble}


def _linspace_as_pytorch(start, end, steps, dt):
    wide = _LINSPACE_WIDE[dt]
    s, e = dt.type(start), dt.type(end)
    step = wide((e - s) / dt.type(steps - 1))
    half = steps // 2
    out = np.empty(steps, dt)
    out[:half] = wide(s) + step * np.arange(half, dtype=wide)
    out[half:] = wide(e) - step * np.arange(steps - 1 - half, -1, -1, dtype=wide)
    return out


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    d = _dtype_or_default(dtype)
    arr = np.logspace(float(start), float(end), int(steps), base=base).astype(d.np)
    return _finish(arr, d, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal and zeros elsewhere."""
    d = _dtype_or_default(dtype)
    return _finish(np.eye(n, m if m is not None else n, dtype=d.np), d, device, requires_grad)


# ---------------------------------------------------------------------------------------
# Random


def manual_seed(seed):
    """Sets the seed of the default generator; returns it."""
    return R.default_generator.manual_seed(seed)


def seed():
    return R.default_generator.seed()


def initial_seed():
    return R.default_generator.initial_seed()


def get_rng_state():
    return R.default_generator.get_state()


def set_rng_state(state):
    R.default_generator.set_state(state)


def _random(prim, size, dtype, device, requires_grad, generator, fn, **params):
    shape = _size(size, fn)
    d = _dtype_or_default(dtype)
    if _is_meta(device):
        t = wrap(MetaArray(shape, d.np))
    else:
        t = R.draw(prim, generator, shape=shape, dtype=d.np, **params)
    if requires_grad:
        t.requires_grad_(True)
    return t


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Returns a tensor of samples from the standard normal distribution."""
    return _random(R.normal, size, dtype, device, requires_grad, generator, "randn")


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Returns a tensor of samples from the uniform distribution on [0, 1)."""
    return _random(R.uniform, size, dtype, device, requires_grad, generator, "rand")


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Random integers in [low, high) of shape ``size`` (int64 by default)."""
    if size is None:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    return _random(R.randint, (tuple(size),), dtype or _dt.int64, device, requires_grad,
                   generator, "randint", low=int(low), high=int(high))


def randn_like(input, *, dtype=None, device=None, requires_grad=False, generator=None):
    return randn(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad, generator=generator)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, generator=None):
    return rand(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad, generator=generator)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, generator=None):
    """Random integers in [low, high) with the shape (and dtype, device) of ``input``."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=device or input.device, generator=generator)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of integers from 0 to n - 1."""
    d = _dt.to_dtype(dtype) if dtype is not None else _dt.int64
    if _is_meta(device):
        return wrap(MetaArray((int(n),), d.np))
    return R.draw(R.permutation, generator, n=int(n), shape=(int(n),), dtype=d.np)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    """Samples from normal distributions with the given means and standard deviations."""
    if size is not None:
        return randn(*size, generator=generator, dtype=dtype, device=device) * std + mean
    like = mean if isinstance(mean, Tensor) else std
    return randn(*like.shape, generator=generator, dtype=like.dtype, device=like.device) * std + mean


def bernoulli(input, p=None, *, generator=None):
    """Draws 0/1 samples with probabilities ``input`` (or ``p``)."""
    probs = input if p is None else full_like(input, p)
    return (rand(*input.shape, generator=generator, dtype=input.dtype, device=input.device)
            < probs).to(input.dtype)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Samples indices from the rows of ``input`` treated as unnormalized probabilities."""
    probs = input.detach().numpy() if input._data.__class__ is ndarray else input._concrete("multinomial")
    g = (generator or R.default_generator)._np
    rows = probs.reshape(-1, probs.shape[-1])
    out = np.stack([g.choice(rows.shape[1], size=num_samples, replace=replacement, p=r / r.sum())
                    for r in rows])
    return wrap_array(out.reshape(probs.shape[:-1] + (num_samples,)).astype(np.int64))


def set_default_device(device):
    """Sets the default ``torch.Tensor`` to be allocated on ``device``.

    numtorch allocates on the CPU only: ``'cpu'`` (or ``None``) is accepted and changes
    nothing; ``'cuda'``/``'mps'`` raise CudaNotAvailableError (PyTorch's CPU build accepts
    them and fails at the next allocation; failing here points at the line to change);
    ``'meta'`` as a default is not supported (pass ``device='meta'`` per call instead).
    """
    if device is None:
        return
    d = _device(device)._check_usable("set_default_device()")
    if d.type != "cpu":
        raise NotImplementedError("set_default_device: numtorch supports only 'cpu' as the "
                                  f"default device, got {device!r}; pass device='meta' to "
                                  "each creation call instead")


def get_default_device():
    """Gets the default ``torch.Tensor`` to be allocated on ``device``: always the CPU."""
    return _device("cpu")
