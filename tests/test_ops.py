"""The generic op matrix: every OpInfo entry under every column that applies to it.

Each column is its own test function over the same database, so a failure names the op,
the column, the dtype and the sample (``test_grad[sin-float64-sample2]``). Known bugs are
``xfail(strict=True)`` entries in the database (see ``numtorch/testing/opinfo.py``).
"""
from __future__ import annotations

import inspect
import operator

import numpy as np
import pytest

import numtorch as torch
from numtorch import Tensor
from numtorch.testing import assert_close, gradcheck, gradgradcheck
from numtorch.testing.opinfo import SampleInput, op_db
from numtorch.testing import opinfo as O

F64 = torch.float64


# ---------------------------------------------------------------------------------------
# Parametrization


def _mark(op, column, dtype, index):
    d = op.decoration(column, dtype, index)
    if d is None:
        return ()
    if d.kind == "skip":
        return (pytest.mark.skip(reason=d.reason),)
    return (pytest.mark.xfail(strict=True, reason=d.reason),)


def cases(column, *, ops=None, dtypes=None, grad=False, keep=None, limit=None):
    """pytest params (op, dtype, index) for ``column``; ``keep(op, sample)`` filters samples."""
    params = []
    for op in op_db:
        if ops is not None and not ops(op):
            continue
        for dtype in (op.dtypes if dtypes is None else [d for d in dtypes if d in op.dtypes]):
            try:
                samples = op.samples(dtype, requires_grad=grad)
            except Exception:  # surfaces as a failing test, not a collection error
                params.append(pytest.param(op, dtype, -1, id=f"{op.name}-{dtype.name}-samples"))
                continue
            taken = 0
            for i, s in enumerate(samples):
                if keep is not None and not _keeps(keep, op, s):
                    continue
                if limit is not None and taken >= limit:
                    break
                taken += 1
                params.append(pytest.param(op, dtype, i, id=f"{op.name}-{dtype.name}-sample{i}",
                                           marks=_mark(op, column, dtype, i)))
    return params


def _keeps(keep, op, s):
    try:
        return keep(op, s)
    except Exception:  # an op that fails here fails in the test itself
        return True


def sample(op, dtype, index, grad=False):
    return op.samples(dtype, requires_grad=grad)[index]


def _outputs(out):
    """Flatten an op's result into a list of leaves (tensors or Python values)."""
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _outputs(o)]
    return [out]


def _differentiable(s):
    return [t for t in s.tensors() if t.requires_grad]


def _substitute(s, leaves, values):
    table = {id(t): v for t, v in zip(leaves, values)}
    return s.map(lambda t: table.get(id(t), t))


def _has_grad_inputs(op, s):
    return s.grad and bool(_differentiable(s))


# ---------------------------------------------------------------------------------------
# Eager values against the NumPy reference, and the result dtype


def _compare_to_ref(op, dtype, out, expected):
    actual, ref = _outputs(out), _outputs(expected)
    assert len(actual) == len(ref), f"{len(actual)} outputs, reference has {len(ref)}"
    tol = op.tolerance(dtype)
    for a, e in zip(actual, ref):
        if not isinstance(a, Tensor):
            assert a == e or (isinstance(e, np.ndarray) and np.array_equal(a, e)), (a, e)
            continue
        e = np.asarray(e)
        a_np = np.asarray(a.detach())
        kw = dict(rtol=tol[0], atol=tol[1]) if tol else {}
        assert_close(a_np, e.astype(a_np.dtype) if e.shape == a_np.shape else e,
                     equal_nan=True, check_dtype=False, **kw)


@pytest.mark.parametrize("op, dtype, index", cases("value"))
def test_value(op, dtype, index):
    s = sample(op, dtype, index)
    out = s.call(op.op)
    if op.result_dtype is not None:
        first = _outputs(out)[0]
        assert first.dtype == op.result_dtype(s), f"result dtype of {s}"
    if op.ref is not None:
        args = s.numpy()
        with np.errstate(all="ignore"):
            expected = op.ref(args[0], *args[1], **args[2])
        _compare_to_ref(op, dtype, out, expected)
    if op.check is not None:
        assert op.check(s, out) is not False, f"{op.name}: check failed for {s}"


