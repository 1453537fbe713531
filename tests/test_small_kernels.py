"""The small-tensor C kernels of numtorch/_prims/_small.py (Note [Small-tensor kernels]).

Each kernel must give the bits of the NumPy expression it replaces (softmax's five calls,
sigmoid's formula, np.maximum/np.minimum.reduce, np.concatenate / np.stack), so the
references are those expressions, over thousands of shapes and the special values (NaN,
±inf, ±0.0, subnormals); the ops that call them are compared with their general path and
with PyTorch; operands a kernel does not take, and a machine without a C compiler, fall
back to NumPy with the same results and errors. Also here: argmax/argmin without a dim, whose
eager shortcut (the general path's impl call, without its binds) came with them.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import numtorch as torch
from numtorch._prims import _small
from numtorch.func import vmap

needs_kernels = pytest.mark.skipif(not _small.available(), reason="no C compiler: NumPy path")
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-310, 1e30, -1e30, 88.7, -88.7, 710.0]


def _bits(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def _same(got, ref):
    got = got.numpy() if isinstance(got, torch.Tensor) else got
    ref = np.asarray(ref)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, ref.dtype, got.shape, ref.shape)
    assert np.array_equal(_bits(got), _bits(ref)), (got, ref)


def _numpy_softmax(d):
    with np.errstate(all="ignore"):
        m = np.maximum.reduce(d, axis=-1, keepdims=True)
        e = np.exp(d - m)
        return e / np.add.reduce(e, axis=-1, keepdims=True)


def _numpy_log_softmax(d):
    # as logsumexp composes it: an infinite max shifts by 0 (its `where`)
    with np.errstate(all="ignore"):
        m = np.maximum.reduce(d, axis=-1, keepdims=True)
        m = np.where(np.isinf(m), d.dtype.type(0), m)
        return d - (np.log(np.add.reduce(np.exp(d - m), axis=-1, keepdims=True)) + m)


def _numpy_sigmoid(d):
    with np.errstate(all="ignore"):
        return 1 / (1 + np.exp(-d))


def _samples(count, seed, max_size=3000):
    """``count`` float arrays of random shapes, scales and dtypes, some with special values."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        dtype = (np.float32, np.float64)[k % 2]
        if k % 3 == 0:
            shape = (int(rng.integers(1, max_size)),)
        else:
            shape = tuple(int(n) for n in rng.integers(1, 40, size=rng.integers(1, 4)))
        a = (rng.standard_normal(shape) * rng.choice([1e-3, 1, 10, 100])).astype(dtype)
        if k % 4 == 0:
            flat = a.reshape(-1)
            flat[rng.integers(0, flat.size, size=3)] = rng.choice(SPECIAL, size=3)
        yield a


@needs_kernels
def test_softmax_and_sigmoid_kernels_give_numpys_bits():
    for a in _samples(3000, 0):
        _same(_small.softmax(a, -1), _numpy_softmax(a))
        _same(_small.softmax(a, a.ndim - 1), _numpy_softmax(a))
        _same(_small.log_softmax(a, -1), _numpy_log_softmax(a))
        _same(_small.sigmoid(a), _numpy_sigmoid(a))


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_on_every_size_up_to_300_and_special_values(dtype):
    # every tail length of NumPy's SIMD loops and of its pairwise sum's blocks (8, 128)
    rng = np.random.default_rng(1)
    for n in range(1, 300):
        a = rng.standard_normal(n).astype(dtype) * 30
        _same(_small.softmax(a, 0), _numpy_softmax(a))
        _same(_small.log_softmax(a, 0), _numpy_log_softmax(a))
        _same(_small.sigmoid(a), _numpy_sigmoid(a))
        _same(_small.amax(a), np.maximum.reduce(a, axis=None))
    s = np.array(SPECIAL * 3, dtype)
    for k in range(1, s.size + 1):
        _same(_small.sigmoid(s[:k]), _numpy_sigmoid(s[:k]))
        _same(_small.softmax(s[:k], 0), _numpy_softmax(s[:k]))
        _same(_small.log_softmax(s[:k], 0), _numpy_log_softmax(s[:k]))
        for fn, ref in ((_small.amax, np.maximum), (_small.amin, np.minimum)):
            _same(fn(s[:k]), ref.reduce(s[:k], axis=None))
            r = s[k - 1::-1].copy()   # the other order: which NaN, which zero a tie keeps
            _same(fn(r), ref.reduce(r, axis=None))


