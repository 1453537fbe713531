"""The one-pass C kernels of numtorch/_prims/_onepass.py: ``x.add_(y, alpha=a)`` (Note
[One-pass add with alpha]), select, behind ``where`` and ReLU (Note [Branch-free select]),
and the transposed bias add of eager linear (Note [Rows before columns in linear]).

Each kernel must give NumPy's result bit for bit (axpy: ``x + y * a``, the product rounded,
then the sum; select: ``np.where``), so the references are NumPy expressions (and PyTorch,
where installed, for ReLU); counting wrappers show which calls a kernel took.
"""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch._prims import _onepass, elementwise as E

needs_kernel = pytest.mark.skipif(not _onepass.available(), reason="no C compiler: NumPy path")


def _pair(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype) * 1e-3)


@pytest.fixture
def kernel_calls(monkeypatch):
    """The dtypes of the kernel calls made while the test runs."""
    calls = []
    if _onepass.available():
        kernels = dict(_onepass._kernels)
        for dt, fn in kernels.items():
            kernels[dt] = lambda *a, _fn=fn, _dt=dt: (calls.append(_dt), _fn(*a))[1]
        monkeypatch.setattr(_onepass, "_kernels", kernels)
    return calls


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 10, 4099, 401408])
def test_add_with_alpha_in_one_pass_rounds_as_numpy(n, dtype, kernel_calls):
    p, g = _pair(n, dtype)
    x = torch.tensor(p)
    assert x.add_(torch.tensor(g), alpha=-0.01) is x
    assert np.array_equal(x.numpy(), p + g * dtype(-0.01))
    assert x._version == 1
    y = torch.tensor(p)
    y.sub_(torch.tensor(g), alpha=0.01)        # sub with alpha: add with -alpha, exactly
    assert np.array_equal(y.numpy(), p - g * dtype(0.01))
    assert kernel_calls == [np.dtype(dtype)] * 2


def test_add_with_alpha_close_to_pytorch():
    pt = pytest.importorskip("torch")
    p, g = _pair((37, 129), np.float32, 1)
    x = torch.tensor(p)
    x.add_(torch.tensor(g), alpha=0.3)
    ref = pt.tensor(p)
    ref.add_(pt.tensor(g), alpha=0.3)          # one fma: equal up to one ulp
    np.testing.assert_array_max_ulp(x.numpy(), ref.numpy(), maxulp=1)


def test_without_the_kernel_numpy_computes_it(monkeypatch, kernel_calls):
    monkeypatch.setattr(_onepass, "_kernels", {})
    monkeypatch.setattr(_onepass, "_unavailable", [True])
    p, g = _pair(4099, np.float32, 2)
    x = torch.tensor(p)
    x.add_(torch.tensor(g), alpha=-0.01)
    assert np.array_equal(x.numpy(), p + g * np.float32(-0.01))
    assert kernel_calls == []


def test_operands_the_kernel_does_not_take(kernel_calls):
    # overlapping views, a broadcast operand, non-contiguous memory, an integer dtype:
    # NumPy's semantics (operands read before the write), as before.
    a = np.arange(12, dtype=np.float32)
    x = torch.tensor(a)
    x[1:].add_(x[:-1], alpha=2.0)
    ref = a.copy()
    ref[1:] = a[1:] + np.float32(2) * a[:-1]
    assert np.array_equal(x.numpy(), ref)
    x = torch.tensor(a.reshape(3, 4))
    x.add_(torch.tensor(a[:4]), alpha=0.5)
    assert np.array_equal(x.numpy(), a.reshape(3, 4) + a[:4] * np.float32(0.5))
    x = torch.tensor(a.reshape(3, 4))
    x.t().add_(torch.ones(4, 3), alpha=-1.0)
    assert np.array_equal(x.numpy(), a.reshape(3, 4) - 1)
    i = torch.arange(5)
    i.add_(torch.ones(5, dtype=torch.int64), alpha=3)
    assert i.tolist() == [3, 4, 5, 6, 7]
    assert kernel_calls == []


