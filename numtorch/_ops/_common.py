"""What every op needs: operand classification, promotion, broadcasting, argument checks.

The ops layer turns PyTorch's friendly semantics into strict primitive calls: it promotes
dtypes (Note [Type promotion]), inserts `broadcast_in_dim`, canonicalizes dims, and raises
PyTorch's errors. Note [Eager fast path] explains the shortcut elementwise ops take.
"""
from __future__ import annotations

import numbers

import numpy as np
from numpy import ndarray

from .._core import dtypes as _dt
from .._core.meta import MetaArray
from .._core import primitive as _prim
from .._core.primitive import STACK, bind, grad_mode
from .._core.tensor import TENSOR_TYPES, Size, Tensor, _canonical_dim, wrap, wrap_array, wrap_sharing
from .._core.symbolic import Sym
from .._prims import creation as C
from .._prims import elementwise as E
from .._prims import shape as S
from . import _threaded
from ._threaded import LARGE

canonical_dim = _canonical_dim
_SCALARS = (bool, int, float, complex)


def is_scalar(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


def to_tensor(x, dtype=None) -> Tensor:
    """A Tensor for a Tensor, NumPy array or Python number (used for non-Tensor operands)."""
    if x.__class__ is Tensor or isinstance(x, Tensor):
        return x if dtype is None or x._data.dtype == dtype.np else convert(x, dtype)
    if isinstance(x, ndarray):
        arr = x
    elif isinstance(x, np.generic):
        arr = np.asarray(x)
    elif x.__class__ is Sym:   # a symbolic size used as a number (Note [Symbolic params])
        d = dtype or (_dt.get_default_dtype() if x.floating else _dt.int64)
        return bind(C.full, shape=(), fill_value=x, dtype=d.np)
    elif is_scalar(x):
        t = wrap_array(number_array(x, (dtype or _dt.scalar_dtype(x)).np))
        if STACK:
            # a literal to a trace (Note [Literals and captured tensors], _core/passes.py)
            t.__dict__["_from_number"] = True
        return t
    else:
        from .creation import tensor
        return tensor(x, dtype=dtype)
    t = wrap_array(arr if arr.dtype in _NP_OK else arr.astype(_dt.to_dtype(arr.dtype).np))
    return t if dtype is None else convert(t, dtype)


_NP_OK = {d.np for d in _dt.ALL}
_INT_RANGE: dict = {}   # NumPy integer dtype -> (min, max)


def number_array(x, dt):
    """The Python number ``x`` as a 0-d array of NumPy dtype ``dt``, what primitives take.

    An int outside an integer dtype's range wraps around, as in PyTorch (NumPy refuses to
    convert it directly); one outside int64's raises OverflowError, as in PyTorch.
    """
    if x.__class__ is int and dt.kind in "iu":
        bounds = _INT_RANGE.get(dt)
        if bounds is None:
            info = np.iinfo(dt)
            bounds = _INT_RANGE[dt] = (int(info.min), int(info.max))
        if not bounds[0] <= x <= bounds[1]:
            return np.asarray(x).astype(dt)
    return np.asarray(x, dtype=dt)



def check_fits(x, dt, names=None):
    """Raise PyTorch's RuntimeError when the number ``x``, a parameter of a kernel (a fill
    value, a bound, alpha, an exponent), does not fit NumPy dtype ``dt`` (Note [Scalars that
    must fit]). ``names`` maps dtype names to those the message uses (c10's accessor names
    by default; tensor() uses its own)."""
    ranges = _FAST_RANGES.get(dt) or _fast_ranges(dt)
    r = ranges.get(x.__class__)
    if r is not None and r[0] <= x <= r[1]:
        return   # a finite int or float well inside the range: the usual case, decided fast
    if dt.kind != "b" and x.__class__ is not bool and not _fits(x, dt):
        name = (names if names is not None else _ACCESSOR_NAMES).get(dt.name, dt.name)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def check_param(x, operands, widened=None):
    """``check_fits`` for the number ``x`` against ``result_type(*operands)``, the dtype the
    op computes in, or what ``widened`` maps that to: the kernel converts the number to a
    wider type there (``OPMATH``: float16 computed in float32, Note [Scalars that must fit])."""
    if -127 <= x <= 127 if x.__class__ is int or x.__class__ is float else False:
        return   # fits every dtype such an op can compute in: the usual case, decided fast
    if is_scalar(x):
        dt = result_type(*operands).np
        check_fits(x, widened.get(dt, dt) if widened else dt)


def _fits(x, dt):
    cls = x.__class__
    if cls is not int and cls is not float:
        if isinstance(x, numbers.Integral):
            x = int(x)
        elif isinstance(x, numbers.Real):
            x = float(x)
        elif isinstance(x, numbers.Complex):
            if dt.kind != "c":
                return x.imag == 0 and _fits(float(x.real), dt)
            part = np.dtype(np.float32 if dt == np.complex64 else np.float64)
            return _fits(float(x.real), part) and _fits(float(x.imag), part)
        else:
            return True
    lo, hi = _FIT_RANGE.get(dt) or _fit_range(dt)
    if dt.kind in "iu":
        if x.__class__ is int:
            # an unsigned dtype also takes -hi..-1, wrapping as two's complement, as c10 does
            return (lo if dt.kind == "i" else -hi) <= x <= hi
        return lo <= x <= hi   # False for NaN; and for inf, which no integer dtype has
    return -hi <= x <= hi or x != x or x in (_INF, -_INF)


# Note [Scalars that must fit]
# PyTorch converts a number to an op's dtype in one of two ways. An operand of arithmetic or
# a comparison (`a + 1000`, `a * 300`, `a == 1000`) becomes a wrapped 0-d tensor and is cast
# without a check, so it wraps around (`number_array`). A parameter of a kernel -- fill and
# full values, masked_fill/index_fill/scatter values, where's numbers, clamp's bounds,
# threshold's and hardtanh's, alpha, addcmul's value, pow's exponent, the elements given to
# tensor() -- goes through c10's checked conversion, which raises "value cannot be
# converted to type int8_t without overflow" where numtorch wrapped (`a.clamp(-1000, 1000)`
# on int8 gave -24s) or rounded to inf. `check_fits` is that conversion's test: an integer
# dtype takes an int in its range (an unsigned one also -max..-1, which wrap as two's
# complement) or a float in its range (not NaN, not inf); a floating dtype takes any number
# up to its largest finite value, and inf and NaN; a complex number fits a complex dtype
# part by part, and a real dtype only when its imaginary part is 0; bool takes anything.
# Kernels that compute float16 in float32 (where, lerp, addcmul, setitem) convert the
# number to float32, so there 1e6 becomes inf instead of raising (`OPMATH`); pow converts a
# float32 tensor's exponent to double, so only integer and float16 powers check theirs.

_INF = float("inf")
OPMATH = {np.dtype(np.float16): np.dtype(np.float32)}
_FIT_RANGE: dict = {}   # NumPy dtype -> (lowest, highest) finite values as Python numbers
# c10's names of the types a Scalar converts to, as its overflow message prints them
_ACCESSOR_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int",
                   "int64": "int64_t", "float16": "c10::Half", "float32": "float",
                   "float64": "double", "complex64": "c10::complex<float>",
                   "complex128": "c10::complex<double>"}


