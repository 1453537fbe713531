"""`Tensor.T` of an eager matrix (Note [Transposing an eager matrix], _ops/shape.py) and the
two-matrix GEMM of dot_general (Note [Small GEMMs], _prims/contraction.py): each shortcut
gives what the general path gives: values, views, version counters, nodes and gradients."""
import numpy as np
import pytest

import numtorch as torch
from numtorch._ops import shape as S
from numtorch._prims import contraction as C

torch_ref = pytest.importorskip("torch")


def _pair(shape=(3, 4), requires_grad=True, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return (torch.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def test_fast_transpose_is_the_general_paths_view():
    for requires_grad in (True, False):
        w, w2 = _pair(requires_grad=requires_grad)
        fast, general = w.T, S._reversed_dims(w2)
        assert fast.shape == general.shape == (4, 3)
        np.testing.assert_array_equal(fast.detach().numpy(), general.detach().numpy())
        for t, src in ((fast, w), (general, w2)):
            assert t._base is src and t._version_counter is src._version_counter
            assert np.shares_memory(t._data, src._data)
            assert t.requires_grad == requires_grad
        assert (fast.grad_fn is None) == (general.grad_fn is None) == (not requires_grad)
        if requires_grad:
            assert fast.grad_fn.name() == general.grad_fn.name() == "PermuteBackward0"
            assert fast.grad_fn.params == general.grad_fn.params
            assert type(fast.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
            assert fast.grad_fn.next_functions[0][0].variable is w


def test_fast_transpose_matches_pytorch_gradients_to_second_order():
    a = np.random.default_rng(1).standard_normal((3, 4))
    x = np.random.default_rng(2).standard_normal((5, 4))
    results = []
    for lib in (torch, torch_ref):
        w = lib.tensor(a, requires_grad=True)
        h = lib.tensor(x)
        y = lib.tanh(h @ w.T)           # (5, 3)
        (g,) = lib.autograd.grad(y.sum(), [w], create_graph=True)
        (g2,) = lib.autograd.grad((g ** 2).sum(), [w])
        results.append((y.detach().numpy(), g.detach().numpy(), g2.numpy(),
                        y.grad_fn.next_functions[0][0].next_functions[1][0].name()))
    (y, g, g2, name), (ty, tg, tg2, tname) = results
    np.testing.assert_allclose(y, ty, rtol=1e-12)
    np.testing.assert_allclose(g, tg, rtol=1e-12)
    np.testing.assert_allclose(g2, tg2, rtol=1e-10)
    assert name == "PermuteBackward0" == tname


def test_writes_through_the_fast_transpose_are_seen_and_caught():
    w = torch.zeros(2, 3)
    t = w.T
    t[0, 1] = 5.0                       # writes w[1, 0]
    assert w[1, 0].item() == 5.0 and w._version_counter.value == 1
    # a view of a view composes view functions (Note [Views]) and still writes the root
    u = w[:, 1:].T
    assert u._base is w
    u.mul_(2)
    assert w[1, 0].item() == 5.0 and w[0, 1].item() == 0.0
    # modifying the transposed weight after use is caught like any saved input
    p = torch.ones(3, 3, requires_grad=True)
    q = p * 1
    r = q.T
    y = (r * r).sum()
    with torch.no_grad():
        q.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_fast_transpose_under_no_grad_and_for_other_ranks():
    w = torch.ones(2, 3, requires_grad=True)
    with torch.no_grad():
        t = w.T
    assert t.grad_fn is None and not t.requires_grad and t._base is w
    v = torch.arange(3.0, requires_grad=True)
    assert v.T is v                     # 1-D: reversing one dim is the identity
    m = torch.ones(2, 3, 4, requires_grad=True)
    assert m.T.shape == (4, 3, 2) and m.T.grad_fn.name() == "PermuteBackward0"
    meta = torch.empty(2, 3, device="meta")
    assert meta.T.shape == (3, 2) and meta.T.device.type == "meta"


def test_transforms_take_the_general_path():
    w = torch.randn(3, 4)
    x = torch.randn(5, 4)
    g = torch.func.grad(lambda w: (x @ w.T).sin().sum())(w)
    np.testing.assert_allclose(g.numpy(), (torch.cos(x @ w.T).T @ x).numpy(), rtol=1e-6)
    ws = torch.randn(2, 3, 4)
    out = torch.vmap(lambda w: x @ w.T)(ws)
    np.testing.assert_allclose(out.numpy(), torch.stack([x @ ws[0].T, x @ ws[1].T]).numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((10, 40), (40, 40)), ((10, 1), (1, 40)),
                                    ((10, 40), (40, 1)), ((1, 7), (7, 1)), ((0, 3), (3, 2))])
def test_small_gemm_is_matmuls_value(dtype, shapes):
    rng = np.random.default_rng(3)
    (m, k), (_, n) = shapes
    x = rng.standard_normal((m, k)).astype(dtype)
    y = rng.standard_normal((k, n)).astype(dtype)
    params = dict(contracting=((1,), (0,)), batch=((), ()))
    for xa, ya in ((x, y), (np.asfortranarray(x), np.asfortranarray(y))):
        out = C._dot_impl(xa, ya, **params)
        np.testing.assert_array_equal(out, np.matmul(xa, ya))
        assert out.dtype == dtype and out.shape == (m, n)
    # the other contraction layouts: x^T y (weight gradients) and x y^T (x @ W.T)
    xt, yt = x.T.copy(), y.T.copy()
    np.testing.assert_array_equal(
        C._dot_impl(xt, y, contracting=((0,), (0,)), batch=((), ())), np.matmul(xt.T, y))
    np.testing.assert_array_equal(
        C._dot_impl(x, yt, contracting=((1,), (1,)), batch=((), ())), np.matmul(x, yt.T))
