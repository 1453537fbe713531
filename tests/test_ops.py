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
from numtorch.testing._gradcheck import real_outputs
from numtorch.testing.opinfo import SampleInput, flatten_outputs, op_db
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


def _two_dtypes(op):
    """A floating dtype and a non-floating one: enough for columns that do not depend on
    the element type (method spelling, in-place rebinding, meta shapes)."""
    floats = [d for d in op.dtypes if d.is_floating_point or d.is_complex]
    others = [d for d in op.dtypes if not (d.is_floating_point or d.is_complex)]
    return floats[:1] + others[:1]


def cases(column, *, ops=None, dtypes=None, grad=False, keep=None, limit=None):
    """pytest params (op, dtype, index) for ``column``; ``keep(op, sample)`` filters samples.

    ``dtypes``: a list (those the op supports), ``_two_dtypes``, or None (all of the op's).
    """
    params = []
    for op in op_db:
        if ops is not None and not ops(op):
            continue
        chosen = op.dtypes if dtypes is None else dtypes(op) if callable(dtypes) else [
            d for d in dtypes if d in op.dtypes]
        for dtype in chosen:
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


def extend(params, values):
    """Each param once per value of ``values(*param.values)``, appended to it and its id."""
    return [pytest.param(*p.values, v, marks=p.marks, id=f"{p.id}-{v}")
            for p in params for v in values(*p.values)]


def _keeps(keep, op, s):
    try:
        return keep(op, s)
    except Exception:  # an op that fails here fails in the test itself
        return True


def sample(op, dtype, index, grad=False):
    return op.samples(dtype, requires_grad=grad)[index]


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
    actual, ref = flatten_outputs(out), flatten_outputs(expected)
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
        first = flatten_outputs(out)[0]
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
    keep=lambda op, s: isinstance(s.input, Tensor), dtypes=_two_dtypes))
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
    "__matmul__": operator.matmul, "__lshift__": operator.lshift, "__rshift__": operator.rshift,
    "__neg__": operator.neg, "__pos__": operator.pos, "__abs__": operator.abs,
    "__invert__": operator.invert,
}


@pytest.mark.parametrize("op, dtype, index, dunder", extend(
    cases("operator", ops=lambda op: bool(op.operators),
          keep=lambda op, s: isinstance(s.input, Tensor) and not s.kwargs),
    lambda op, dtype, index: op.operators))
def test_operator(op, dtype, index, dunder):
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
    "meta", ops=lambda op: op.supports_meta, keep=lambda op, s: "meta" not in s.skip,
    dtypes=_two_dtypes))
def test_meta(op, dtype, index):
    s = sample(op, dtype, index)
    eager = flatten_outputs(s.call(op.op))
    if s.tensors():
        m = s.map(lambda t: t.to("meta"))
    else:  # a creation op: ask for the meta device
        assert "device" in inspect.signature(op.op).parameters, f"{op.name}: no tensors, no device"
        m = SampleInput(s.input, s.args, dict(s.kwargs, device="meta"))
    meta = flatten_outputs(m.call(op.op))
    assert len(meta) == len(eager)
    for a, e in zip(meta, eager):
        if isinstance(e, Tensor):
            assert a.is_meta, "meta inputs gave a tensor with data"
            assert (tuple(a.shape), a.dtype) == (tuple(e.shape), e.dtype)


# ---------------------------------------------------------------------------------------
# torch.func columns: jvp vs vjp, vmap vs a loop, vmap(grad), grad(grad), jacfwd vs jacrev

from numtorch.func import grad, jacfwd, jacrev, jvp, make_graph, vjp, vmap  # noqa: E402
from numtorch._core.symbolic import ShapeGuardError  # noqa: E402


def _transform_dtype(op):
    """One dtype per op for the transform columns: float64 when supported."""
    return next((d for d in (F64, torch.float32, torch.int64, torch.bool) if d in op.dtypes), None)


def _transform_cases(column, *, differentiable, limit=None, keep=None):
    def ok(o, s):
        leaves = [t for t in s.tensors() if t.dtype.is_floating_point]
        if column in s.skip or not s.tensors() or (differentiable and not (
                s.grad and leaves and _has_real_output(o, s))):
            return False
        return keep is None or keep(o, s)
    return [p for p in cases(column, limit=limit, keep=ok, ops=lambda o: not o.nondeterministic
                             and (o.supports_jvp if differentiable else o.supports_vmap))
            if p.values[1] is _transform_dtype(p.values[0])]


