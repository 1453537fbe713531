"""The OpInfo matrix's compile column: every op, traced with make_graph and compiled by the
inductor backend (numtorch._inductor.compile_graph), equals eager on every sample of every
dtype its entry lists, also with non-contiguous inputs.

All graphs of the column build into a few shared libraries once per session (compile_graphs),
and the disk cache keeps them between sessions, so the column costs one compiler run.
Skipped, not failed, where there is no C compiler. The same cases also run through the
backend's NumPy code (the fallback without a compiler, forced here by
``config.cpp.numpy_fallback``), everywhere.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

import numtorch as torch
from numtorch import Tensor
from numtorch._inductor import build, compile_graphs, config
from numtorch.func import make_graph
from numtorch.testing import assert_close
from numtorch.testing.opinfo import flatten_outputs, op_db

needs_cc = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")

CHUNK = 150   # graphs per shared library: one compiler run each
SAMPLES = 4  # the first samples of each dtype (entries put size-0/1 and broadcasting early)
OPT_LEVEL = "-O1"   # the same values as -O3; the kernels compile faster


def _tensor_outputs(op, s):
    try:
        with torch.no_grad():
            return all(isinstance(o, Tensor) for o in flatten_outputs(s.call(op.op)))
    except Exception:  # noqa: BLE001 - an op that fails eagerly is test_ops' business
        return False


def _params():
    out = []
    for op in op_db:
        if op.nondeterministic or not op.supports_vmap:
            continue
        for dtype in op.dtypes:
            for i, s in enumerate(op.samples(dtype)[:SAMPLES]):
                if "graph" in s.skip or not s.tensors() or not _tensor_outputs(op, s):
                    continue
                if op.decoration("graph", dtype, i) is not None:
                    continue        # not traceable by make_graph (test_ops' graph column)
                d = op.decoration("inductor", dtype, i)
                marks = () if d is None else (pytest.mark.xfail(strict=True, reason=d.reason),)
                out.append(pytest.param(op, dtype, i, id=f"{op.name}-{dtype.name}-sample{i}",
                                        marks=marks))
    return out


PARAMS = _params()
_COMPILED: dict = {}


def _fn(op, s, tensors):
    def f(*values):
        table = {id(t): v for t, v in zip(tensors, values)}
        return s.map(lambda t: table.get(id(t), t)).call(op.op)
    return f


def _compile_all():
    """Trace every case, then build them CHUNK graphs per library."""
    graphs, keys = [], []
    for p in PARAMS:
        op, dtype, i = p.values
        s = op.samples(dtype)[i]
        tensors = [t.detach() for t in s.tensors()]
        try:
            graphs.append(make_graph(_fn(op, s, s.tensors()))(*tensors))
            keys.append(p.id)
        except Exception as e:  # noqa: BLE001 - reported by the test of this case
            _COMPILED[p.id] = e
    starts = range(0, len(graphs), CHUNK)
    saved, config.cpp.opt_level = config.cpp.opt_level, OPT_LEVEL
    try:
        with ThreadPoolExecutor(2) as pool:     # compiler processes run in parallel
            built = list(pool.map(lambda k: compile_graphs(graphs[k:k + CHUNK]), starts))
    finally:
        config.cpp.opt_level = saved
    for k, compiled in zip(starts, built):
        _COMPILED.update(zip(keys[k:k + CHUNK], compiled))


def _noncontiguous(t):
    """The same values in a transposed memory layout."""
    if t.ndim < 2:
        return t
    return t.detach().mT.contiguous().mT


@needs_cc
@pytest.mark.parametrize("op, dtype, index", PARAMS)
def test_compiled_equals_eager(request, op, dtype, index):
    if not _COMPILED:
        _compile_all()
    compiled = _COMPILED[request.node.callspec.id]
    if isinstance(compiled, Exception):
        raise compiled
    _check(compiled, op, dtype, index)


@pytest.mark.parametrize("op, dtype, index", PARAMS)
def test_numpy_code_equals_eager(op, dtype, index):
    s = op.samples(dtype)[index]
    tensors = [t.detach() for t in s.tensors()]
    graph = make_graph(_fn(op, s, s.tensors()))(*tensors)
    (compiled,) = compile_graphs([graph], options={"cpp.numpy_fallback": True})
    assert compiled.kind == "numpy"
    _check(compiled, op, dtype, index)


def _check(compiled, op, dtype, index):
    """Compiled equals eager, on the sample and on its transposed layout."""
    s = op.samples(dtype)[index]
    tensors = [t.detach() for t in s.tensors()]
    expected = flatten_outputs(_fn(op, s, s.tensors())(*tensors))
    assert_close(flatten_outputs(compiled(*tensors)), expected, equal_nan=True)
    strided = [_noncontiguous(t) for t in tensors]
    assert_close(flatten_outputs(compiled(*strided)), expected, equal_nan=True)


@needs_cc
def test_column_is_mostly_fused():
    """Most of the column compiles to kernels, not only externs (a guard against the
    scheduler silently sending everything to NumPy)."""
    if not _COMPILED:
        _compile_all()
    compiled = [c for c in _COMPILED.values() if not isinstance(c, Exception)]
    with_kernels = sum(1 for c in compiled if c.kernel_count)
    assert with_kernels > 0.6 * len(compiled), (with_kernels, len(compiled))