@needs_kernels
def test_large_softmax_and_sigmoid_free_the_gil_and_keep_the_bits():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(shape).astype(dt) for shape, dt in
              (((300, 100), np.float32), ((40000,), np.float64), ((3, 70001), np.float32),
               ((20000, 3), np.float64), ((2000, 9), np.float32))]   # blocks of rows
    results = {}

    def work(i, a):
        results[i] = (_small.softmax(a, -1), _small.sigmoid(a), _small.amax(a),
                      _small.log_softmax(a, -1))

    threads = [threading.Thread(target=work, args=(i, a)) for i, a in enumerate(arrays)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, a in enumerate(arrays):
        _same(results[i][0], _numpy_softmax(a))
        _same(results[i][1], _numpy_sigmoid(a))
        _same(results[i][2], np.maximum.reduce(a, axis=None))
        _same(results[i][3], _numpy_log_softmax(a))


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.int32, np.int16,
                                   np.int8, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_])
def test_max_and_min_kernels_give_numpys_bits(dtype):
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 8, 9, 16, 17, 33, 64, 100, 1000, 20000):
        a = (rng.standard_normal(n) * 100).astype(dtype)
        if a.dtype.kind == "f":
            a[rng.integers(0, n, size=min(n, 4))] = [0.0, -0.0, 0.0, -0.0][:min(n, 4)]
        for shaped in (a, a.reshape(1, n, 1)):
            _same(_small.amax(shaped), np.maximum.reduce(shaped, axis=None))
            _same(_small.amin(shaped), np.minimum.reduce(shaped, axis=None))
        if a.dtype.kind == "f" and n > 2:
            a[n // 2] = np.nan
            _same(_small.amax(a), np.maximum.reduce(a, axis=None))
            _same(_small.amin(a), np.minimum.reduce(a, axis=None))


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.bool_, np.complex64])
def test_cat_kernel_gives_numpys_concatenate(dtype):
    rng = np.random.default_rng(4)
    for _ in range(300):
        nd = int(rng.integers(0, 4))
        shape = [int(n) for n in rng.integers(0, 5, size=nd)]
        k = int(rng.integers(1, 4))
        arrays = [np.asarray((rng.standard_normal(shape) * 10).astype(dtype)) for _ in range(k)]
        for dim in range(-nd - 1, nd + 1):
            _same(_small.cat(arrays, dim, True), np.stack(arrays, dim))
        if nd:
            dim = int(rng.integers(0, nd))
            pieces = []
            for _ in range(k):
                s = list(shape)
                s[dim] = int(rng.integers(0 if nd > 1 else 1, 4))
                pieces.append((rng.standard_normal(s) * 10).astype(dtype))
            _same(_small.cat(pieces, dim, False), np.concatenate(pieces, dim))
            _same(_small.cat(pieces, dim - nd, False), np.concatenate(pieces, dim))