# ---------------------------------------------------------------------------------------
# Variants: Tensor method, in-place method, operators, aliases


def _assert_same(actual, expected):
    if isinstance(actual, (Tensor, tuple, list)):
        assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
    else:  # dtypes, Python numbers and bools
        assert actual == expected


def _is_property(name):
    return isinstance(getattr(Tensor, name, None), property)


@pytest.mark.parametrize("op, dtype, index", cases(
    "method", ops=lambda op: op.method is not None and not op.method_only and not op.nondeterministic,
    keep=lambda op, s: isinstance(s.input, Tensor)))
def test_method(op, dtype, index):
    s = sample(op, dtype, index)
    if _is_property(op.method):
        assert not s.args and not s.kwargs
        actual = getattr(s.input, op.method)
    else:
        actual = getattr(s.input, op.method)(*s.args, **s.kwargs)
    _assert_same(actual, s.call(op.op))


def _category(d):
    return 0 if d is torch.bool else 3 if d.is_complex else 2 if d.is_floating_point else 1


def _inplace_ok(op, s):
    """Whether ``input.op_(...)`` can hold the result: same shape, no higher dtype category."""
    with torch.no_grad():
        out = s.call(op.op)
    return (isinstance(out, Tensor) and tuple(out.shape) == tuple(s.input.shape)
            and _category(out.dtype) <= _category(s.input.dtype))


@pytest.mark.parametrize("op, dtype, index", cases(
    "inplace", ops=lambda op: op.inplace is not None and not op.nondeterministic,
    keep=lambda op, s: isinstance(s.input, Tensor)))
def test_inplace(op, dtype, index):
    s = sample(op, dtype, index)
    x = s.input.clone()
    method = getattr(x, op.inplace)
    if not _inplace_ok(op, s):
        with pytest.raises(RuntimeError):
            method(*s.args, **s.kwargs)
        return
    expected = s.call(op.op)
    version = x._version
    assert method(*s.args, **s.kwargs) is x
    _assert_same(x, expected.to(x.dtype))
    assert x._version > version


# Operators: how `input <op> other` is spelled and what it must equal.
_OPERATORS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv, "__mod__": operator.mod,
    "__pow__": operator.pow, "__and__": operator.and_, "__or__": operator.or_,
    "__xor__": operator.xor, "__eq__": operator.eq, "__ne__": operator.ne,
    "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge,
    "__matmul__": operator.matmul,
    "__neg__": operator.neg, "__pos__": operator.pos, "__abs__": operator.abs,
    "__invert__": operator.invert,
}


def _operator_cases():
    params = []
    for p in cases("operator", ops=lambda op: bool(op.operators),
                   keep=lambda op, s: isinstance(s.input, Tensor) and not s.kwargs):
        op, dtype, index = p.values
        for dunder in op.operators:
            params.append(pytest.param(op, dunder, dtype, index, marks=p.marks,
                                       id=f"{op.name}-{dunder}-{dtype.name}-sample{index}"))
    return params


@pytest.mark.parametrize("op, dunder, dtype, index", _operator_cases())
def test_operator(op, dunder, dtype, index):
    s = sample(op, dtype, index)
    x, args = s.input, s.args
    if dunder[:3] == "__r" and "__" + dunder[3:] in _OPERATORS:
        other = args[0] if isinstance(args[0], Tensor) else torch.tensor(args[0])
        try:
            expected = op.op(other, x)
        except RuntimeError as e:  # e.g. integer division by zero: the operator raises too
            with pytest.raises(type(e)):
                getattr(x, dunder)(args[0])
            return
        actual = getattr(x, dunder)(args[0])
    elif dunder[:3] == "__i" and "__" + dunder[3:] in _OPERATORS:
        y = x.clone()
        if not _inplace_ok(op, s):
            with pytest.raises(RuntimeError):
                getattr(y, dunder)(*args)
            return
        expected = op.op(x, *args).to(x.dtype)
        assert getattr(y, dunder)(*args) is y
        actual = y
    else:
        expected = op.op(x, *args)
        actual = _OPERATORS[dunder](x, *args)
    _assert_same(actual, expected)