def _fast_ranges(dt):
    """{int: (lo, hi), float: (lo, hi)}: the ints and the finite floats that fit ``dt``
    (cached)."""
    r = _FAST_RANGES.get(dt)
    if r is not None:
        return r
    if dt.kind == "b":
        lo, hi = -_INF, _INF
        r = {int: (lo, hi), float: (lo, hi)}
    else:
        lo, hi = _fit_range(dt)
        r = {float: (lo, hi) if dt.kind in "iu" else (-hi, hi),
             int: (-hi if dt.kind in "uf" else lo, hi)}
    _FAST_RANGES[dt] = r
    return r


_FAST_RANGES: dict = {}   # NumPy dtype -> _fast_ranges


def _fit_range(dt):
    info = np.iinfo(dt) if dt.kind in "iu" else np.finfo(dt)
    r = _FIT_RANGE[dt] = (int(info.min), int(info.max)) if dt.kind in "iu" else \
        (float(info.min), float(info.max))
    return r


# PyTorch's error messages name dtypes two ways: by ScalarType ("Float", "Long"; most
# messages) and by C++ type ("float", "long int"; a few, such as masked_fill's).
_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                      "bfloat16": "BFloat16", "int64": "Long",
                      "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                   "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                   "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
                   "complex128": "c10::complex<double>"}