def _has_real_output(op, s):
    with torch.no_grad():
        return bool(real_outputs(s.call(op.op)))


def _as_float_function(op, s):
    """(f, leaves): f(*float leaves) -> tuple of the op's real outputs (see real_outputs)."""
    leaves = [t for t in s.tensors() if t.dtype.is_floating_point]

    def f(*values):
        return tuple(real_outputs(_substitute(s, leaves, values).call(op.op)))
    return f, [t.detach() for t in leaves]


def _randn_like(t, rng):
    return torch.from_numpy(rng.standard_normal(tuple(t.shape)).astype(t.dtype.np))


_JVP_RTOL = {torch.float32: 1e-5, torch.float16: 1e-2}


def _dot(xs, ys):
    return sum(float((x * y).sum()) for x, y in zip(xs, ys))


@pytest.mark.parametrize("op, dtype, index", _transform_cases("jvp_vjp", differentiable=True))
def test_jvp_vjp(op, dtype, index):
    """Forward and reverse mode agree: <u, jvp(t)> == <vjp(u), t>, and both give the value."""
    f, primals = _as_float_function(op, sample(op, dtype, index))
    rng = np.random.default_rng(index)
    tangents = tuple(_randn_like(p, rng) for p in primals)
    out, t_out = jvp(f, tuple(primals), tangents)
    out2, vjp_fn = vjp(f, *primals)
    expected = f(*primals)
    assert_close(out, expected)
    assert_close(out2, expected)
    us = tuple(_randn_like(o, rng) for o in out2)
    cts = vjp_fn(us)
    lhs, rhs = _dot(us, t_out), _dot(cts, tangents)
    rtol = max(_JVP_RTOL.get(o.dtype, 1e-7) for o in out2)  # outputs may be rounded (casts)
    assert abs(lhs - rhs) <= rtol * max(1.0, abs(lhs)), f"<u, jvp> = {lhs}, <vjp, t> = {rhs}"


def _second_example(t):
    """A second example for a batch: the same values in reverse order (stays in the op's
    domain, stays a valid index) but different from the first."""
    return t.detach().reshape(-1).flip(0).reshape(tuple(t.shape)) if t.ndim else t.detach().clone()


def _batch(tensors, in_dims):
    out = []
    for t, d in zip(tensors, in_dims):
        t = t.detach()
        out.append(t if d is None else torch.stack([t, _second_example(t)], d))
    return out


def _example(tensors, in_dims, k):
    return [t.detach() if d is None else (t.detach() if k == 0 else _second_example(t))
            for t, d in zip(tensors, in_dims)]


# in_dims patterns: every operand batched at 0; the first batched at its last dim; the
# first unbatched (None) while the others are batched.
_BDIM_PATTERNS = ("all_front", "first_last", "first_unbatched")


def _in_dims(tensors, pattern):
    dims = [0] * len(tensors)
    if pattern == "first_last":
        dims[0] = tensors[0].ndim
    elif pattern == "first_unbatched":
        dims[0] = None
    return tuple(dims)


@pytest.mark.parametrize("op, dtype, index, pattern", extend(
    _transform_cases("vmap", differentiable=False),
    lambda op, dtype, index: _BDIM_PATTERNS[:3 if len(sample(op, dtype, index).tensors()) > 1 else 2]))
def test_vmap(op, dtype, index, pattern):
    """vmap over two examples equals running the op on each and stacking the results."""
    s = sample(op, dtype, index)
    tensors = s.tensors()
    dims = _in_dims(tensors, pattern)

    def f(*values):
        return tuple(o for o in flatten_outputs(_substitute(s, tensors, values).call(op.op))
                     if isinstance(o, Tensor))
    if op.mutates_input and dims[0] is None:
        # Writing batched values into an unbatched tensor: PyTorch's error, not a result.
        with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
            vmap(f, in_dims=dims)(*_batch(tensors, dims))
        return
    batched = vmap(f, in_dims=dims)(*_batch(tensors, dims))
    per_example = [f(*_example(tensors, dims, k)) for k in range(2)]
    expected = tuple(torch.stack([a, b]) for a, b in zip(*per_example))
    assert_close(batched, expected, equal_nan=True)