def test_add_with_alpha_under_autograd_still_records(kernel_calls):
    w = torch.ones(3, requires_grad=True)
    x = torch.zeros(3)
    x.add_(w, alpha=2.0)              # other requires grad: the generic path records it
    x.sum().backward()
    assert np.array_equal(w.grad.numpy(), np.full(3, 2.0, np.float32))
    assert kernel_calls == []


@needs_kernel
def test_sgd_step_takes_the_kernel(kernel_calls):
    p, g = _pair((64, 33), np.float32, 3)
    w = torch.nn.Parameter(torch.tensor(p))
    opt = torch.optim.SGD([w], lr=0.05)
    ref = p.copy()
    for _ in range(3):
        w.grad = torch.tensor(g)
        opt.step()
        ref = ref + g * np.float32(-0.05)
    assert np.array_equal(w.detach().numpy(), ref)
    assert kernel_calls == [np.dtype(np.float32)] * 3


# -- select: where(c, x, y) in one branch-free pass ------------------------------------

def _bits(a):
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.itemsize in (1, 2, 4, 8) else a


def _edge_values(dtype, n, seed):
    """n values of ``dtype`` with the edge cases a bit blend must carry: +-0.0, +-inf,
    NaNs with payloads and both signs (floats), extremes (integers)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(n) < 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        v[:2] = info.min, info.max
        return v
    v = (rng.standard_normal(n) * 10).astype(dtype)
    if v.dtype.kind == "c":
        v = v + 1j * v[::-1]
        v[:3] = [complex(-0.0, 0.0), complex(np.nan, -np.inf), complex(np.inf, -0.0)]
        return v
    u = v.view(f"u{v.dtype.itemsize}")
    v[:5] = [-0.0, 0.0, np.inf, -np.inf, np.nan]
    u[5] = u[4] | 1                              # a NaN with a payload
    u[6] = u[4] | (1 << (8 * v.dtype.itemsize - 1))   # a negative NaN
    return v


@pytest.fixture
def select_calls(monkeypatch):
    """The itemsizes of the select kernel's calls while the test runs."""
    calls = []
    if _onepass.available():
        kernels = dict(_onepass._selects)
        for size, fn in kernels.items():
            kernels[size] = lambda *a, _fn=fn, _s=size: (calls.append(_s), _fn(*a))[1]
        monkeypatch.setattr(_onepass, "_selects", kernels)
    return calls


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int16,
                                   np.int64, np.uint32, np.bool_, np.complex64])
def test_select_kernel_gives_np_where_bits(dtype, select_calls):
    n = 5003
    rng = np.random.default_rng(4)
    c = rng.random(n) < 0.5
    x, y = _edge_values(dtype, n, 5), _edge_values(dtype, n, 6)[::-1].copy()
    cases = [(x, y), (x[:1].reshape(()), y), (x, y[:1].reshape(())),
             (x[:1].reshape(()), y[:1].reshape(())),
             (np.broadcast_to(x[7], (n,)), y)]          # a zero-stride view: one element
    for a, b in cases:
        out = _onepass.select(c, a, b)
        ref = np.where(c, a, b)
        assert out.dtype == ref.dtype and out.shape == ref.shape
        assert np.array_equal(_bits(out), _bits(ref))
    assert select_calls == [np.dtype(dtype).itemsize] * len(cases)