def scalar_type_name(dtype) -> str:
    """PyTorch's ScalarType name of ``dtype`` ("Float", "Long", ...), as its messages print it."""
    return _SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)


def cpp_type_name(dtype) -> str:
    """The C++ type name of ``dtype`` ("float", "long int", ...), for the messages that use it."""
    return _CPP_TYPE_NAMES.get(dtype.name, dtype.name)


def check_tensor(x, name, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


# ---------------------------------------------------------------------------------------
# Promotion

def _operand_class(x):
    """(dtype, class) for promotion: 0 dimensioned tensor, 1 zero-dim tensor, 2 scalar."""
    if isinstance(x, Tensor):
        d = x._data
        return _dt.from_numpy(d.dtype), (1 if len(d.shape) == 0 else 0)
    if isinstance(x, ndarray):
        return _dt.from_numpy(x.dtype), (1 if x.ndim == 0 else 0)
    if x.__class__ is Sym:
        return (_dt.get_default_dtype() if x.floating else _dt.int64), 2
    return _dt.scalar_dtype(x), 2


def result_type(*operands) -> _dt.dtype:
    """``torch.result_type``: the dtype PyTorch's promotion gives these operands."""
    classes = ([], [], [])
    for x in operands:
        d, c = _operand_class(x)
        classes[c].append(d)
    return _dt.result_type_of(*classes)


def convert(x: Tensor, dtype: _dt.dtype) -> Tensor:
    d = x._data
    if d.dtype == dtype.np:
        return x
    if eager_array(x) is not None:   # Note [Eager fast path]: the bind's impl call
        return wrap(E.convert_element_type.impl(d, dtype=dtype.np))
    return bind(E.convert_element_type, x, dtype=dtype.np)


def match_device(*ts):
    """Operands on one device: concrete 0-d operands (scalars) mixed with meta become meta.

    PyTorch lets a 0-d CPU tensor (a wrapped Python scalar) meet a tensor of any device; it
    must join the meta operand before broadcasting makes it a dimensioned CPU tensor.
    """
    for t in ts:
        if t._data.__class__ is MetaArray:
            break
    else:
        return ts
    return tuple(wrap(MetaArray((), t._data.dtype)) if t._data.__class__ is ndarray
                 and t._data.ndim == 0 else t for t in ts)


# ---------------------------------------------------------------------------------------
# Broadcasting

def broadcast_shapes(*shapes) -> Size:
    """``torch.broadcast_shapes`` with PyTorch's error message."""
    out = broadcast_result(*shapes)
    if out is None:
        raise RuntimeError(_broadcast_message(shapes, max(len(s) for s in shapes)))
    return out


def broadcast_result(*shapes):
    """The shape ``shapes`` broadcast to, or None where they do not (for code that chooses
    a path by it: Note [Eager fast path])."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s):
            j = ndim - len(s) + i
            if out[j] == 1:
                out[j] = n
            elif n != 1 and n != out[j]:
                return None
    return Size(out)


def _broadcast_message(shapes, ndim):
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
    for k in range(1, ndim + 1):
        x = a[-k] if k <= len(a) else 1
        y = b[-k] if k <= len(b) else 1
        if x != 1 and y != 1 and x != y:
            return (f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                    f"non-singleton dimension {max(len(a), len(b)) - k}")
    return f"shapes {[list(s) for s in shapes]} cannot be broadcast together"


# Note [Comparing shapes]
# Tuple equality compares items before lengths, so ``(s0, 16) == (16,)`` asks ``s0 == 16``
# and, with a symbolic s0, records a guard the result never depended on. Shape code that
# may see symbols compares lengths first.

def broadcast_to(x: Tensor, shape) -> Tensor:
    """Broadcast ``x`` to ``shape`` with one `broadcast_in_dim` (nothing if already there)."""
    shape = tuple(shape)
    xs = x._data.shape
    if len(xs) == len(shape) and xs == shape:   # lengths first: Note [Comparing shapes]
        return x
    nd = len(shape)
    if len(xs) > nd:
        raise RuntimeError(f"The expanded size of the tensor ({nd}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({len(xs)})")
    for i, n in enumerate(xs):
        target = shape[nd - len(xs) + i]
        if n != 1 and n != target:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size "
                f"({n}) at non-singleton dimension {nd - len(xs) + i}.  Target sizes: "
                f"{list(shape)}.  Tensor sizes: {list(xs)}")
    dims = tuple(range(nd - len(xs), nd))
    d = x._data
    if d.__class__ is ndarray and not x._requires_grad and not STACK:
        # What `bind` would do for a constant (a Python number's tensor): evaluate, unrecorded.
        # The result is a view of x's memory and shares x's version counter, so a node that
        # saves it sees a later in-place write to x (PyTorch's error), as the view it is.
        return wrap_sharing(S.broadcast_in_dim.impl(d, shape=shape, broadcast_dimensions=dims),
                            x._version_counter)
    out = bind(S.broadcast_in_dim, x, shape=shape, broadcast_dimensions=dims)
    if out._data.__class__ is ndarray:
        out._version_counter = x._version_counter   # a view of x's memory, as above
        if STACK and "_from_number" in x.__dict__:
            out.__dict__["_from_number"] = True   # a number broadcast (evaluated): still a literal
    return out


# ---------------------------------------------------------------------------------------
# Note [Eager fast path]
# With no transform active and no operand requiring grad, an elementwise op's result is
# exactly NumPy's ufunc applied to the promoted operands: NumPy broadcasts the way
# broadcast_in_dim would, and a Python number converted to a 0-d array of the promoted
# dtype computes as PyTorch's wrapped number does. So the fast path skips the explicit
# broadcast and the tensor wrapping of numbers and calls the primitive's impl once, on
# arrays only (primitives are strict: a number becomes a 0-d array first, `number_array`,
# which costs what NumPy's own conversion of a number inside the ufunc costs). A
# primitive without derivatives (`nondiff`: comparisons) takes it even when an operand
# requires grad, as long as the interpreter stack is empty (a transform may claim the call,
# Note [Capture claims constants]): autograd would record nothing for it anyway. Any
# other case takes the strict path: tensors, converts, broadcasts, and `bind`s, except
# that eager operands of one dtype, one requiring grad, whose shapes differ or one of which
# is a Python number, are recorded as one node by `_recorded_binary` (Note [Broadcasting
# operands under autograd], autograd/engine.py).
# The shortcut chooses its path by looking, never by trying NumPy and catching its error:
# shapes that differ are checked before the call (`check_broadcast`, cached per pair of
# shapes; PyTorch's message when they do not broadcast), an int out of an integer dtype's
# range wraps in `number_array`, and the ops whose kernels lack a dtype (fmod, remainder,
# floor division and atan2 of complex) raise PyTorch's error before they get here.

# Ops of one tensor (views, split, cat and stack, clamp, softmax, floating unary ops,
# max/min/argmax/sum over a dim, zeros_like and friends) take the same shortcut through
# `eager_array` (creation ops with Python-int sizes check the empty stack themselves): for a tensor whose op autograd would not record and with
# no transform active (the interpreter stack empty, so nothing can claim the call), the op
# computes what its primitives' impls would compute from the arrays, and wraps the result
# as `bind` would (a view as `_as_view` does: Note [Eager views], shape.py). Arguments are
# checked first, by looking, or the shortcut is taken only for arguments the general path
# validated before; anything else takes the general path, with its errors. Each shortcut
# says where it is taken; tests/test_eager_fast_paths.py compares each with the general
# path (a transform's, or the primitives' NumPy expression), bit for bit.

def eager_array(x, nondiff=False):
    """``x``'s NumPy array where an op may take the eager fast path on it (Note [Eager fast
    path]): an eager tensor whose op autograd would not record (``nondiff``: an op without
    derivatives, whatever the tensor), no transform active; else None."""
    if x.__class__ in TENSOR_TYPES and not STACK and EAGER_FAST_PATH[0]:
        d = x._data
        if d.__class__ is ndarray and (nondiff or not (x._requires_grad and grad_mode[0])):
            return d
    return None


# Off only while tests/test_prims.py records the primitive calls the OpInfo samples make
# (which the shortcuts through `eager_array` would not make), as `_fast_operand` is.
EAGER_FAST_PATH = [True]


_PROMOTE_CACHE: dict = {}


def _fast_operand(x, nondiff=False):
    """(array or scalar, promotion key) for an operand the eager fast path can take, else None."""
    c = x.__class__
    if c in TENSOR_TYPES:
        d = x._data
        if d.__class__ is ndarray and (not (x._requires_grad and grad_mode[0]) or nondiff):
            return d, (d.dtype, d.ndim == 0)
        return None
    if c in _SCALARS:
        return x, c
    return None


def fast_result_dtype(a, ka, b, kb, compute_dtype=None):
    """The NumPy dtype an elementwise op on fast-path operands computes in (cached)."""
    key = (ka, kb, compute_dtype, _dt._default[0])  # Python floats take the default dtype
    dt = _PROMOTE_CACHE.get(key)
    if dt is None:
        dt = result_type(a, b)
        dt = _PROMOTE_CACHE[key] = (compute_dtype(dt) if compute_dtype is not None else dt).np
    return dt


def elementwise_binary(prim, a, b, *, compute_dtype=None):
    """Apply an elementwise binary primitive with promotion and broadcasting.

    ``compute_dtype(promoted) -> dtype`` overrides the dtype the primitive runs in
    (true division of integers runs in the default float dtype); it must map floating and
    complex dtypes to themselves.
    """
    if STACK and STACK[-1].claims_constants:
        # a capture records ops on concrete tensors (Note [Capture claims constants])
        return _strict_binary(prim, a, b, compute_dtype)
    if a.__class__ in TENSOR_TYPES and b.__class__ in TENSOR_TYPES:
        xa, xb = a._data, b._data
        if xa.__class__ is ndarray and xb.__class__ is ndarray and xa.dtype is xb.dtype and (
                compute_dtype is None or xa.dtype.kind in "fc"):
            # Two eager tensors of one dtype (x + y): nothing to promote (Note [Eager fast path]).
            if not ((a._requires_grad or b._requires_grad) and grad_mode[0]) or (
                    prim.nondiff and not STACK):
                sa, sb = xa.shape, xb.shape
                if sa != sb and sa and sb and (sa, sb) not in _BROADCASTS:
                    check_broadcast(sa, sb)
                # Note [Large elementwise ops on numtorch's threads] (_threaded.py)
                out = prim.impl(xa, xb) if xa.size < LARGE else _threaded.binary(prim, xa, xb)
                return wrap(out) if out.__class__ is ndarray else wrap_array(out)   # 0-d: a NumPy scalar
            sa, sb = xa.shape, xb.shape
            if len(sa) == len(sb) and sa == sb:   # lengths first: Note [Comparing shapes]
                if not STACK:   # what `bind` decides here, without its frame and checks
                    return _prim.autograd_bind(prim, (a, b), _NO_PARAMS)
                return bind(prim, a, b)   # recorded by autograd; nothing to convert
            if not STACK:
                out = _recorded_binary(prim, a, b, xa, xb)
                if out is not None:
                    return out
    elif not STACK and grad_mode[0] and not prim.nondiff:
        # A tensor that requires grad and a Python number (x * 0.5, x ** 2, 1 - x).
        out = _recorded_with_number(prim, a, b, compute_dtype)
        if out is not None:
            return out
    # A comparison's result carries no gradient: operands that require grad may take the
    # fast path too, unless a transform (which may claim the call) is active.
    nondiff = prim.nondiff and not STACK
    fa, fb = _fast_operand(a, nondiff), _fast_operand(b, nondiff)
    if fa is None or fb is None or (fa[0].__class__ is not ndarray and fb[0].__class__ is not ndarray):
        return _strict_binary(prim, a, b, compute_dtype)
    # Note [Eager fast path]
    (xa, ka), (xb, kb) = fa, fb
    dt = fast_result_dtype(a, ka, b, kb, compute_dtype)
    # A number becomes a 0-d array (no shape to check); an int maybe out of range goes
    # through `number_array`, which wraps it.
    if xa.__class__ is not ndarray:
        xa = np.asarray(xa, dt) if ka is not int or dt.kind not in "iu" else number_array(xa, dt)
        if xb.dtype != dt:
            xb = xb.astype(dt)
    elif xb.__class__ is not ndarray:
        xb = np.asarray(xb, dt) if kb is not int or dt.kind not in "iu" else number_array(xb, dt)
        if xa.dtype != dt:
            xa = xa.astype(dt)
    else:
        if xa.dtype != dt:
            xa = xa.astype(dt)
        if xb.dtype != dt:
            xb = xb.astype(dt)
        sa, sb = xa.shape, xb.shape
        if sa != sb and sa and sb and (sa, sb) not in _BROADCASTS:
            check_broadcast(sa, sb)
    out = prim.impl(xa, xb) if xa.size + xb.size < LARGE else _threaded.binary(prim, xa, xb)
    return wrap(out) if out.__class__ is ndarray else wrap_array(out)   # 0-d: a NumPy scalar


def _recorded_with_number(prim, a, b, compute_dtype):
    """``prim(a, b)`` recorded as one node when one operand is an eager tensor that
    requires grad and the other a Python number of no wider dtype, else None."""
    if a.__class__ in TENSOR_TYPES and b.__class__ in _SCALARS:
        t, n, first = a, b, True
    elif b.__class__ in TENSOR_TYPES and a.__class__ in _SCALARS:
        t, n, first = b, a, False
    else:
        return None
    d = t._data
    if not t._requires_grad or d.__class__ is not ndarray:
        return None
    key = (d.dtype, d.ndim == 0)
    dt = fast_result_dtype(t, key, n, n.__class__, compute_dtype) if first else \
        fast_result_dtype(n, n.__class__, t, key, compute_dtype)
    if dt != d.dtype:
        return None   # the tensor converts first: the strict path records that
    x = np.asarray(n, dt)   # a floating dtype: what number_array makes of any number
    return _recorded_binary(prim, t, n, d, x) if first else _recorded_binary(prim, n, t, x, d)


def _recorded_binary(prim, a, b, xa, xb):
    """``prim(a, b)`` on eager operands of one dtype (Tensors or Python numbers, with their
    arrays ``xa``, ``xb``), one of them requiring grad, recorded as one autograd node that
    broadcasts (Note [Broadcasting operands under autograd], autograd/engine.py); None
    where that note's condition fails (the caller takes the strict path)."""
    needs = prim.vjp_needs
    if needs is None:
        return None
    sa, sb = xa.shape, xb.shape
    shape = broadcast_pair(sa, sb) if sa != sb else sa
    if shape is None:
        check_broadcast(sa, sb)   # raises PyTorch's error
    ea = eb = None
    ta = a.__class__ in TENSOR_TYPES
    if ta and (a.grad_fn is not None or a._requires_grad):
        ea = (a.grad_fn, a._output_nr) if a.grad_fn is not None else (a, 0)
    tb = b.__class__ in TENSOR_TYPES
    if tb and (b.grad_fn is not None or b._requires_grad):
        eb = (b.grad_fn, b._output_nr) if b.grad_fn is not None else (b, 0)
    wide_a, wide_b = sa != shape, sb != shape
    key = (prim, ea is None, eb is None, wide_a, wide_b)
    ok = _FUSABLE.get(key)
    if ok is None:
        read = set()
        for i, e in enumerate((ea, eb)):
            if e is not None and needs:   # (): the rule reads shapes only
                read.update(needs[i])
        ok = _FUSABLE[key] = not ((wide_a and ea is not None and 0 in read) or
                                  (wide_b and eb is not None and 1 in read))
    if not ok:
        return None
    out = prim.impl(xa, xb)
    if out.__class__ is not ndarray:
        out = np.asarray(out)
    sum_to = None
    if not ta:
        a = number_operand(a, xa, shape)
    elif wide_a:
        a, sum_to = _broadcast_operand(a, xa, sa, shape, ea, 0, sum_to)
    if not tb:
        b = number_operand(b, xb, shape)
    elif wide_b:
        b, sum_to = _broadcast_operand(b, xb, sb, shape, eb, 1, sum_to)
    return _prim.record_node(prim, (a, b), (ea, eb), wrap(out), sum_to)