def _scalar_loss(op, s, leaves):
    """The sum of the op's real outputs (complex ones count as real and imaginary parts),
    a function of every tensor operand; ``positions`` are those of ``leaves``."""
    tensors = s.tensors()
    positions = tuple(i for i, t in enumerate(tensors) if any(t is l for l in leaves))

    def loss(*values):
        return sum(o.sum() for o in real_outputs(_substitute(s, tensors, values).call(op.op)))
    return loss, positions


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "vmap_grad", differentiable=True, keep=lambda o, s: o.supports_vmap))
def test_vmap_grad(op, dtype, index):
    """Per-example gradients: vmap(grad(loss)) equals grad(loss) on each example."""
    s = sample(op, dtype, index)
    tensors = s.tensors()
    loss, argnums = _scalar_loss(op, s, [t for t in tensors if t.dtype.is_floating_point])
    g = grad(loss, argnums=argnums)
    dims = (0,) * len(tensors)
    batched = vmap(g, in_dims=dims)(*_batch(tensors, dims))
    per_example = [g(*_example(tensors, dims, k)) for k in range(2)]
    expected = tuple(torch.stack([a, b]) for a, b in zip(*per_example))
    assert_close(batched, expected)


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "grad_grad", differentiable=True, limit=2, keep=lambda o, s: o.supports_gradgrad))
def test_grad_grad(op, dtype, index):
    """grad(grad(loss)) along v (a Hessian-vector product) equals central differences of the
    first-order gradient along v."""
    s = sample(op, dtype, index)
    tensors = [t.detach() for t in s.tensors()]
    s = s.map(lambda t: t.detach())
    loss, argnums = _scalar_loss(op, s, [t for t in s.tensors() if t.dtype.is_floating_point])
    rng = np.random.default_rng(index)
    vs = [_randn_like(tensors[i], rng) for i in argnums]
    g = grad(loss, argnums=argnums)

    def directional(*values):
        return sum((gi * v).sum() for gi, v in zip(g(*values), vs))
    hvp = grad(directional, argnums=argnums)(*tensors)
    eps = 1e-6

    def shifted(sign):
        return [t + sign * eps * vs[argnums.index(i)] if i in argnums else t
                for i, t in enumerate(tensors)]
    numerical = [(a - b) / (2 * eps) for a, b in zip(g(*shifted(1)), g(*shifted(-1)))]
    assert_close(tuple(hvp), tuple(numerical), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "jac", differentiable=True, limit=2, keep=lambda o, s: o.supports_vmap))
def test_jacfwd_jacrev(op, dtype, index):
    """Jacobians by forward mode (jacfwd) and reverse mode (jacrev) agree."""
    f, leaves = _as_float_function(op, sample(op, dtype, index))
    argnums = tuple(range(len(leaves)))
    # As in PyTorch, jacfwd has the output's dtype and jacrev the input's (casts differ).
    assert_close(jacfwd(f, argnums=argnums)(*leaves), jacrev(f, argnums=argnums)(*leaves),
                 check_dtype=False, rtol=1e-6, atol=1e-6)


def _inplace_transform_keep(op, s):
    return isinstance(s.input, Tensor) and s.input.dtype.is_floating_point and _inplace_ok(op, s)


@pytest.mark.parametrize("op, dtype, index", [p for p in cases(
    "inplace_transforms", dtypes=[F64], keep=_inplace_transform_keep,
    ops=lambda op: op.inplace is not None and op.supports_vmap and op.supports_jvp
    and not op.nondeterministic) if "vmap" not in sample(*p.values).skip])
def test_inplace_under_transforms(op, dtype, index):
    """``y = x.clone(); y.op_(...)`` under vmap and jvp equals the out-of-place op
    (in-place ops are functionalized under transforms)."""
    s = sample(op, dtype, index)
    tensors = s.tensors()

    def run(inplace):
        def f(*values):
            t = _substitute(s, tensors, values)
            if not inplace:
                return t.call(op.op)
            y = t.input.clone()
            getattr(y, op.inplace)(*t.args, **t.kwargs)
            return y
        return f
    dims = (0,) * len(tensors)
    batched = _batch(tensors, dims)
    assert_close(vmap(run(True), in_dims=dims)(*batched), vmap(run(False), in_dims=dims)(*batched),
                 equal_nan=True)
    primals = tuple(t.detach() for t in tensors)
    rng = np.random.default_rng(index)
    tangents = tuple(_randn_like(t, rng) if t.dtype.is_floating_point else None for t in primals)
    floats = [i for i, t in enumerate(primals) if t.dtype.is_floating_point]

    def of_floats(f):
        def g(*xs):
            values = list(primals)
            for i, x in zip(floats, xs):
                values[i] = x
            return f(*values)
        return g
    ins = tuple(primals[i] for i in floats)
    ts = tuple(tangents[i] for i in floats)
    assert_close(jvp(of_floats(run(True)), ins, ts), jvp(of_floats(run(False)), ins, ts),
                 equal_nan=True)