def _alias_cases():
    params = []
    for op in op_db:
        for alias in op.aliases + op.method_aliases:
            params.append(pytest.param(op, alias, id=f"{op.name}-{alias}"))
    return params


@pytest.mark.parametrize("op, alias", _alias_cases())
def test_alias(op, alias):
    dtype = op.dtypes[0]
    for s in op.samples(dtype):
        if alias in op.method_aliases:
            if not isinstance(s.input, Tensor):
                continue
            x = s.input.clone()
            actual = getattr(x, alias)(*s.args, **s.kwargs)
            expected = s.call(op.op)
            if alias.endswith("_"):
                if not _inplace_ok(op, s):
                    continue
                assert actual is x
                expected = expected.to(x.dtype)
        else:
            actual, expected = s.call(getattr(torch, alias)), s.call(op.op)
            if hasattr(Tensor, alias) and isinstance(s.input, Tensor):
                _assert_same(getattr(s.input, alias)(*s.args, **s.kwargs), expected)
        _assert_same(actual, expected)


# ---------------------------------------------------------------------------------------
# Gradients against finite differences (float64)


def _grad_cases(column, limit=None, ops=None):
    return cases(column, dtypes=[F64], grad=True, limit=limit, keep=_has_grad_inputs,
                 ops=lambda op: op.supports_grad and (ops is None or ops(op)))


def _as_function(op, s, call=None):
    """(f, leaves): f(*leaves) runs the sample with the leaves substituted."""
    leaves = _differentiable(s)

    def f(*values):
        t = _substitute(s, leaves, values)
        return call(t) if call is not None else t.call(op.op)
    return f, leaves


@pytest.mark.parametrize("op, dtype, index", _grad_cases("grad"))
def test_grad(op, dtype, index):
    f, leaves = _as_function(op, sample(op, dtype, index, grad=True))
    assert gradcheck(f, leaves, **op.grad_tol)


@pytest.mark.parametrize("op, dtype, index", _grad_cases(
    "gradgrad", limit=2, ops=lambda op: op.supports_gradgrad))
def test_gradgrad(op, dtype, index):
    f, leaves = _as_function(op, sample(op, dtype, index, grad=True))
    assert gradgradcheck(f, leaves, **op.grad_tol)


def _inplace_grad_keep(op, s):
    return _has_grad_inputs(op, s) and isinstance(s.input, Tensor) and s.input.requires_grad \
        and _inplace_ok(op, s)


@pytest.mark.parametrize("op, dtype, index", cases(
    "inplace_grad", dtypes=[F64], grad=True, keep=_inplace_grad_keep,
    ops=lambda op: op.supports_grad and op.inplace is not None and not op.nondeterministic))
def test_inplace_grad(op, dtype, index):
    """Autograd through ``y = x.clone(); y.op_(...)`` (the in-place rebinding machinery)."""
    def run(t):
        y = t.input.clone()
        getattr(y, op.inplace)(*t.args, **t.kwargs)
        return y
    f, leaves = _as_function(op, sample(op, dtype, index, grad=True), call=run)
    assert gradcheck(f, leaves, **op.grad_tol)


# ---------------------------------------------------------------------------------------
# The meta device: shapes and dtypes without data


@pytest.mark.parametrize("op, dtype, index", cases(
    "meta", ops=lambda op: op.supports_meta, keep=lambda op, s: "meta" not in s.skip))
