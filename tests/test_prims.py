"""Primitive rules: present, and consistent with impl, with each other and with a loop.

The calls checked are the ones the OpInfo samples make (recorded at the bottom
interpreter while they run), so every primitive is exercised with realistic shapes,
params and values, and a primitive no sample reaches is reported.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch import Tensor
from numtorch._core.meta import MetaArray
from numtorch._core.primitive import ALL_PRIMITIVES
from numtorch._core.tensor import wrap_array
from numtorch.testing.opinfo import flatten_outputs, op_db

F64 = torch.float64

# in_dims patterns of the batch-rule test: every operand batched at 0; the first batched
# at its last dim; the first unbatched while the others are batched.
BDIM_PATTERNS = ("all_front", "first_last", "first_unbatched")

# Primitives only other engineers' ops reach; their OpInfo entries will exercise them.
PENDING_PRIMS = {name: "bound only where a size or value is symbolic (tests/func/test_func_symbolic.py)"
                 for name in ("full", "iota")}
# Higher-order primitives (a graph as a param): no op samples call them; their rules are
# tested by running every OpInfo sample inside one (the region columns of test_ops.py).
HIGHER_ORDER = {"graph_call": "test_ops.py region columns, tests/func/test_graph_call.py"}
_CALLS_PER_PRIM = 3


def _record_calls():
    """{prim name: [(arrays, params)]}: distinct strict primitive calls the OpInfo samples make.

    Calls are taken at the bottom interpreter (``eval_bind``), where operands are already
    broadcast and promoted; the eager fast path (Note [Eager fast path]), which calls NumPy
    directly, is switched off meanwhile. Backward passes of the samples reach the
    transposes (pad, scatter_add, index_add, ...).
    """
    from numtorch._core import primitive as P
    from numtorch._ops import _common
    from numtorch.autograd import engine
    from numtorch._prims import random as R
    calls = {name: {} for name in ALL_PRIMITIVES}
    original, fast_operand = P.eval_bind, _common._fast_operand

    def recording_eval_bind(prim, args, params):
        arrays = [a._data for a in args]
        if all(isinstance(a, np.ndarray) for a in arrays):
            # Up to _CALLS_PER_PRIM calls each with complex, real floating and other operands.
            kinds = {a.dtype.kind for a in arrays}
            group = "c" if "c" in kinds else "f" if "f" in kinds else "other"
            seen = calls.setdefault(prim.name, {}).setdefault(group, {})
            key = (tuple((a.shape, a.dtype.str) for a in arrays), repr(sorted(params.items())))
            if len(seen) < _CALLS_PER_PRIM:
                seen.setdefault(key, ([a.copy() for a in arrays], dict(params)))
        return original(prim, args, params)
    P.eval_bind = engine.eval_bind = recording_eval_bind
    _common._fast_operand = lambda x, *_: None
    _common.EAGER_FAST_PATH[0] = False   # the shortcuts of one-tensor ops too
    R.EAGER_FAST_PATH[0] = False   # random draws bind their primitive too
    try:
        for op in op_db:
            for dtype in [d for d in (F64, torch.complex128, torch.int64, torch.bool)
                          if d in op.dtypes][:2]:
                for s in op.samples(dtype, requires_grad=op.supports_grad):
                    try:
                        out = s.call(op.op)
                        leaves = [t for t in s.tensors() if t.requires_grad]
                        floats = [o for o in flatten_outputs(out) if isinstance(o, Tensor) and o.requires_grad]
                        if leaves and floats and s.grad:
                            torch.autograd.grad(sum(o.sum() for o in floats), leaves, allow_unused=True)
                    except Exception:  # noqa: BLE001 - the op's own tests report it
                        pass
    finally:
        P.eval_bind = engine.eval_bind = original
        _common._fast_operand = fast_operand
        _common.EAGER_FAST_PATH[0] = True
        R.EAGER_FAST_PATH[0] = True
    return {name: [c for group in seen.values() for c in group.values()]
            for name, seen in calls.items()}


_RECORDED = []


def recorded_calls(name):
    if not _RECORDED:
        _RECORDED.append(_record_calls())
    calls = _RECORDED[0].get(name)
    if not calls:
        pytest.skip(f"no OpInfo sample reaches prims.{name} (test_prim_reached reports it)")
    return calls


def _prim_params():
    return [pytest.param(ALL_PRIMITIVES[name], id=name) for name in sorted(ALL_PRIMITIVES)]


@pytest.mark.parametrize("prim", _prim_params())
def test_prim_has_rules(prim):
    assert prim.missing_rules() == [], f"prims.{prim.name} lacks {prim.missing_rules()}"


@pytest.mark.parametrize("prim", _prim_params())
def test_prim_reached(prim):
    if prim.name in HIGHER_ORDER:
        pytest.skip(f"higher-order primitive: tested by {HIGHER_ORDER[prim.name]}")
    if not _RECORDED:
        _RECORDED.append(_record_calls())
    if not _RECORDED[0][prim.name] and prim.name in PENDING_PRIMS:
        pytest.xfail(f"no OpInfo yet: {PENDING_PRIMS[prim.name]}")
    assert _RECORDED[0][prim.name], f"no OpInfo sample calls prims.{prim.name}"


def _out_avals(prim, arrays, params):
    """[(shape, dtype)] of the outputs, from the shape rule."""
    rule = prim.shape(*[MetaArray(np.shape(a), np.asarray(a).dtype) for a in arrays], **params)
    return list(rule) if prim.multiple_results else [rule]


@pytest.mark.parametrize("prim", _prim_params())
def test_prim_shape_rule(prim):
    for arrays, params in recorded_calls(prim.name):
        out = prim.impl(*arrays, **params)
        outs = out if prim.multiple_results else (out,)
        for o, (shape, dtype) in zip(outs, _out_avals(prim, arrays, params)):
            o = np.asarray(o)
            assert (tuple(shape), np.dtype(dtype)) == (o.shape, o.dtype), (
                f"prims.{prim.name} shape rule {(tuple(shape), np.dtype(dtype))} != impl "
                f"{(o.shape, o.dtype)} for params {params}")


def _inner(a, b):
    """Real inner product <a, b> = Re(sum(conj(a) * b)) (complex tangents and cotangents)."""
    return float(np.real(np.sum(np.conj(np.asarray(a, np.complex128)) * np.asarray(b))))


def _random_like(a, rng):
    x = rng.standard_normal(np.shape(a))
    if np.asarray(a).dtype.kind == "c":
        x = x + 1j * rng.standard_normal(np.shape(a))
    return wrap_array(x.astype(np.asarray(a).dtype))


def _inexact(a):
    return np.asarray(a).dtype.kind in "fc"


@pytest.mark.parametrize("prim", [p for p in _prim_params() if not p.values[0].nondiff])
def test_prim_jvp_vjp(prim):
    """<u, jvp(t)> == <vjp(u), t> at the recorded (float64/complex128) points."""
    rng = np.random.default_rng(0)
    checked = 0
    for arrays, params in recorded_calls(prim.name):
        if not all(np.asarray(a).dtype in (np.float64, np.complex128) for a in arrays if _inexact(a)):
            continue
        primals = [wrap_array(a) for a in arrays]
        tangents = [_random_like(a, rng) if _inexact(a) else None for a in arrays]
        if all(t is None for t in tangents) or not any(
                np.dtype(d).kind in "fc" for _, d in _out_avals(prim, arrays, params)):
            continue  # no differentiable operand or output: autograd never calls the rule
        out, t_out = prim.jvp(primals, tangents, **params)
        outs = out if prim.multiple_results else (out,)
        t_outs = t_out if prim.multiple_results else (t_out,)
        for o, ref in zip(outs, (prim.impl(*arrays, **params),) if not prim.multiple_results
                          else prim.impl(*arrays, **params)):
            np.testing.assert_allclose(np.asarray(o), ref, rtol=1e-12, atol=1e-12)
        us = [_random_like(np.asarray(o), rng) for o in outs]
        cts = prim.vjp(tuple(us) if prim.multiple_results else us[0], out, *primals, **params)
        lhs = sum(_inner(u, t) for u, t in zip(us, t_outs) if t is not None)
        rhs = 0.0
        for ct, t in zip(cts, tangents):
            if t is None or ct is None:
                continue
            ct = ct() if not isinstance(ct, Tensor) else ct
            assert tuple(ct.shape) == tuple(t.shape), f"cotangent shape {ct.shape} != {t.shape}"
            rhs += _inner(ct, t)
        assert abs(lhs - rhs) <= 1e-8 * max(1.0, abs(lhs)), (
            f"prims.{prim.name}: <u, jvp(t)> = {lhs} but <vjp(u), t> = {rhs} for params {params}")
        checked += 1
    if not checked:
        pytest.skip(f"no float64 call of prims.{prim.name} recorded")


def _np_example(a, k):
    """Example k of a batch built from a: 0 is a itself, 1 the same values in reverse order
    (so the values stay inside the op's domain but differ per example)."""
    a = np.asarray(a)
    return a if k == 0 else a.reshape(-1)[::-1].reshape(a.shape).copy()


@pytest.mark.parametrize("pattern", BDIM_PATTERNS)
@pytest.mark.parametrize("prim", _prim_params())
def test_prim_batch_rule(prim, pattern):
    """The batch rule agrees with looping impl over the examples, for several in_dims."""
    if prim.draws:   # a batch of states is not built; the randomness policies are tested
        pytest.skip(f"prims.{prim.name} is a random draw (tests/test_random.py)")
    calls = [c for c in recorded_calls(prim.name) if c[0]]
    if not calls:
        pytest.skip(f"prims.{prim.name} takes no operands")
    for arrays, params in calls:
        if pattern == "first_unbatched" and len(arrays) < 2:
            pytest.skip("needs two operands")
        bdims = [0] * len(arrays)
        if pattern == "first_last":
            bdims[0] = np.ndim(arrays[0])
        elif pattern == "first_unbatched":
            bdims[0] = None
        values = []
        for a, d in zip(arrays, bdims):
            if d is None:
                values.append(wrap_array(np.asarray(a)))
            else:
                values.append(wrap_array(np.stack([_np_example(a, 0), _np_example(a, 1)], axis=d)))
        out, out_bdim = prim.batch(values, bdims, **params)
        outs, out_bdims = (out, out_bdim) if prim.multiple_results else ((out,), (out_bdim,))
        for k in range(2):
            args = [np.asarray(a) if d is None else _np_example(a, k) for a, d in zip(arrays, bdims)]
            ref = prim.impl(*args, **params)
            refs = ref if prim.multiple_results else (ref,)
            for o, d, r in zip(outs, out_bdims, refs):
                got = np.asarray(o._concrete("test")) if d is None else np.take(
                    np.asarray(o._concrete("test")), k, axis=d)
                np.testing.assert_allclose(got, r, rtol=1e-6, atol=1e-6,
                                           err_msg=f"prims.{prim.name} example {k}, {params}")


@pytest.mark.parametrize("prim", _prim_params())
def test_prim_has_lower_rule(prim):
    """Every primitive tells the compile backend how to generate it, or declares itself an
    extern (a NumPy call between kernels) with a reason (Note [Lower rules])."""
    from numtorch._prims import _lower
    rule = prim.lower
    assert isinstance(rule, (_lower.Pointwise, _lower.Reduction, _lower.Movement, _lower.Extern)), \
        f"prims.{prim.name} has no lower rule (give it one, or declare it extern)"
    if isinstance(rule, _lower.Extern):
        assert rule.reason, f"prims.{prim.name}: an extern declaration says why"


@pytest.mark.parametrize("make", [
    lambda b: np.broadcast_to(b[0, :1].reshape(()), (10, 40)),   # a number broadcast
    lambda b: np.broadcast_to(b[0], (10, 40)),           # a bias broadcast over rows
    lambda b: np.broadcast_to(b[:, :1], (10, 40)),       # a column broadcast
    lambda b: b.T,                                       # strided, no zero stride
    lambda b: np.broadcast_to(b[::2, 0], (4, 5, 5)).transpose(1, 0, 2),
], ids=["number", "row", "column", "transposed", "mixed"])
def test_broadcast_in_dim_of_views_is_numpys_broadcast(make):
    # Note in _bid_impl: a broadcast view broadcast again (vmap's unbatched operands) takes
    # the direct strided view; values, shape and read-only-ness are np.broadcast_to's.
    impl = ALL_PRIMITIVES["broadcast_in_dim"].impl
    base = np.random.default_rng(0).standard_normal((10, 40)).astype(np.float32)
    x = make(base)
    for lead in [(), (3,), (2, 1)]:
        shape = lead + x.shape
        out = impl(x, shape=shape, broadcast_dimensions=tuple(range(len(lead), len(shape))))
        np.testing.assert_array_equal(out, np.broadcast_to(x, shape))
        assert not out.flags.writeable and np.shares_memory(out, base)
