"""The OpInfo database: one declaration per public op, swept by the generic tests.

An ``OpInfo`` names an op, its NumPy reference, a sample-input generator, the dtypes it
supports and which transforms apply (Note [OpInfo]). ``op_db`` holds every entry; the
entries live in ``numtorch/testing/_db/*.py``, one module per area, and every module
there is imported when this one is (so adding an area is adding a file). This module
must not import pytest: the test files turn ``xfail``/``skip`` records into marks.
"""
from __future__ import annotations

import importlib
import pkgutil
import zlib

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Size, Tensor
from .._prims.random import Generator
from ._make_tensor import make_tensor

# Note [OpInfo]
# Adding an op to the matrix is one declaration, in the module of its area under
# numtorch/testing/_db/ (a new file there is picked up by itself):
#
#     register(OpInfo("sin", ref=np.sin, sample_inputs=unary_samples(), dtypes=ALL_REAL,
#                     result_dtype=FLOAT_INPUT))
#
# `op` defaults to `numtorch.<name>`; the Tensor method `<name>`, the in-place method
# `<name>_` and the listed dunder `operators` are tested against it when they exist.
# `sample_inputs(dtype, requires_grad)` yields `SampleInput`s; tensors come from `make`,
# which draws from a generator seeded per (op, dtype), so samples are reproducible and
# independent of test order. `result_dtype(sample)` is PyTorch's documented dtype of the
# result (see `ref_result_type`), `ref` the NumPy reference of the values, `check(sample,
# out)` any other property (random draws). The columns (COLUMNS) are the generic tests
# in tests/test_ops.py and tests/test_torch_oracle.py; one that does not apply is switched
# off with `supports_*=False` (or per sample with `SampleInput(skip=...)`), and a known
# bug is recorded with `skips=(xfail(column, "<bug>, <owner>", dtypes=..., samples=...),)`
# so the suite stays green and the bug stays visible.

FLOATING = (_dt.float32, _dt.float64)
INTEGRAL = (_dt.int64, _dt.int32)
ALL_REAL = FLOATING + INTEGRAL + (_dt.bool_,)

# A sample whose output shape depends on its values (bool masks) has no meta or vmap form.
DATA_DEPENDENT = ("meta", "vmap", "vmap_grad", "jac", "graph")

COLUMNS = ("value", "method", "inplace", "operator", "alias", "grad", "gradgrad",
           "inplace_grad", "meta", "jvp_vjp", "vmap", "vmap_grad", "grad_grad", "jac",
           "inplace_transforms", "graph", "oracle")


class SampleInput:
    """One call of an op: ``op(input, *args, **kwargs)``.

    ``grad=False`` marks edge values (no derivative checks); ``skip`` names columns the
    sample does not apply to (``DATA_DEPENDENT`` for outputs whose shape depends on values).
    """

    __slots__ = ("input", "args", "kwargs", "name", "grad", "skip")

    def __init__(self, input, args=(), kwargs=None, *, name="", grad=True, skip=()):
        self.input = input
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.name = name
        self.grad = grad
        self.skip = tuple(skip)

    def call(self, fn):
        return fn(self.input, *self.args, **self.kwargs)

    def map(self, fn):
        """A copy with ``fn`` applied to every Tensor (inside lists and tuples too)."""
        return SampleInput(_map(fn, self.input), _map(fn, self.args),
                           {k: _map(fn, v) for k, v in self.kwargs.items()}, name=self.name,
                           grad=self.grad, skip=self.skip)

    def tensors(self):
        out = []
        _map(lambda t: out.append(t) or t, (self.input, self.args, tuple(self.kwargs.values())))
        return out

    def numpy(self):
        """(input, args, kwargs) with every Tensor replaced by a copy of its ndarray."""
        s = self.map(lambda t: np.array(t.detach()._concrete("numpy"), copy=True))
        return s.input, s.args, s.kwargs

    def __repr__(self):
        return (f"SampleInput({_short(self.input)}, args={_short(self.args)}, "
                f"kwargs={_short(self.kwargs)}{', ' + self.name if self.name else ''})")


def _map(fn, x):
    if isinstance(x, Tensor):
        return fn(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_map(fn, v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_map(fn, v) for v in x)
    return x


def _short(x):
    if isinstance(x, Tensor):
        return f"Tensor{list(x.shape)}:{x.dtype.name}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_short(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}={_short(v)}" for k, v in x.items()) + "}"
    return repr(x)


def flatten_outputs(out):
    """An op's result as a flat list: tensors and Python values, tuples and lists opened."""
    if isinstance(out, (tuple, list)) and not isinstance(out, Size):
        return [v for o in out for v in flatten_outputs(o)]
    return [out]