def test_select_kernel_declines_other_layouts(select_calls):
    rng = np.random.default_rng(7)
    c = rng.random((64, 80)) < 0.5
    x = rng.standard_normal((64, 80)).astype(np.float32)
    y = rng.standard_normal((80, 64)).astype(np.float32)
    row = rng.standard_normal(80).astype(np.float32)
    assert _onepass.select(c, x, y.T) is None                    # not C-contiguous
    assert _onepass.select(c, x, np.broadcast_to(row, c.shape)) is None   # partly broadcast
    assert _onepass.select(c, x, x.astype(np.float64)) is None   # dtypes differ
    assert _onepass.select(c.T, x.T.copy(), x.T.copy()) is None  # c not C-contiguous
    assert _onepass.select(c, x.astype(np.complex128), x.astype(np.complex128)) is None
    assert select_calls == []
    # the primitive's impl still computes them, as np.where does
    for args in ((c, x, y.T), (c, x, np.broadcast_to(row, c.shape)), (c.T, y, y)):
        assert np.array_equal(_bits(E.select.impl(*args)), _bits(np.where(*args)))


@needs_kernel
def test_select_kernel_takes_transposed_layouts(select_calls):
    # vmap's batched results are often a transpose of a contiguous array: c, x and y
    # laid out alike (or x, y broadcast) run in memory order, the result in c's layout.
    rng = np.random.default_rng(15)
    base = rng.standard_normal((64, 10, 128)).astype(np.float32)
    y = base.transpose(1, 0, 2)
    x = (base * 2).transpose(1, 0, 2)
    c = y < 0
    zero = np.zeros((), np.float32)
    for a, b in ((zero, y), (np.broadcast_to(zero, y.shape), y), (x, y), (y, zero)):
        out = _onepass.select(c, a, b)
        assert out.strides == y.strides
        assert np.array_equal(_bits(out), _bits(np.where(c, a, b)))
    one = rng.standard_normal((5, 1, 7)).astype(np.float64).transpose(2, 1, 0)
    odd = np.lib.stride_tricks.as_strided(one, strides=(8, 12345, 56))   # a size-1 dim's stride
    out = _onepass.select(odd > 0, odd, np.full((), 1.5))
    assert np.array_equal(_bits(out), _bits(np.where(odd > 0, odd, 1.5)))
    assert _onepass.select(odd > 0, odd, np.float64(1.5)) is None       # a NumPy scalar
    assert len(select_calls) == 5
    # layouts that differ from c's, or that do not fill their memory, or run backwards
    declined = [(c, y.copy(), zero), (c, zero, np.ascontiguousarray(y)),
                (c[:, ::2], y[:, ::2], zero), (c[::-1], y[::-1], zero)]
    for args in declined:
        assert _onepass.select(*args) is None
        assert np.array_equal(_bits(E.select.impl(*args)), _bits(np.where(*args)))
    assert len(select_calls) == 5


def test_select_without_the_kernel_blends_in_numpy(monkeypatch, select_calls):
    monkeypatch.setattr(_onepass, "_selects", {})
    monkeypatch.setattr(_onepass, "_unavailable", [True])
    n = 4099
    c = np.random.default_rng(8).random(n) < 0.5
    x, y = _edge_values(np.float32, n, 9), _edge_values(np.float32, n, 10)
    assert _onepass.select(c, x, y) is None
    assert np.array_equal(_bits(E.select.impl(c, x, y)), _bits(np.where(c, x, y)))
    assert select_calls == []