def _broadcast_operand(t, x, s, shape, edge, i, sum_to):
    """(the strict operand a node saves for tensor ``t`` broadcast to ``shape``, sum_to
    updated)."""
    params = _broadcast_params(s, shape)
    cached = t.__dict__.get("_broadcast_view")   # Note [Saved numbers]: a bias, op after op
    if cached is not None and cached[0] is x and cached[1] is params:
        v = cached[2]
    else:   # a view sharing t's counter: writes to t are caught
        v = wrap_sharing(S.broadcast_in_dim.impl(x, **params), t._version_counter)
        t.__dict__["_broadcast_view"] = (x, params, v)
    if edge is not None:
        if sum_to is None:
            sum_to = [None, None]
        sum_to[i] = (S.broadcast_in_dim.vjp, t, params)
    return v, sum_to


# Note [Saved numbers]
# The operand a node saves for a Python number (`x * 0.5`, `x ** 2`, `loss / n`) is the
# number's 0-d array broadcast to the result's shape: a read-only view that nothing can
# write and that has no gradient. The same number at the same dtype and shape recurs op
# after op (a learning rate in every update, a mean's count), so these views are made once
# and shared by the nodes that save them (ReLU's zero too, and the zero of its cotangent,
# `_select_ct` in _prims/elementwise.py). NaN and the zeros of floating
# types are not shared: NaN != NaN, and -0.0 == 0.0, so a key could not find them or tell
# them apart. A tensor broadcast in a recorded op (a layer's bias, `x @ W.T + b` in every
# step) keeps its last broadcast view (`_broadcast_operand`), reused while the tensor holds
# the same array and the broadcast has the same params: a view of the same memory with the
# same version counter, so a write to the bias is still seen and still caught.