@needs_kernels
def test_kernels_decline_operands_they_do_not_take():
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for x in (a.T, a[:, ::2], a.astype(">f4"), a.astype(np.float16), a.astype(np.int64),
              np.zeros((0, 4), np.float32), a.view(np.matrix)):
        assert _small.softmax(x, -1) is None and _small.sigmoid(x) is None
        assert _small.log_softmax(x, -1) is None
    assert _small.softmax(a, 0) is None and _small.softmax(a, -2) is None   # not the last dim
    assert _small.log_softmax(a, 0) is None and _small.log_softmax(np.array(1.0), 0) is None
    assert _small.softmax(np.float32(1.0), 0) is None and _small.softmax(np.array(1.0), 0) is None
    assert _small.softmax(a, True) is None and _small.softmax(a, 2**70) is None
    assert _small.amax(np.zeros(0)) is None and _small.amax(a.T) is None
    assert _small.amax(np.array([1 + 2j])) is None and _small.amax(np.array(["a"])) is None
    assert _small.amax(np.ones(3, np.longdouble)) is None
    b = np.ones((3, 4), np.float32)
    assert _small.cat([a, b.astype(np.float64)], 0, False) is None      # promotion
    assert _small.cat([a, b[:, :3]], 0, False) is None                  # sizes off dim
    assert _small.cat([a, a], 2, False) is None and _small.cat([a, a], 3, True) is None
    assert _small.cat([a, b[:2]], 0, True) is None                      # stack: one shape
    assert _small.cat([np.zeros(0, np.float32), a[0]], 0, False) is None   # cat skips it
    assert _small.cat([], 0, False) is None and _small.cat((a, a), 0, False) is None
    assert _small.cat([a, a.T.copy().T], 0, False) is None              # not C-contiguous
    assert _small.cat([np.array(1.0), np.array(2.0)], 0, False) is None   # 0-d cat: an error
    assert _small.cat([np.array([object()])] * 2, 0, False) is None
    big = np.ones((512, 512), np.float32)                               # 2 MiB out: NumPy's copy
    assert _small.cat([big, big], 0, False) is None and _small.cat([big[:128]] * 2, 0, False) is not None
    _same(torch.stack([torch.tensor(big)] * 2, 1), np.stack([big, big], 1))


@needs_kernels
def test_the_ops_call_the_kernels(monkeypatch):
    calls = []
    for name in ("softmax", "log_softmax", "sigmoid", "amax", "amin", "cat"):
        fn = getattr(_small, name)
        monkeypatch.setattr(_small, name, lambda *a, _fn=fn, _n=name: (calls.append(_n), _fn(*a))[1])
    x, y = torch.randn(10), torch.randn(10)
    x.softmax(-1), x.sigmoid(), x.max(), x.min(), torch.stack([x, y]), torch.cat([x, y])
    torch.sigmoid(x), torch.nn.functional.softmax(x, 0), torch.max(x)
    x.log_softmax(-1), torch.nn.functional.log_softmax(x, 0)
    assert calls == ["softmax", "sigmoid", "amax", "amin", "cat", "cat", "sigmoid", "softmax", "amax",
                     "log_softmax", "log_softmax"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(10,), (4, 7), (2, 3, 129), (1,), ()])
def test_ops_match_the_general_path_and_pytorch(dtype, shape):
    pt = pytest.importorskip("torch")
    a = np.asarray((np.random.default_rng(5).standard_normal(shape) * 5).astype(dtype))
    if a.size >= 4:
        a.flat[:4] = [0.0, -0.0, 1e-40, 90.0]
    x, b = torch.tensor(a), torch.tensor(a[None])
    fns = [lambda t: t.sigmoid(), lambda t: t.max(), lambda t: t.min()]
    if shape:
        fns += [lambda t: t.softmax(-1), lambda t: t.log_softmax(-1)]
    for fn in fns:
        got = fn(x)
        _same(got, vmap(fn)(b)[0])   # the general path: binds under vmap
        ref = fn(pt.from_numpy(a)).numpy()
        assert got.dtype == torch.from_numpy(ref).dtype and got.shape == ref.shape
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6 if dtype == np.float32 else 1e-14,
                                   atol=1e-6 if dtype == np.float32 else 1e-13)   # log_softmax near 0
    ys = [torch.tensor(a + i) for i in range(3)]
    for dim in range(-len(shape) - 1, len(shape) + 1):
        got = torch.stack(ys, dim)
        _same(got, vmap(lambda z: torch.stack([t + z for t in ys], dim))(torch.zeros(1, dtype=x.dtype))[0])
        _same(got, pt.stack([pt.from_numpy(t.numpy()) for t in ys], dim).numpy())
    for dim in range(-len(shape), len(shape)):
        _same(torch.cat(ys, dim), pt.cat([pt.from_numpy(t.numpy()) for t in ys], dim).numpy())