@pytest.fixture
def relu_calls(monkeypatch):
    """("relu" or "grad", dtype) of the ReLU kernels' calls while the test runs."""
    calls = []
    if _onepass.available():
        kernels = {}
        for dt, (fwd, grad) in _onepass._relus.items():
            kernels[dt] = (lambda *a, _f=fwd, _d=dt: (calls.append(("relu", _d)), _f(*a))[1],
                           lambda *a, _f=grad, _d=dt: (calls.append(("grad", _d)), _f(*a))[1])
        monkeypatch.setattr(_onepass, "_relus", kernels)
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", [True, False])
@pytest.mark.parametrize("layout", ["c", "transposed", "sliced"])
def test_relu_and_its_gradient_match_pytorch(dtype, kernel, layout, monkeypatch, relu_calls,
                                             select_calls):
    """ReLU in one pass (or, without the kernels or for input that does not fill its
    memory, NumPy's comparison and select): -0.0 stays -0.0, NaN (either sign) passes, the
    gradient is 0 at +-0 and 1 at NaN, and a NaN or infinite incoming gradient stays out
    of the zeroed entries. A transposed input gives a transposed result, as in PyTorch."""
    pt = pytest.importorskip("torch")
    if not kernel:
        for name in ("_selects", "_relus"):
            monkeypatch.setattr(_onepass, name, {})
        monkeypatch.setattr(_onepass, "_unavailable", [True])
    a = _edge_values(dtype, 96 * 70, 11).reshape(96, 70)
    g = _edge_values(dtype, a.size, 12).reshape(a.shape)
    for relu in ("F", "module"):
        w, ref_w = torch.tensor(a, requires_grad=True), pt.tensor(a, requires_grad=True)
        h, ref_h = w * 1, ref_w * 1
        if layout == "transposed":
            h, ref_h = h.t(), ref_h.t()
        elif layout == "sliced":
            h, ref_h = h[:, ::2], ref_h[:, ::2]
        f = torch.nn.functional.relu if relu == "F" else torch.nn.ReLU()
        out = f(h)
        ref = pt.nn.functional.relu(ref_h)
        assert out.grad_fn.name() == ref.grad_fn.name() == "ReluBackward0"
        assert np.array_equal(_bits(out.detach().numpy()), _bits(ref.detach().numpy()))
        assert out.stride() == ref.stride()
        for lib_g in (torch.tensor(g), pt.tensor(g)):   # the gradient in the output's layout
            gg = lib_g.t() if layout == "transposed" else lib_g[:, ::2] if layout == "sliced" \
                else lib_g
            (out if isinstance(gg, torch.Tensor) else ref).backward(gg)
        assert np.array_equal(_bits(w.grad.numpy()), _bits(ref_w.grad.numpy()))
    fast = kernel and layout != "sliced" and _onepass.available()
    assert relu_calls == ([("relu", np.dtype(dtype)), ("grad", np.dtype(dtype))] * 2
                          if fast else [])


def test_relu_of_small_and_other_tensors():
    pt = pytest.importorskip("torch")
    for a in (np.float32(-0.0), np.float64(np.nan), np.float32(3.0)):    # 0-d tensors
        w, ref_w = torch.tensor(a, requires_grad=True), pt.tensor(a, requires_grad=True)
        out, ref = torch.relu(w), pt.relu(ref_w)
        assert np.array_equal(_bits(np.asarray(out.detach().numpy())),
                              _bits(np.asarray(ref.detach().numpy())))
        out.backward()
        ref.backward()
        assert np.array_equal(_bits(np.asarray(w.grad.numpy())), _bits(np.asarray(ref_w.grad.numpy())))
    h = _edge_values(np.float16, 40, 13)                               # no kernel: NumPy
    assert np.array_equal(_bits(torch.relu(torch.tensor(h)).numpy()),
                          _bits(pt.relu(pt.tensor(h)).numpy()))
    i = np.arange(-3, 4)
    assert torch.relu(torch.tensor(i)).tolist() == pt.relu(pt.tensor(i)).tolist()


def test_relu_saves_its_output_as_pytorch_does():
    # ReluBackward0 reads the output: an in-place write to it is an error at backward, a
    # write to the input is not; the input, when large, is not kept (a stand-in).
    pt = pytest.importorskip("torch")
    for lib in (torch, pt):
        x = lib.ones(200, 100, requires_grad=True)
        h = x * 2
        y = lib.relu(h)
        with lib.no_grad():
            h.add_(1)
        y.sum().backward()
        assert x.grad.sum().item() == 2 * 200 * 100
        y = lib.relu(x * 2)
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    x = torch.ones(200, 100, requires_grad=True)
    node = torch.relu(x * 2).grad_fn
    assert node.saved[0]._data.strides == (0, 0)        # the input: not kept


