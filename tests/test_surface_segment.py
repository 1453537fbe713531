"""The windows (numtorch/_ops/_surface_signal.py) and mode, scatter_reduce,
unique_consecutive (numtorch/_ops/_surface_segment.py) against PyTorch: the ties, gradients,
edges and errors the OpInfo matrix does not sweep."""
import math

import numpy as np
import pytest

import numtorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _same(ours, theirs, **kw):
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), equal_nan=True,
                               **kw)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
def test_windows_match_torch(name):
    for n in (0, 1, 2, 5, 16):
        for periodic in (True, False):
            for dtype in (None, "float64"):
                kw = {} if dtype is None else dict(dtype=getattr(numtorch, dtype))
                tkw = {} if dtype is None else dict(dtype=getattr(torch, dtype))
                _same(getattr(numtorch, name)(n, periodic, **kw),
                      getattr(torch, name)(n, periodic, **tkw), rtol=1e-6, atol=1e-6)
    w = getattr(numtorch, name)(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf


def test_window_parameters_match_torch():
    # float32 windows are computed in float64 and rounded once (PyTorch computes in float32)
    tol = dict(rtol=1e-6, atol=1e-6)
    _same(numtorch.hamming_window(6, True, 0.3, 0.5), torch.hamming_window(6, True, 0.3, 0.5),
          **tol)
    _same(numtorch.hamming_window(6, True, alpha=0.3), torch.hamming_window(6, True, alpha=0.3), **tol)
    _same(numtorch.kaiser_window(7, False, 3.0), torch.kaiser_window(7, False, 3.0), **tol)


def test_mode_ties_and_gradient_match_torch():
    x = [[3, 1, 3, 1, 2], [5, 5, 4, 4, 4], [2, 2, 2, 7, 7]]
    for dim, keepdim in ((1, False), (0, True), (-1, True)):
        ours = numtorch.mode(numtorch.tensor(x), dim, keepdim)
        theirs = torch.mode(torch.tensor(x), dim, keepdim)
        _same(ours.values, theirs.values)
        _same(ours.indices, theirs.indices)
    a = numtorch.tensor([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0]], requires_grad=True)
    b = torch.tensor([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0]], requires_grad=True)
    numtorch.mode(a).values.sum().backward()
    torch.mode(b).values.sum().backward()
    _same(a.grad, b.grad)
    _same(numtorch.mode(numtorch.zeros(0, 3), 1).values, torch.mode(torch.zeros(0, 3), 1).values)
    assert numtorch.tensor([3.0, 3.0, 1.0]).mode().values.item() == 3.0


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients_match_torch(reduce, include_self):
    # small integers in float64: ties between self and src and among src values, and zeros
    # for prod; PyTorch's backward needs src and index of the same shape
    for dim, ishape in ((1, (3, 5)), (0, (2, 4))):
        x = RNG.integers(-2, 3, (3, 4)).astype(np.float64)
        idx = RNG.integers(0, 3 if dim == 0 else 4, ishape)
        src = RNG.integers(-2, 3, ishape).astype(np.float64)
        grads = []
        for lib in (numtorch, torch):
            a, s = lib.tensor(x, requires_grad=True), lib.tensor(src, requires_grad=True)
            out = a.scatter_reduce(dim, lib.tensor(idx), s, reduce, include_self=include_self)
            (out * lib.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
            grads.append((out, a.grad, s.grad))
        for ours, theirs in zip(*grads):
            _same(ours, theirs)


def test_scatter_reduce_integers_inplace_and_larger_src_match_torch():
    x = RNG.integers(-5, 6, (3, 4))
    idx = RNG.integers(0, 4, (2, 3))
    src = RNG.integers(-5, 6, (3, 5))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            _same(numtorch.tensor(x).scatter_reduce(1, numtorch.tensor(idx), numtorch.tensor(src),
                                                    reduce, include_self=include_self),
                  torch.tensor(x).scatter_reduce(1, torch.tensor(idx), torch.tensor(src), reduce,
                                                 include_self=include_self))
    a, b = numtorch.zeros(3), torch.zeros(3)
    ra = a.scatter_reduce_(0, numtorch.tensor([0, 0, 2]), numtorch.tensor([1.0, -2.0, 3.0]), "amin",
                           include_self=False)
    b.scatter_reduce_(0, torch.tensor([0, 0, 2]), torch.tensor([1.0, -2.0, 3.0]), "amin",
                      include_self=False)
    assert ra is a
    _same(a, b)


def test_scatter_reduce_nan_propagates_like_torch():
    x = [1.0, 2.0, 3.0]
    src = [math.nan, 5.0, 0.0]
    for reduce in ("amax", "amin", "prod", "sum"):
        _same(numtorch.scatter_reduce(numtorch.tensor(x), 0, numtorch.tensor([0, 0, 1]),
                                      numtorch.tensor(src), reduce),
              torch.scatter_reduce(torch.tensor(x), 0, torch.tensor([0, 0, 1]), torch.tensor(src),
                                   reduce))


def test_unique_consecutive_matches_torch():
    x = [[1, 1, 2], [1, 1, 2], [3, 3, 3], [1, 1, 2]]
    for kw in (dict(), dict(return_inverse=True, return_counts=True),
               dict(dim=0, return_inverse=True, return_counts=True), dict(dim=1, return_counts=True)):
        ours = numtorch.unique_consecutive(numtorch.tensor(x), **kw)
        theirs = torch.unique_consecutive(torch.tensor(x), **kw)
        for a, b in zip(ours if isinstance(ours, tuple) else (ours,),
                        theirs if isinstance(theirs, tuple) else (theirs,)):
            _same(a, b)
    for data, kw in ((5, dict(return_inverse=True, return_counts=True)),
                     ([1.0, math.nan, math.nan], dict(return_counts=True)),
                     (np.zeros((0, 2)), dict(dim=0))):
        ours = numtorch.tensor(data).unique_consecutive(**kw)
        theirs = torch.tensor(data).unique_consecutive(**kw)
        for a, b in zip(ours if isinstance(ours, tuple) else (ours,),
                        theirs if isinstance(theirs, tuple) else (theirs,)):
            _same(a, b)


@pytest.mark.parametrize("call", [
    lambda t: t.hann_window(-1),
    lambda t: t.hamming_window(4, dtype=t.int64),
    lambda t: t.kaiser_window(4.0),
    lambda t: t.blackman_window(3, dtype=t.complex64),
    lambda t: t.mode(t.zeros(2, 0)),
    lambda t: t.mode(t.zeros(2, 3), 2),
    lambda t: t.scatter_reduce(t.ones(4), 0, t.tensor([0, 1]), t.ones(2), "add"),
    lambda t: t.scatter_reduce(t.ones(4), 0, t.tensor([0.0, 1.0]), t.ones(2), "sum"),
    lambda t: t.scatter_reduce(t.ones(4), 0, t.tensor([0, 1]), t.ones(2, dtype=t.float64), "sum"),
    lambda t: t.scatter_reduce(t.ones(4), 0, t.tensor([0, 9]), t.ones(2), "amax"),
    lambda t: t.scatter_reduce(t.ones(4), 0, t.tensor([[0, 1]]), t.ones(2), "sum"),
    lambda t: t.scatter_reduce(t.ones(4), 0, t.tensor([0, 1, 2]), t.ones(2), "sum"),
    lambda t: t.unique_consecutive(t.zeros(2, 0), dim=0),
    lambda t: t.unique_consecutive(t.zeros(0, 0), dim=0),
], ids=["window_negative", "window_int_dtype", "window_float_length", "window_complex",
        "mode_empty", "mode_dim", "reduce_name", "index_dtype", "src_dtype", "index_bounds",
        "index_ndim", "index_larger", "unique_zero_dim", "unique_two_zero_dims"])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(numtorch)
    assert str(ours.value).splitlines()[0][:45] == str(theirs.value).splitlines()[0][:45]