def _tensor_outputs_only(op, s):
    with torch.no_grad():
        return all(isinstance(o, Tensor) for o in flatten_outputs(s.call(op.op)))


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "graph", differentiable=False, keep=_tensor_outputs_only))
def test_make_graph(op, dtype, index):
    """The op traced into a graph (make_graph) runs to the eager result, also on other
    inputs of the same shapes (nothing of the traced values is baked in)."""
    s = sample(op, dtype, index)
    tensors = s.tensors()

    def f(*values):
        return _substitute(s, tensors, values).call(op.op)
    graph = make_graph(f)(*[t.detach() for t in tensors])
    for k in range(2):
        example = _example(tensors, (0,) * len(tensors), k)
        assert_close(flatten_outputs(graph(*example)), flatten_outputs(f(*example)), equal_nan=True)


def _grown(tensors, graph):
    """The inputs with every symbolic dimension grown by one (rows repeated cyclically)."""
    values = graph.check_shape_guards(*tensors)
    out = []
    for i, t in enumerate(tensors):
        a = t.detach().numpy()
        for d, n in enumerate(graph.inputs[i].shape):
            if not isinstance(n, int):
                a = np.take(a, np.arange(values[str(n)] + 1) % a.shape[d], axis=d)
        out.append(torch.from_numpy(np.ascontiguousarray(a)))
    return out


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "graph", differentiable=False, keep=_tensor_outputs_only))
def test_make_graph_dynamic(op, dtype, index):
    """The op traced with symbolic sizes (make_graph(dynamic=True)) equals eager on the traced
    inputs and, where its shape guards admit them, on inputs with every symbolic size + 1."""
    s = sample(op, dtype, index)
    tensors = [t.detach() for t in s.tensors()]

    def f(*values):
        return _substitute(s, s.tensors(), values).call(op.op)
    graph = make_graph(f, dynamic=True)(*tensors)
    assert_close(flatten_outputs(graph(*tensors)), flatten_outputs(f(*tensors)), equal_nan=True)
    if not graph.symbols:
        return
    grown = _grown(tensors, graph)
    try:
        expected = f(*grown)
    except (RuntimeError, IndexError, ValueError):
        return   # the grown inputs are not valid for the op itself
    try:
        graph.check_shape_guards(*grown)
    except ShapeGuardError:
        return   # the graph rightly refuses sizes its guards exclude
    assert_close(flatten_outputs(graph(*grown)), flatten_outputs(expected), equal_nan=True)

# ---------------------------------------------------------------------------------------
# Regions: every sample traced into a graph and called as one graph_call node (issue 6).
# The region's rules transform its whole graph (Note [Region rules] in _prims/control.py);
# under each transform it must equal the same transform of the eager op.


def _region(f, args):
    """``f`` traced at ``args`` (per-example shapes) and called as a region."""
    graph = make_graph(f)(*args)

    def r(*values):
        return graph(*values)
    return r


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "region", differentiable=False, limit=2, keep=_tensor_outputs_only))
def test_region(op, dtype, index):
    """The region runs bit-identically to eager (the fast runner calls the same impls) and
    vmap of it equals vmap of the op."""
    s = sample(op, dtype, index)
    tensors = [t.detach() for t in s.tensors()]

    def f(*values):
        return tuple(flatten_outputs(_substitute(s, s.tensors(), values).call(op.op)))
    r = _region(f, tensors)
    assert_close(r(*tensors), f(*tensors), rtol=0, atol=0, equal_nan=True)
    if op.supports_vmap and "vmap" not in s.skip and not op.mutates_input:
        dims = (0,) * len(tensors)
        batched = _batch(tensors, dims)
        assert_close(vmap(r, in_dims=dims)(*batched), vmap(f, in_dims=dims)(*batched),
                     equal_nan=True)


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "passes", differentiable=False, limit=2, keep=_tensor_outputs_only))
def test_passes(op, dtype, index):
    """The traced op after constant folding, CSE and DCE (numtorch/_core/passes.py) computes
    what eager does, bit for bit."""
    from numtorch._core.passes import optimize
    s = sample(op, dtype, index)
    tensors = [t.detach() for t in s.tensors()]

    def f(*values):
        return tuple(flatten_outputs(_substitute(s, s.tensors(), values).call(op.op)))
    graph = optimize(make_graph(f)(*tensors))
    for k in range(2):
        example = _example(tensors, (0,) * len(tensors), k)
        assert_close(graph(*example), f(*example), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "region_grad", differentiable=True, limit=2))