class Decoration:
    """An expected failure (``xfail``) or a skip of one column, for some dtypes/samples."""

    __slots__ = ("kind", "column", "reason", "dtypes", "samples")

    def __init__(self, kind, column, reason, dtypes=None, samples=None):
        if column not in COLUMNS:
            raise ValueError(f"unknown column {column!r}; expected one of {COLUMNS}")
        self.kind, self.column, self.reason = kind, column, reason
        self.dtypes, self.samples = dtypes, samples

    def applies(self, column, dtype, index):
        return (column == self.column and (self.dtypes is None or dtype in self.dtypes)
                and (self.samples is None or index in self.samples))


def xfail(column, reason, *, dtypes=None, samples=None):
    """A known bug: the case must fail (strict), with a one-line reason naming the owner."""
    return Decoration("xfail", column, reason, dtypes, samples)


def skip(column, reason, *, dtypes=None, samples=None):
    """A case that cannot run meaningfully (not a bug)."""
    return Decoration("skip", column, reason, dtypes, samples)


_DEFAULT = object()


class OpInfo:
    """Everything the generic tests need to know about one op (Note [OpInfo])."""

    def __init__(self, name, op=None, ref=None, sample_inputs=None, *, dtypes=FLOATING,
                 result_dtype=None, supports_grad=True, supports_gradgrad=None,
                 supports_jvp=True, supports_vmap=True, supports_meta=True,
                 method=_DEFAULT, method_only=False, inplace=_DEFAULT,
                 operators=(), aliases=(), method_aliases=(), check=None, tol=None,
                 grad_tol=None, skips=(), nondeterministic=False, mutates_input=False,
                 torch_name=_DEFAULT, torch_op=None):
        import numtorch
        self.name = name
        self.op = op if op is not None else getattr(numtorch, name)
        self.ref = ref
        self.sample_inputs = sample_inputs
        self.dtypes = tuple(dtypes)
        self.result_dtype = result_dtype
        self.supports_grad = supports_grad
        self.supports_gradgrad = supports_grad if supports_gradgrad is None else supports_gradgrad
        self.supports_jvp = supports_jvp and supports_grad
        self.supports_vmap = supports_vmap
        self.supports_meta = supports_meta
        self.method = (name if callable(getattr(Tensor, name, None)) or isinstance(
            getattr(Tensor, name, None), property) else None) if method is _DEFAULT else method
        self.method_only = method_only  # `op` is the method itself (no function form)
        self.inplace = (name + "_" if hasattr(Tensor, name + "_") else None) \
            if inplace is _DEFAULT else inplace
        self.operators = tuple(operators)
        self.aliases = tuple(aliases)
        self.method_aliases = tuple(method_aliases)
        self.check = check
        self.tol = dict(tol or {})
        self.grad_tol = grad_tol or {}
        self.skips = tuple(skips)
        self.nondeterministic = nondeterministic
        self.mutates_input = mutates_input  # writes `args` into (a clone of) `input`
        # PyTorch's spelling, for tests/test_torch_oracle.py: `torch.<torch_name>`, or
        # `torch_op(torch)` when the call differs (False: no PyTorch counterpart).
        self.torch_name = name if torch_name is _DEFAULT else torch_name
        self.torch_op = torch_op

    def __repr__(self):
        return f"OpInfo({self.name})"

    def samples(self, dtype, requires_grad=False):
        """The op's samples for ``dtype``, drawn from a generator seeded per (op, dtype)."""
        _SAMPLE_GENERATOR.manual_seed(zlib.crc32(f"{self.name}/{dtype.name}".encode()))
        return list(self.sample_inputs(dtype, requires_grad))

    def decoration(self, column, dtype, index):
        for d in self.skips:
            if d.applies(column, dtype, index):
                return d
        return None

    def tolerance(self, dtype):
        """(rtol, atol) for comparing values of ``dtype`` (None: assert_close's defaults)."""
        return self.tol.get(dtype)


op_db: list[OpInfo] = []


def register(*infos):
    """Add entries to ``op_db``; a name may appear once."""
    known = {o.name for o in op_db}
    for info in infos:
        if info.name in known:
            raise ValueError(f"duplicate OpInfo {info.name!r}")
        known.add(info.name)
        op_db.append(info)
    return infos[0] if len(infos) == 1 else infos


# ---------------------------------------------------------------------------------------
# Making sample tensors

_SAMPLE_GENERATOR = Generator()