def test_relu_second_order_matches_pytorch():
    pt = pytest.importorskip("torch")
    a = np.random.default_rng(14).standard_normal((70, 80))
    out = []
    for lib in (torch, pt):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad((lib.relu(x) ** 2).sum(), x, create_graph=True)
        (g * g).sum().backward()
        out.append((g.detach().numpy(), x.grad.numpy()))
    for o, t in zip(*out):
        np.testing.assert_allclose(o, t, rtol=1e-14)
    for v in (2.0, -1.0, 0.0, -0.0, np.nan):          # 0-d, at and around the kink
        res = []
        for lib in (torch, pt):
            x = lib.tensor(v, requires_grad=True)
            (g,) = lib.autograd.grad(lib.relu(x * 3) ** 2, x, create_graph=True)
            (gg,) = lib.autograd.grad(g, x)
            res.append((g.item(), gg.item()))
        np.testing.assert_array_equal(*res)


def test_empty_arrays_are_left_to_numpy(select_calls, relu_calls, kernel_calls):
    # An empty array has no buffer to point a kernel at: each entry point declines.
    for shape in ((0,), (0, 3)):
        e = np.zeros(shape, np.float32)
        assert _onepass.select(np.zeros(shape, bool), e, e) is None
        assert _onepass.relu(e) is None and _onepass.relu_grad(e, e) is None
        assert _onepass.axpy(e.copy(), e, 2.0) is False
        x = torch.zeros(shape)
        assert x.add_(torch.zeros(shape), alpha=2.0) is x and x.shape == shape
        w = torch.zeros(shape, requires_grad=True)
        y = torch.relu(w * 1)
        y.sum().backward()
        assert y.shape == shape and w.grad.shape == shape
    assert select_calls == relu_calls == kernel_calls == []


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(128, 64), (512, 128), (1, 1), (33, 65), (100, 1), (1, 77)])
def test_transpose_add_gives_numpys_bits(shape, dtype):
    # Note [Rows before columns in linear]: p.T + b, C-contiguous, tiles off the 32 grid
    n, m = shape
    p = _edge_values(dtype, n * m + 8, 11)[:n * m].reshape(n, m)   # (at least 8 values)
    b = _edge_values(dtype, n + 8, 12)[:n]
    out = _onepass.transpose_add(p, b)
    assert out.shape == (m, n) and out.flags.c_contiguous
    with np.errstate(all="ignore"):
        ref = np.ascontiguousarray(p.T + b)
    assert np.array_equal(_bits(out), _bits(ref))


def test_transpose_add_declines_what_it_does_not_take():
    p = np.ones((4, 3), np.float32)
    for q, b in ((p, np.ones(4)),                                # another dtype
                 (p.T.copy().T, np.ones(4, np.float32)),         # not C-contiguous
                 (p, np.ones(3, np.float32)),                    # b's length is not p's rows
                 (p, np.ones(8, np.float32)[::2]),               # b strided
                 (np.ones((0, 3), np.float32), np.ones(0, np.float32)),   # empty
                 (np.ones((2, 2, 2), np.float32), np.ones(2, np.float32)),
                 (p.astype(np.int32), np.ones(4, np.int32))):
        assert _onepass.transpose_add(q, b) is None


def test_linear_without_the_kernel_gives_the_same_bits(monkeypatch):
    # the fallback of Note [Rows before columns in linear]: NumPy's add and transposed copy
    rng = np.random.default_rng(13)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((6, 40), (50, 40), (50,)))
    F = torch.nn.functional
    with_kernel = F.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy()
    monkeypatch.setattr(_onepass, "_tadds", {})
    monkeypatch.setattr(_onepass, "_unavailable", [True])
    without = F.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy()
    assert without.flags.c_contiguous
    assert np.array_equal(_bits(with_kernel), _bits(without))
    assert np.array_equal(_bits(without), _bits(x @ w.T + b))