def number_operand(n, x, shape):
    """The strict operand a node saves for the number ``n`` (its 0-d array ``x``) broadcast
    to ``shape`` (Note [Saved numbers])."""
    key = (n.__class__, n, x.dtype, shape)
    if n != n or not (n or n.__class__ is int):   # NaN, or a zero that may be -0.0
        return wrap(S.broadcast_in_dim.impl(x, **_broadcast_params((), shape)))
    v = _NUMBER_OPERANDS.get(key)
    if v is None:
        v = wrap(S.broadcast_in_dim.impl(x, **_broadcast_params((), shape)))
        if len(_NUMBER_OPERANDS) < 1024:
            _NUMBER_OPERANDS[key] = v
    return v


_NUMBER_OPERANDS: dict = {}   # (type, number, dtype, shape) -> its saved broadcast
_NO_PARAMS: dict = {}   # the params of an elementwise primitive's node: shared, never written


_FUSABLE: dict = {}             # (prim, pattern of edges and broadcasts) -> one node or not
_BROADCAST_PARAMS: dict = {}    # (shape, result shape) -> broadcast_in_dim's params


def _broadcast_params(s, shape):
    params = _BROADCAST_PARAMS.get((s, shape))
    if params is None:
        nd = len(shape)
        params = {"shape": tuple(shape), "broadcast_dimensions": tuple(range(nd - len(s), nd))}
        if len(_BROADCAST_PARAMS) < 4096:
            _BROADCAST_PARAMS[(s, shape)] = params
    return params