def test_region_jvp_vjp(op, dtype, index):
    """jvp and vjp of the region equal jvp and vjp of the op."""
    f, primals = _as_float_function(op, sample(op, dtype, index))
    r = _region(f, primals)
    rng = np.random.default_rng(index)
    tangents = tuple(_randn_like(p, rng) for p in primals)
    assert_close(jvp(r, tuple(primals), tangents), jvp(f, tuple(primals), tangents),
                 equal_nan=True)
    out, vjp_r = vjp(r, *primals)
    _, vjp_f = vjp(f, *primals)
    us = tuple(_randn_like(o, rng) for o in out)
    assert_close(vjp_r(us), vjp_f(us), equal_nan=True)


@pytest.mark.parametrize("op, dtype, index", _transform_cases(
    "region_compositions", differentiable=True, limit=1,
    keep=lambda o, s: o.supports_vmap and o.supports_gradgrad))
def test_region_compositions(op, dtype, index):
    """grad(grad(region)), vmap(grad(region)) and jacfwd(jacrev(region)) equal eager's."""
    s = sample(op, dtype, index)
    tensors = [t.detach() for t in s.tensors()]
    s = s.map(lambda t: t.detach())
    loss, argnums = _scalar_loss(op, s, [t for t in s.tensors() if t.dtype.is_floating_point])
    region_loss = _region(lambda *v: loss(*v), tensors)

    def r_loss(*v):
        return region_loss(*v)[0]
    rng = np.random.default_rng(index)
    vs = [_randn_like(tensors[i], rng) for i in argnums]

    def hvp(fn):
        g = grad(fn, argnums=argnums)
        return grad(lambda *v: sum((gi * u).sum() for gi, u in zip(g(*v), vs)),
                    argnums=argnums)(*tensors)
    assert_close(hvp(r_loss), hvp(loss), equal_nan=True)
    dims = (0,) * len(tensors)
    batched = _batch(tensors, dims)
    assert_close(vmap(grad(r_loss, argnums=argnums), in_dims=dims)(*batched),
                 vmap(grad(loss, argnums=argnums), in_dims=dims)(*batched), equal_nan=True)
    f, leaves = _as_float_function(op, s)
    r = _region(f, leaves)
    nums = tuple(range(len(leaves)))
    assert_close(jacfwd(jacrev(r, argnums=nums), argnums=nums)(*leaves),
                 jacfwd(jacrev(f, argnums=nums), argnums=nums)(*leaves), equal_nan=True)


# ---------------------------------------------------------------------------------------
# compile columns: grad(compile(op)) through AOT autograd, vmap(compile(op))


def _aot(f, args):
    """``f`` traced at ``args`` and run as the aot_eager backend runs a captured graph:
    joint graph, min-cut partition, one autograd node (numtorch._aot)."""
    from numtorch._aot import aot_function, runner_compiler
    return aot_function(make_graph(f)(*args), runner_compiler)


@pytest.mark.parametrize("op, dtype, index", _transform_cases("aot_grad", differentiable=True,
                                                              limit=1))
def test_aot_grad(op, dtype, index):
    """Eager autograd through the compiled forward/backward pair gives eager's gradients,
    and vmap of the compiled function equals vmap of the op."""
    f, primals = _as_float_function(op, sample(op, dtype, index))
    run = _aot(f, primals)
    rng = np.random.default_rng(index)
    leaves = [p.clone().requires_grad_() for p in primals]
    outs = run(*leaves)
    eager_leaves = [p.clone().requires_grad_() for p in primals]
    eager_outs = f(*eager_leaves)
    assert [o.requires_grad for o in outs] == [o.requires_grad for o in eager_outs]
    if not op.mutates_input:   # a graph that writes runs node by node (not a region)
        assert any(o.grad_fn is not None and o.grad_fn.name() == "CompiledFunctionBackward"
                   for o in outs), "the compiled pair is one autograd node"
    us = [_randn_like(o, rng) for o in outs]
    keep = [k for k, o in enumerate(eager_outs) if o.requires_grad]
    got = torch.autograd.grad([outs[k] for k in keep], leaves, [us[k] for k in keep],
                              allow_unused=True)
    expected = torch.autograd.grad([eager_outs[k] for k in keep], eager_leaves,
                                   [us[k] for k in keep], allow_unused=True)
    assert_close(outs, f(*primals), equal_nan=True)
    assert_close([g if g is not None else torch.zeros_like(p) for g, p in zip(got, primals)],
                 [g if g is not None else torch.zeros_like(p) for g, p in zip(expected, primals)],
                 equal_nan=True)
    if not op.mutates_input:
        # func.vjp runs the same partition as a grad level's node (Note [Compiled regions
        # under grad], numtorch/_aot/function.py); cotangents of every output
        floating = [k for k, o in enumerate(eager_outs) if o.dtype.is_floating_point]
        pick = lambda outs: tuple(outs[k] for k in floating)             # noqa: E731
        if floating:
            cts = tuple(us[k] for k in floating)
            got = vjp(lambda *a: pick(run(*a)), *primals)[1](cts)
            expected = vjp(lambda *a: pick(f(*a)), *primals)[1](cts)
            assert_close(got, expected, equal_nan=True)
    if op.supports_vmap and "vmap" not in sample(op, dtype, index).skip:
        dims = (0,) * len(primals)
        batched = _batch(primals, dims)
        assert_close(vmap(run, in_dims=dims)(*batched), vmap(f, in_dims=dims)(*batched),
                     equal_nan=True)


