"""numtorch._numpy beyond the corpus: the ndarray box, NumPy's protocols on it, wrap_numpy
with autograd / vmap / make_graph, random streams, and the FAQ's NumPy examples."""
import numpy as np
import pytest

import numtorch as torch
import numtorch._numpy as tnp
from numtorch._numpy import wrap_numpy
from numtorch.func import grad, vmap, make_graph


def test_ndarray_attributes_follow_numpy():
    a = tnp.zeros((2, 3))
    assert (a.shape, a.dtype, a.ndim, a.size, a.T.shape) == ((2, 3), np.float64, 2, 6, (3, 2))
    assert a.itemsize == 8 and a.nbytes == 48 and len(a) == 2
    assert isinstance(a.tensor, torch.Tensor) and a.tensor.dtype is torch.float64
    assert np.asarray(a).dtype == np.float64 and np.asarray(a).shape == (2, 3)


def test_scalars_are_zero_d_arrays():
    a = tnp.arange(6).reshape(2, 3)
    s = tnp.sum(a)
    assert isinstance(s, tnp.ndarray) and s.ndim == 0 and s.dtype == np.int64
    assert int(s) == 15 and a[1, 2].item() == 5 and float(a.mean()) == 2.5


def test_views_write_through_and_negative_steps_copy():
    a = tnp.arange(6.0).reshape(2, 3)
    a[1][0] = 10           # basic indexing is a view, as in NumPy
    a.T[0, 0] = -1
    r = a[:, ::-1]         # a copy (Note [ndarray is a Tensor box])
    r[0, 0] = 99
    np.testing.assert_array_equal(np.asarray(a), [[-1, 1, 2], [10, 4, 5]])
    a[0, ::-1] = [7, 8, 9]  # but assignment through a negative step reaches a
    np.testing.assert_array_equal(np.asarray(a)[0], [9, 8, 7])


def test_plain_numpy_functions_dispatch_to_numtorch_numpy():
    a = tnp.asarray(np.arange(6.0).reshape(2, 3))
    out = np.sum(np.sin(a) * 2, axis=1)   # plain NumPy on our arrays (NEP 13/18)
    assert isinstance(out, tnp.ndarray)
    np.testing.assert_allclose(np.asarray(out), np.sum(np.sin(np.arange(6.0).reshape(2, 3)) * 2, 1))
    assert isinstance(np.arange(3.0) + tnp.ones(3), tnp.ndarray)  # NumPy defers to us
    with pytest.raises(TypeError, match="numpy.*not supported"):
        np.polyfit(a[0], a[1], 1)


def test_bad_arguments_have_clear_errors():
    with pytest.raises(np.exceptions.AxisError):
        tnp.sum(tnp.ones((2, 2)), axis=(0, 5))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        tnp.sum(tnp.ones((2, 2)), axis=(0, 0))
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(2,\) \(3,\)"):
        tnp.ones(2) + tnp.ones(3)
    with pytest.raises(TypeError, match="uint64"):
        tnp.sum(tnp.ones(3, dtype=np.uint8))  # NumPy sums uint8 in uint64, which numtorch lacks


def test_grad_flows_through_numpy_code():
    def f(x):
        a = tnp.ndarray(x)
        return tnp.sum(tnp.sin(a) * a ** 2, axis=(-2, -1)).tensor
    x = torch.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    g = grad(f)(x)
    xn = x.numpy()
    np.testing.assert_allclose(g.numpy(), np.cos(xn) * xn ** 2 + 2 * xn * np.sin(xn), rtol=1e-12)