def test_meta(op, dtype, index):
    s = sample(op, dtype, index)
    eager = _outputs(s.call(op.op))
    if s.tensors():
        m = s.map(lambda t: t.to("meta"))
    else:  # a creation op: ask for the meta device
        assert "device" in inspect.signature(op.op).parameters, f"{op.name}: no tensors, no device"
        m = SampleInput(s.input, s.args, dict(s.kwargs, device="meta"))
    meta = _outputs(m.call(op.op))
    assert len(meta) == len(eager)
    for a, e in zip(meta, eager):
        if isinstance(e, Tensor):
            assert a.is_meta, "meta inputs gave a tensor with data"
            assert (tuple(a.shape), a.dtype) == (tuple(e.shape), e.dtype)


# ---------------------------------------------------------------------------------------
# Coverage: every public op and Tensor method has an entry

# Public names that are not ops (nothing to sample), each with where it is tested.
NOT_OPS = {
    # dtypes and classes: test_dtypes.py, test_tensor.py
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
    "complex64", "complex128", "dtype", "Tensor", "Size", "device", "Generator",
    # grad mode: test_autograd.py
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    # random state and the default dtype: test_tensor.py, test_dtypes.py
    "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "default_generator", "get_default_dtype", "set_default_dtype",
    # transforms (tests/func)
    "vmap", "compile",
}

# Ops other engineers own and will add entries for (numtorch/testing/_db/<area>.py).
# Each is a strict xfail: adding the entry makes it pass, and the name must then go.
PENDING = {
    "einsum": "einsum owner (_ops/einsum.py)",
    **{n: "conv/pool owner (_ops/conv.py)" for n in (
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d")},
    **{n: "linalg owner (_ops/linalg_ops.py)" for n in (
        "inverse", "logdet", "pinverse", "matrix_power", "cholesky_solve", "cholesky_inverse",
        "triangular_solve", "cholesky", "svd", "det", "slogdet")},
}

# Tensor attributes set by numtorch/_ops that are not ops.
NOT_OP_METHODS = {
    "__array_function__", "__array_ufunc__",   # NumPy dispatch: tests/test_numpy_interop.py
    "cuda",                                     # raises: numtorch is CPU-only (test_errors.py)
}


def _public_names():
    import types
    return sorted(n for n in dir(torch) if not n.startswith("_")
                  and not isinstance(getattr(torch, n), types.ModuleType))


def _covered_names():
    names = set()
    for op in op_db:
        if op.torch_name:
            names.add(op.torch_name)
        names.update(op.aliases)
    return names


def _coverage_params(names, skip, pending):
    params = []
    for n in names:
        if n in skip:
            continue
        marks = () if n not in pending else (
            pytest.mark.xfail(strict=True, reason=f"no OpInfo entry yet ({pending[n]})"),)
        params.append(pytest.param(n, marks=marks, id=n))
    return params


@pytest.mark.parametrize("name", _coverage_params(_public_names(), NOT_OPS, PENDING))
def test_public_op_has_opinfo(name):
    assert name in _covered_names(), (
        f"numtorch.{name} has no OpInfo entry: add one in numtorch/testing/_db/ (or, if it is "
        "not an op, to NOT_OPS in tests/test_ops.py with where it is tested)")


def _method_names():
    out = []
    for n, v in vars(Tensor).items():
        fn = v.fget if isinstance(v, property) else v
        if (getattr(fn, "__module__", "") or "").startswith("numtorch._ops") and not (
                n.startswith("_") and not n.startswith("__")):
            out.append(n)
    return sorted(out)


def _covered_methods():
    names = set()
    for op in op_db:
        names.update(n for n in (op.method, op.inplace, *op.operators, *op.method_aliases) if n)
        names.update(a for a in op.aliases if hasattr(Tensor, a))
    return names


@pytest.mark.parametrize("name", _coverage_params(
    _method_names(), NOT_OP_METHODS, {}))
def test_tensor_method_has_opinfo(name):
    assert name in _covered_methods(), (
        f"Tensor.{name} has no OpInfo entry (method, inplace, operators or method_aliases)")