def test_special_values_against_pytorch():
    pt = pytest.importorskip("torch")
    a = np.array(SPECIAL, np.float32)
    for fn in (lambda t: t.sigmoid(), lambda t: t.max(), lambda t: t.min()):
        np.testing.assert_array_equal(fn(torch.tensor(a)).numpy(), fn(pt.from_numpy(a)).numpy())
    for row in ([np.inf, 1.0], [-np.inf, 1.0], [np.nan, 0.0], [0.0, -0.0], [1e30, -1e30]):
        r = np.array(row, np.float32)
        np.testing.assert_allclose(torch.tensor(r).softmax(-1).numpy(), pt.from_numpy(r).softmax(-1).numpy())


def test_other_operands_take_numpy_with_the_same_results():
    a = np.random.default_rng(6).standard_normal((6, 5)).astype(np.float32)
    x = torch.tensor(a)
    for t, ref in ((x.t(), a.T), (x[:, ::2], a[:, ::2])):
        _same(t.sigmoid(), _numpy_sigmoid(ref))
        _same(t.softmax(-1), _numpy_softmax(ref))
        _same(t.max(), np.maximum.reduce(ref, axis=None))
        _same(torch.stack([t, t]), np.stack([ref, ref]))
    _same(x.softmax(0), _numpy_softmax(a.T).T)
    h = torch.tensor(a.astype(np.float16))
    _same(h.sigmoid(), _numpy_sigmoid(a.astype(np.float16)))
    _same(torch.tensor(3, dtype=torch.int64).max(), np.array(3))
    assert torch.empty(0).sigmoid().shape == (0,) and torch.empty(0, 3).softmax(-1).shape == (0, 3)
    _same(torch.tensor(2.0).softmax(-1), np.float32(1.0).reshape(()))
    c = torch.tensor(np.array([1 + 1j], np.complex64))
    _same(c.sigmoid(), _numpy_sigmoid(np.array([1 + 1j], np.complex64)))


def test_errors_and_recorded_calls_unchanged():
    x = torch.randn(3, 4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.softmax(2)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        torch.empty(0, 3).max()
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        torch.stack([x, x[:2]])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        torch.cat([x, x[:, :2]])
    with pytest.raises(TypeError, match="argument 'input'"):
        torch.sigmoid([1.0])
    assert torch.cat([x, x.double()]).dtype == torch.float64
    w = x.clone().requires_grad_()
    assert w.sigmoid().grad_fn.name() == "SigmoidBackward0"
    assert w.softmax(-1).grad_fn.name() == "SoftmaxBackward0"
    assert w.max().grad_fn.name() == "MaxBackward1"
    assert torch.stack([w, w]).grad_fn.name() == "StackBackward0"


def test_max_and_min_with_other_match_pytorch():
    pt = pytest.importorskip("torch")
    a, b = np.array([1.0, 5.0], np.float32), np.array([3.0, 2.0], np.float32)
    for name in ("max", "min"):
        ref = getattr(pt, name)(pt.from_numpy(a), other=pt.from_numpy(b)).numpy()
        _same(getattr(torch, name)(torch.tensor(a), other=torch.tensor(b)), ref)
        _same(getattr(torch.tensor(a), name)(other=torch.tensor(b)), ref)
    w = torch.tensor(a, requires_grad=True)
    assert torch.max(w, other=torch.tensor(b)).grad_fn.name() == "MaximumBackward0"


def test_without_a_compiler_numpy_computes_the_same(monkeypatch):
    from numtorch._inductor import build
    x = np.random.default_rng(7).standard_normal((3, 10)).astype(np.float32)
    fns = [lambda t: t.softmax(-1), lambda t: t.sigmoid(), lambda t: t.max(), lambda t: t.min(),
           lambda t: torch.stack([t, t]), lambda t: torch.cat([t, t], 1)]
    with_kernels = [fn(torch.tensor(x)).numpy() for fn in fns]
    monkeypatch.setattr(build, "usable", lambda: False)
    _small._reset()
    try:
        assert not _small.available()
        assert _small.softmax(x, -1) is None and _small.cat([x, x], 0, False) is None
        for fn, ref in zip(fns, with_kernels):
            _same(fn(torch.tensor(x)), ref)
    finally:
        monkeypatch.undo()
        _small._reset()
    _small.available()   # loaded again for the tests that follow


def test_the_build_cache_key_covers_the_include_directories():
    from numtorch._inductor import build
    if build.compiler() is None:
        pytest.skip("no C compiler")
    cc = build.compiler()
    assert build.cache_key("int f;", cc) != build.cache_key("int f;", cc, include=("/usr/include",))
    assert "-I/x" in build._flags(cc, include=("/x",))


def test_without_python_headers_nothing_is_built(monkeypatch):
    import sysconfig
    from numtorch._inductor import build
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"include": "/nonexistent/include"})
    monkeypatch.setattr(build, "load_or_none", lambda *a, **k: pytest.fail("a build was tried"))
    assert _small._load() is None