# ---------------------------------------------------------------------------------------
# Coverage: every public op and Tensor method has an entry

# Public names that are not ops (nothing to sample), each with where it is tested; modules
# and dtype objects (torch.float32, torch.half, ...: test_dtypes.py) are not ops either.
NOT_OPS = {
    # printing: tests/test_printing.py
    "set_printoptions",
    # classes: test_tensor.py, test_dtypes.py
    "dtype", "Tensor", "Size", "device", "Generator",
    # grad mode: test_autograd.py
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    # random state and the default dtype: test_tensor.py, test_dtypes.py
    "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    "default_generator", "get_default_dtype", "set_default_dtype",
    # transforms (tests/func)
    "vmap", "compile",
    # the default device (CPU only): tests/test_cuda_backends.py
    "get_default_device", "set_default_device",
    # intra-op threads: tests/test_threads.py
    "get_num_threads", "set_num_threads",
    # type queries, global flags, index helpers: tests/test_surface_utils.py
    "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel", "finfo", "iinfo",
    "typename", "is_same_size", "can_cast", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "is_inference_mode_enabled", "scalar_tensor", "empty_strided", "tril_indices",
    "triu_indices", "unravel_index",
    # an in-place spelling of F.relu_: tests/test_surface_reduce.py
    "relu_",
}

# Ops other engineers own and will add entries for (numtorch/testing/_db/<area>.py): a
# strict xfail while the entry is missing, an ordinary pass once it exists.
PENDING = {}

# Tensor methods other engineers own (strict xfails, as PENDING).
PENDING_METHODS = {}

# Tensor attributes set by numtorch/_ops that are not ops.
NOT_OP_METHODS = {
    "__array_function__", "__array_ufunc__",   # NumPy dispatch: tests/test_numpy_interop.py
    "cuda",                                     # raises: numtorch is CPU-only (test_errors.py)
    # storage and type queries: tests/test_surface_utils.py
    "nbytes", "itemsize", "is_cpu", "is_signed", "is_nonzero", "is_same_size", "get_device",
    "is_inference", "storage_offset",
    "__new__",                                  # Tensor(...): tests/test_layering.py
}


def _public_names():
    import types
    return sorted(n for n in dir(torch) if not n.startswith("_")
                  and not isinstance(getattr(torch, n), (types.ModuleType, torch.dtype)))


def _covered_names():
    names = set()
    for op in op_db:
        if op.torch_name:
            names.add(op.torch_name)
        names.update(op.aliases)
    return names


def _coverage_params(names, covered, skip, pending):
    """A param per name; a pending name not covered yet is a strict xfail (so the owner's
    new entry makes it pass without touching this file)."""
    params = []
    for n in names:
        if n in skip:
            continue
        marks = () if n not in pending or n in covered else (
            pytest.mark.xfail(strict=True, reason=f"no OpInfo entry yet ({pending[n]})"),)
        params.append(pytest.param(n, marks=marks, id=n))
    return params


@pytest.mark.parametrize("name", _coverage_params(_public_names(), _covered_names(), NOT_OPS, PENDING))
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
    _method_names(), _covered_methods(), NOT_OP_METHODS, PENDING_METHODS))
def test_tensor_method_has_opinfo(name):
    assert name in _covered_methods(), (
        f"Tensor.{name} has no OpInfo entry (method, inplace, operators or method_aliases)")