_BROADCASTS: dict = {}   # (shape, shape) -> their broadcast shape, for pairs that broadcast


def broadcast_pair(sa, sb):
    """`broadcast_result` of two concrete shapes, cached per pair that broadcasts (the eager
    shortcuts ask it on every op whose operands' shapes differ)."""
    out = _BROADCASTS.get((sa, sb))
    if out is None:
        out = broadcast_result(sa, sb)
        if out is not None and len(_BROADCASTS) < 4096:
            _BROADCASTS[(sa, sb)] = out
    return out


def check_broadcast(sa, sb):
    """PyTorch's error unless shapes ``sa`` and ``sb`` broadcast."""
    if broadcast_pair(sa, sb) is None:
        broadcast_shapes(sa, sb)


def _promotion_key(x):
    if isinstance(x, Tensor):
        d = x._data
        return d.dtype, len(d.shape) == 0
    return x.__class__ if x.__class__ in _SCALARS else (_operand_class(x),)


def _strict_binary(prim, a, b, compute_dtype):
    if a.__class__ in TENSOR_TYPES and b.__class__ in TENSOR_TYPES and compute_dtype is None:
        # Same payload kind, dtype and shape (most ops under autograd and transforms):
        # nothing to promote, move or broadcast.
        da, db = a._data, b._data
        if da.__class__ is db.__class__ and da.dtype == db.dtype:
            sa, sb = da.shape, db.shape
            if len(sa) == len(sb) and sa == sb:   # lengths first: Note [Comparing shapes]
                return bind(prim, a, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        if not (is_scalar(a) and is_scalar(b)):
            raise TypeError(f"{prim.name}: expected at least one Tensor operand, got "
                            f"{type(a).__name__} and {type(b).__name__}")
        a = to_tensor(a)  # torch.add(5, 2.5): the first number becomes a 0-d tensor
    key = (_promotion_key(a), _promotion_key(b), compute_dtype, "strict", _dt._default[0])
    dt = _PROMOTE_CACHE.get(key)
    if dt is None:
        dt = result_type(a, b)
        dt = _PROMOTE_CACHE[key] = compute_dtype(dt) if compute_dtype is not None else dt
    a, b = match_device(to_tensor(a, dt), to_tensor(b, dt))
    sa, sb = a._data.shape, b._data.shape
    if len(sa) != len(sb) or sa != sb:
        # A 0-d operand (a Python number) takes the other's shape; else broadcast both.
        shape = sa if not sb else sb if not sa else broadcast_shapes(sa, sb)
        a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    return bind(prim, a, b)


def elementwise_operands(*xs, dtype=None):
    """Promote and broadcast any number of operands to strict primitive operands."""
    dt = dtype or result_type(*xs)
    ts = match_device(*[to_tensor(x, dt) for x in xs])
    shape = broadcast_shapes(*[t._data.shape for t in ts])
    return [broadcast_to(t, shape) for t in ts]


def float_dtype_for(d: _dt.dtype) -> _dt.dtype:
    """Integral and bool inputs of floating ops compute in the default float dtype."""
    return d if (d.is_floating_point or d.is_complex) else _dt.get_default_dtype()


def unary_float(prim, x):
    """Apply a floating-point unary primitive (integers promote to the default dtype)."""
    if x.__class__ is not Tensor:
        x = check_tensor(x, "input", prim.name) if not is_scalar(x) else to_tensor(x)
    if x._data.dtype.kind not in "fc":
        x = convert(x, _dt.get_default_dtype())
    d = eager_array(x)
    if d is not None:   # Note [Eager fast path]: the bind's impl call
        out = prim.impl(d)
        return wrap(out) if out.__class__ is ndarray else wrap_array(out)   # 0-d: a NumPy scalar
    return bind(prim, x)