def make(shape, dtype, requires_grad=False, *, low=None, high=None, exclude_zero=False,
         noncontiguous=False, distinct=False):
    """A sample tensor; ``requires_grad`` only applies to floating dtypes. ``distinct``:
    no two elements equal (a shuffled range around 0), for ops whose result order is
    unspecified on ties (sort, topk, max with indices)."""
    grad = requires_grad and (dtype.is_floating_point or dtype.is_complex)
    if distinct:
        from .._ops.creation import from_numpy
        n = int(np.prod(shape))
        values = _SAMPLE_GENERATOR._np.permutation(n) - n // 2
        return from_numpy(values.reshape(shape).astype(dtype.np)).requires_grad_(grad)
    return make_tensor(shape, dtype=dtype, low=low, high=high, exclude_zero=exclude_zero,
                       noncontiguous=noncontiguous, generator=_SAMPLE_GENERATOR,
                       requires_grad=grad)


def make_index(shape, high, *, low=0):
    """An int64 index tensor with values in [low, high)."""
    return make_tensor(shape, dtype=_dt.int64, low=low, high=high, generator=_SAMPLE_GENERATOR)


def make_mask(shape):
    return make_tensor(shape, dtype=_dt.bool_, generator=_SAMPLE_GENERATOR)


def tensor_of(values, dtype, requires_grad=False):
    """A sample tensor with the given (edge) values."""
    from .._ops.creation import tensor
    return tensor(values, dtype=dtype, requires_grad=requires_grad and dtype.is_floating_point)


def scalar_for(dtype, value=2.5):
    """A Python scalar of ``dtype``'s category (int for integers, bool for bool)."""
    if dtype is _dt.bool_:
        return True
    if not (dtype.is_floating_point or dtype.is_complex):
        return int(value) if int(value) else 2
    return value


# ---------------------------------------------------------------------------------------
# Reference dtypes: PyTorch's promotion, written from its documentation (an independent
# reference for the ops layer; tests/test_dtypes.py checks it against a table and torch).

def _category(d):
    return 0 if d is _dt.bool_ else 3 if d.is_complex else 2 if d.is_floating_point else 1


_INT_ORDER = {_dt.uint8: 0, _dt.int8: 0, _dt.int16: 1, _dt.int32: 2, _dt.int64: 3}
_SIGNED_BY_RANK = (_dt.int8, _dt.int16, _dt.int32, _dt.int64)
_FLOAT_ORDER = (_dt.float16, _dt.float32, _dt.float64)


def ref_promote_types(a, b):
    """``torch.promote_types``: the smallest dtype holding both (same category: the wider)."""
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi.is_complex and lo is _dt.float64:
            return _dt.complex128
        return hi
    if ca == 1:
        if _dt.uint8 in (a, b):
            other = b if a is _dt.uint8 else a
            return _dt.int16 if other is _dt.int8 else other
        return _SIGNED_BY_RANK[max(_INT_ORDER[a], _INT_ORDER[b])]
    if ca == 2:
        return max(a, b, key=_FLOAT_ORDER.index)
    return _dt.complex128 if _dt.complex128 in (a, b) else _dt.complex64


def _wrapped_dtype(value):
    if isinstance(value, bool):
        return _dt.bool_
    if isinstance(value, int):
        return _dt.int64
    if isinstance(value, float):
        return _dt.get_default_dtype()
    return _dt.get_default_dtype().to_complex()


def ref_result_type(*operands):
    """``torch.result_type``: dimensioned tensors outrank zero-dim tensors outrank Python
    scalars; a lower class only counts if it is of a higher category (bool < integer <
    float < complex), and a Python float or complex takes the default dtype."""
    dims = zeros = scalars = None

    def fold(acc, d):
        return d if acc is None else ref_promote_types(acc, d)
    for x in operands:
        if isinstance(x, Tensor):
            if x.ndim:
                dims = fold(dims, x.dtype)
            else:
                zeros = fold(zeros, x.dtype)
        else:
            scalars = fold(scalars, _wrapped_dtype(x))
    return _combine(dims, _combine(zeros, scalars))


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is _dt.bool_ or lower.is_floating_point:
        return ref_promote_types(higher, lower)
    return higher


def _operands(s):
    return [x for x in (s.input,) + s.args if isinstance(x, (Tensor, bool, int, float, complex))]


# Result-dtype rules, for `OpInfo(result_dtype=...)`.
def SAME(s):
    return s.input.dtype


def PROMOTE(s):
    return ref_result_type(*_operands(s))


def FLOAT(s):
    d = ref_result_type(*_operands(s))
    return d if d.is_floating_point or d.is_complex else _dt.get_default_dtype()