def test_faq_wrap_numpy_backward_reaches_x_grad():
    @wrap_numpy
    def numpy_fn(X, Y):
        return np.mean(np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1)))

    X = torch.randn(64, 8, dtype=torch.float64, requires_grad=True)
    Y = torch.randn(64, 8, dtype=torch.float64)
    Z = numpy_fn(X, Y)
    assert isinstance(Z, torch.Tensor) and Z.ndim == 0
    Z.backward()
    # d/dX[b,i] of mean_b sum_ij X[b,i] Y[b,j] = sum_j Y[b,j] / 64
    expected = np.repeat(Y.numpy().sum(1, keepdims=True), 8, axis=1) / 64
    np.testing.assert_allclose(X.grad.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(Z.item(), np.mean(np.sum(
        X.detach().numpy()[:, :, None] * Y.numpy()[:, None, :], axis=(-2, -1))), rtol=1e-12)


def test_faq_wrap_numpy_with_a_print_inside():
    @wrap_numpy
    def numpy_fn(X, Y):
        prod = X[:, :, None] * Y[:, None, :]
        print("oops, a graph break!")
        return np.sum(prod, axis=(-2, -1))

    X, Y = torch.randn(32, 4), torch.randn(32, 4)
    Z = numpy_fn(X, Y)
    assert isinstance(Z, torch.Tensor) and Z.dtype is torch.float32
    np.testing.assert_allclose(Z.numpy(), np.sum(X.numpy()[:, :, None] * Y.numpy()[:, None, :],
                                                 axis=(-2, -1)), rtol=1e-5)


def test_wrap_numpy_under_vmap_and_make_graph():
    f = wrap_numpy(lambda x, y: np.sum(x[:, None] * y[None, :]) + 1.5)
    xs, ys = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)
    out = vmap(f)(xs, ys)
    np.testing.assert_allclose(out.numpy(), xs.numpy().sum(1) * ys.numpy().sum(1) + 1.5,
                               rtol=1e-12)
    g = make_graph(f)(xs[0], ys[0])
    src = str(g)
    assert "prims.mul" in src and "reduce_sum" in src
    assert "f64[]" in src  # NumPy's dtype survives: float64 + Python float stays float64


def test_wrap_numpy_rejects_non_callables():
    with pytest.raises(TypeError, match="callable"):
        wrap_numpy(3)


def test_random_uses_numpys_streams():
    tnp.random.seed(7)
    ours = np.asarray(tnp.random.rand(3)), np.asarray(tnp.random.randn(2, 2))
    rs = np.random.RandomState(7)
    np.testing.assert_array_equal(ours[0], rs.rand(3))
    np.testing.assert_array_equal(ours[1], rs.randn(2, 2))
    g, ref = tnp.random.default_rng(3), np.random.default_rng(3)
    got = g.normal(size=4)
    assert isinstance(got, tnp.ndarray)
    np.testing.assert_array_equal(np.asarray(got), ref.normal(size=4))
    np.testing.assert_array_equal(np.asarray(g.integers(0, 10, 5)), ref.integers(0, 10, 5))


def test_methods_and_inplace_sort():
    a = tnp.array([[3, 1, 2], [9, 7, 8]])
    a.sort(axis=1)
    np.testing.assert_array_equal(np.asarray(a), [[1, 2, 3], [7, 8, 9]])
    assert a.astype(np.float32).dtype == np.float32
    assert a.copy() is not a and a.flatten().shape == (6,)
    assert a.tolist() == [[1, 2, 3], [7, 8, 9]]


def test_flip_does_not_alias_its_input():
    x = torch.arange(4.0)
    y = torch.flip(x, (0,))
    y[0] = 99.0
    np.testing.assert_array_equal(x.numpy(), [0.0, 1.0, 2.0, 3.0])


def test_tensor_interop_and_numtorch_numpy_share_one_implementation(monkeypatch):
    from numtorch._ops import numpy_api
    calls = []
    shared = numpy_api.FUNCTIONS[np.sum]

    def spy(*args, **kwargs):
        calls.append(type(args[0]).__name__)
        return shared(*args, **kwargs)
    monkeypatch.setitem(numpy_api.FUNCTIONS, np.sum, spy)
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    via_tensor = np.sum(torch.tensor(x), axis=0)         # PyTorch-facing: a Tensor
    via_numpy = tnp.sum(tnp.asarray(x), axis=0)          # NumPy-facing: an ndarray
    assert calls == ["Tensor", "Tensor"]                 # both ran the shared entry
    assert isinstance(via_tensor, torch.Tensor) and isinstance(via_numpy, tnp.ndarray)
    np.testing.assert_array_equal(via_tensor.numpy(), np.asarray(via_numpy))
    # The documented difference is the dtype policy: NumPy sums int32 in int64 too, but
    # mean of ints is float64 in NumPy and the default dtype (float32) for Tensor callers.
    assert tnp.mean(tnp.asarray(x)).dtype == np.float64
    assert np.mean(torch.tensor(x)).dtype is torch.float32