@pytest.mark.filterwarnings("ignore:invalid value encountered")   # the general path's inf - inf
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(10,), (4, 7), (3, 2, 33), (1,), (600, 3)])
def test_log_softmax_matches_its_general_path_and_pytorch(dtype, shape, monkeypatch):
    a = (np.random.default_rng(8).standard_normal(shape) * 20).astype(dtype)
    rows = a.reshape(-1, shape[-1])
    rows[0, 0] = np.inf
    if rows.shape[0] > 2:
        rows[1, 0], rows[2, -1] = -np.inf, np.nan
    x = torch.tensor(a)
    got = [x.log_softmax(-1), torch.nn.functional.log_softmax(x, len(shape) - 1), x.log_softmax(0)]
    monkeypatch.setattr(_small, "log_softmax", _small._none)   # the general path: logsumexp's ops
    for g, dim in zip(got, (-1, len(shape) - 1, 0)):
        _same(g, x.log_softmax(dim))
    monkeypatch.undo()
    _same(got[0], vmap(lambda t: t.log_softmax(-1))(torch.tensor(a[None]))[0])
    pt = pytest.importorskip("torch")
    # (a row holding +inf differs: PyTorch gives NaN everywhere, numtorch's logsumexp-based
    # general path -- and so the kernel -- NaN there and -inf elsewhere; left as it was)
    a[np.isposinf(a)] = 3.0
    ref = pt.from_numpy(a).log_softmax(-1).numpy()
    # (x - (log(s) + m), the general path's order: absolute error ~ulps of the max)
    np.testing.assert_allclose(torch.tensor(a).log_softmax(-1).numpy(), ref, rtol=1e-5 if dtype ==
                               np.float32 else 1e-12, atol=8 * np.finfo(dtype).eps * np.nanmax(np.abs(a[np.isfinite(a)])))
    w = x.clone().requires_grad_()
    assert w.log_softmax(-1).grad_fn.name() == "LogSoftmaxBackward0"
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.log_softmax(len(shape))
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax") as record:
        torch.log_softmax(x)
    assert record[0].filename == __file__


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("shape", [(), (1,), (10,), (3, 5), (4, 1, 6)])
def test_argmax_argmin_without_dim_match_the_general_path_and_pytorch(dtype, shape):
    pt = pytest.importorskip("torch")
    a = np.asarray((np.random.default_rng(9).standard_normal(shape) * 3).astype(dtype))
    if a.dtype.kind == "f" and a.size > 4:
        a.flat[1], a.flat[3] = np.nan, np.nan   # the first NaN wins, as in PyTorch
    x = torch.tensor(a)
    for name in ("argmax", "argmin"):
        for t, ref in ((x, a), (x.mT if a.ndim > 1 else x, np.swapaxes(a, -1, -2) if a.ndim > 1 else a)):
            got = getattr(t, name)()
            _same(got, vmap(lambda u: getattr(u, name)())(t[None])[0])
            if dtype is not np.bool_:   # (PyTorch has no bool argmax; numtorch's both paths do)
                _same(got, getattr(pt.from_numpy(np.ascontiguousarray(ref)), name)().numpy())
    with pytest.raises(IndexError, match="Expected reduction dim to be specified"):
        torch.empty(0, 3).argmax()