def FLOAT_INPUT(s):
    d = s.input.dtype
    return d if d.is_floating_point or d.is_complex else _dt.get_default_dtype()


def BOOL(s):
    return _dt.bool_


def INT64(s):
    return _dt.int64


def SUM_DTYPE(s):
    """Sums and products of integers and bools accumulate in int64."""
    d = s.kwargs.get("dtype") or s.input.dtype
    return _dt.int64 if _category(d) < 2 else d


# ---------------------------------------------------------------------------------------
# Sample generators shared by many entries

def unary_samples(*, low=None, high=None, exclude_zero=False, edge=()):
    """Shapes (), (4,), (2, 3), a non-contiguous (3, 2), an empty (0, 3); plus edge values."""
    def gen(dtype, requires_grad):
        kw = dict(low=low, high=high, exclude_zero=exclude_zero)
        for shape in ((), (4,), (2, 3)):
            yield SampleInput(make(shape, dtype, requires_grad, **kw))
        yield SampleInput(make((3, 2), dtype, requires_grad, noncontiguous=True, **kw),
                          name="noncontiguous")
        yield SampleInput(make((0, 3), dtype, requires_grad, **kw), name="empty")
        if edge and dtype.is_floating_point:
            yield SampleInput(tensor_of(list(edge), dtype), name="edge", grad=False)
    return gen


def binary_samples(*, low=None, high=None, rhs_low=None, rhs_high=None, exclude_zero=False,
                   scalars=True, edge=None):
    """Same shapes, broadcasting both ways, a 0-d other, a Python scalar, an empty pair."""
    rl = low if rhs_low is None else rhs_low
    rh = high if rhs_high is None else rhs_high

    def gen(dtype, requires_grad):
        def lhs(shape):
            return make(shape, dtype, requires_grad, low=low, high=high)

        def rhs(shape):
            return make(shape, dtype, requires_grad, low=rl, high=rh, exclude_zero=exclude_zero)
        yield SampleInput(lhs((2, 3)), (rhs((2, 3)),))
        yield SampleInput(lhs((2, 1)), (rhs((3,)),), name="broadcast")
        yield SampleInput(lhs(()), (rhs(()),), name="0d")
        yield SampleInput(lhs((3,)), (rhs(()),), name="0d_other")
        if scalars:
            value = rl + 0.5 * (rh - rl) if rl is not None and rh is not None else 2.5
            yield SampleInput(lhs((2, 2)), (scalar_for(dtype, value),), name="scalar")
        yield SampleInput(lhs((0, 2)), (rhs((0, 2)),), name="empty")
        if edge is not None and dtype.is_floating_point:
            a, b = edge
            yield SampleInput(tensor_of(a, dtype), (tensor_of(b, dtype),), name="edge", grad=False)
    return gen


def reduction_samples(*, low=None, high=None, keepdim=True, tuple_dims=True, full=True,
                      dim_required=False, zero_d=True, empty_dim=False):
    """All-elements, dim, negative dim, keepdim, tuple dims; 0-d and 1-d inputs; 0-d with
    dims 0 and -1 (both name the scalar itself); ``empty_dim``: reducing a size-0 dim (for
    ops with a value there: sum 0, prod 1, mean NaN, logsumexp -inf)."""
    def gen(dtype, requires_grad):
        def m(shape):
            return make(shape, dtype, requires_grad, low=low, high=high)
        if full and not dim_required:
            yield SampleInput(m((2, 3)), name="all")
        yield SampleInput(m((2, 3)), (1,))
        yield SampleInput(m((2, 3, 2)), (-1,), name="negdim")
        if keepdim:
            yield SampleInput(m((2, 3)), (0,), dict(keepdim=True), name="keepdim")
        if tuple_dims:
            yield SampleInput(m((2, 3, 2)), ((0, 2),), name="tupledim")
        yield SampleInput(m((4,)), (0,), name="1d")
        yield SampleInput(m((0, 3)), (1,), name="empty_batch")  # reduces the non-empty dim
        if zero_d:
            yield SampleInput(m(()), (0,) if dim_required else (), name="0d")
            yield SampleInput(m(()), (-1,), name="0d_negdim")
        if empty_dim:
            # NaN or -inf values whose tangents are NaN (0/0): no derivative columns.
            yield SampleInput(m((0, 3)), (0,), name="empty_dim", grad=False)
    return gen


# ---------------------------------------------------------------------------------------
# Loading: every module in numtorch/testing/_db registers its entries on import.

def _load():
    from . import _db
    for mod in sorted(m.name for m in pkgutil.iter_modules(_db.__path__)):
        importlib.import_module(f"{_db.__name__}.{mod}")


_load()
