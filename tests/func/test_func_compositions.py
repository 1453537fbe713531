"""Transforms nested in every order, checked against loops, closed forms and finite differences."""
import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

F64 = torch.float64


def f_scalar(x):
    return (x.sin() * x.exp()).sum() + (x ** 3).sum()


def closed_grad(x):
    return x.cos() * x.exp() + x.sin() * x.exp() + 3 * x ** 2


def closed_hess_diag(x):
    return 2 * x.cos() * x.exp() + 6 * x


def fd_grad(f, x, eps=1e-6):
    g = np.zeros(x.shape)
    base = x.numpy()
    for i in np.ndindex(*x.shape):
        xp, xm = base.copy(), base.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(torch.tensor(xp)).item() - f(torch.tensor(xm)).item()) / (2 * eps)
    return g


def test_grad_matches_closed_form_and_finite_differences():
    x = torch.randn(4, dtype=F64)
    g = grad(f_scalar)(x)
    assert torch.allclose(g, closed_grad(x))
    np.testing.assert_allclose(g.numpy(), fd_grad(f_scalar, x), rtol=1e-6, atol=1e-8)


def test_grad_of_grad_and_hessian_variants_agree():
    x = torch.randn(4, dtype=F64)
    expected = torch.diag(closed_hess_diag(x))
    for h in (hessian(f_scalar)(x), jacrev(jacrev(f_scalar))(x), jacfwd(jacrev(f_scalar))(x),
              jacfwd(jacfwd(f_scalar))(x), jacrev(jacfwd(f_scalar))(x)):
        assert torch.allclose(h, expected)
    # grad(grad) of a scalar-to-scalar function
    y = torch.tensor(0.3, dtype=F64)
    assert torch.allclose(grad(grad(lambda t: t.sin() * t))(y), 2 * y.cos() - y * y.sin())


def test_vmap_of_grad_equals_loop():
    xs = torch.randn(6, 4, dtype=F64)
    per = vmap(grad(f_scalar))(xs)
    loop = torch.stack([grad(f_scalar)(x) for x in xs])
    assert torch.allclose(per, loop)


def test_grad_of_vmap():
    xs = torch.randn(5, 3, dtype=F64)
    g = grad(lambda a: vmap(lambda r: (r.sin() * r).sum())(a).sum())(xs)
    assert torch.allclose(g, xs.sin() + xs * xs.cos())


def test_vmap_of_hessian_equals_loop():
    xs = torch.randn(3, 4, dtype=F64)
    hs = vmap(hessian(f_scalar))(xs)
    for x, h in zip(xs, hs):
        assert torch.allclose(h, torch.diag(closed_hess_diag(x)))


def test_vmap_of_vmap_of_grad():
    xs = torch.randn(2, 3, 4, dtype=F64)
    out = vmap(vmap(grad(f_scalar)))(xs)
    assert out.shape == (2, 3, 4)
    assert torch.allclose(out, closed_grad(xs))


def test_jvp_of_vjp_is_hessian_vector_product():
    x = torch.randn(4, dtype=F64)
    v = torch.randn(4, dtype=F64)

    def g(x):
        _, fn = vjp(f_scalar, x)
        return fn(torch.ones((), dtype=F64))[0]
    _, hv = jvp(g, (x,), (v,))
    assert torch.allclose(hv, closed_hess_diag(x) * v)


def test_vjp_and_jvp_agree_on_a_matrix_function():
    W = torch.randn(3, 4, dtype=F64)
    f = lambda x: (W @ x).tanh()  # noqa: E731
    x, u, v = torch.randn(4, dtype=F64), torch.randn(3, dtype=F64), torch.randn(4, dtype=F64)
    _, vjp_fn = vjp(f, x)
    _, jv = jvp(f, (x,), (v,))
    assert abs((vjp_fn(u)[0] * v).sum().item() - (u * jv).sum().item()) < 1e-12


def test_jacrev_and_jacfwd_of_pytrees_follow_pytorch_layout():
    def f(a, b):
        return {"s": (a * b).sum(), "p": a * 2}
    a, b = torch.randn(3, dtype=F64), torch.randn(3, dtype=F64)
    jr = jacrev(f, argnums=(0, 1))(a, b)
    jf = jacfwd(f, argnums=(0, 1))(a, b)
    assert jr["s"][0].shape == (3,) and jr["p"][1].shape == (3, 3)
    for k in ("s", "p"):
        for i in range(2):
            assert torch.allclose(jr[k][i], jf[k][i])
    assert torch.allclose(jr["s"][0], b) and torch.allclose(jr["p"][0], 2 * torch.eye(3, dtype=F64))


def test_jacrev_chunk_size_gives_same_result():
    W = torch.randn(7, 5, dtype=F64)
    f = lambda x: (W @ x).sin()  # noqa: E731
    x = torch.randn(5, dtype=F64)
    assert torch.allclose(jacrev(f, chunk_size=2)(x), jacrev(f)(x))


def test_vmap_in_dims_out_dims_and_chunks():
    x = torch.randn(3, 5)
    y = torch.randn(5, 3)
    out = vmap(lambda a, b: a * b, in_dims=(1, 0), out_dims=1)(x, y)
    assert torch.allclose(out, x * y.t())
    a = torch.randn(4, 2)
    b = torch.randn(2)
    r = vmap(lambda u, v: u + v, in_dims=(0, None))(a, b)
    assert torch.allclose(r, a + b)
    r2 = vmap(lambda u: u.sum(), in_dims=1)(a)
    assert torch.allclose(r2, a.sum(0))
    r3 = vmap(lambda u: (u, u * 2), out_dims=(0, 1))(a)
    assert torch.allclose(r3[1], (a * 2).t())
    r4 = vmap(lambda u: u.exp(), chunk_size=3)(a)
    assert torch.allclose(r4, a.exp())
    nested = vmap(lambda d: d["x"] * d["y"], in_dims=({"x": 0, "y": None},))({"x": a, "y": b})
    assert torch.allclose(nested, a * b)
    unbatched = vmap(lambda u: torch.ones(2), out_dims=0)(a)
    assert unbatched.shape == (4, 2)
    kw = vmap(lambda u, scale=1.0: u * scale)(a, scale=3.0)
    assert torch.allclose(kw, a * 3)


def test_vmap_negative_in_dim():
    a = torch.randn(2, 6)
    assert torch.allclose(vmap(lambda r: r * 2, in_dims=-1)(a), (a * 2).t())


def test_closure_over_tensor_requiring_grad_backprops_through_transform():
    w = torch.randn(3, dtype=F64, requires_grad=True)
    xs = torch.randn(4, 3, dtype=F64)
    out = vmap(lambda x: (x * w).sin().sum())(xs).sum()
    out.backward()
    assert torch.allclose(w.grad, (xs * (xs * w.detach()).cos()).sum(0))
    # grad inside, eager autograd outside: d/dw of grad_x
    w.grad = None
    x = torch.randn(3, dtype=F64)
    gx = grad(lambda x: (x * w).sin().sum())(x)   # = w * cos(x*w)
    gx.sum().backward()
    wd = w.detach()
    assert torch.allclose(w.grad, (x * wd).cos() - wd * x * (x * wd).sin())


def test_maml_batched_inner_loop_matches_loop():
    torch.manual_seed(0)
    params = {"w": torch.randn(1, 8, dtype=F64) * 0.5, "b": torch.zeros(8, dtype=F64),
              "v": torch.randn(8, 1, dtype=F64) * 0.5}

    def net(p, x):
        return (x @ p["w"] + p["b"]).tanh() @ p["v"]

    def loss(p, x, y):
        return ((net(p, x) - y) ** 2).mean()

    def adapt(p, x, y, steps=3, lr=0.1):
        for _ in range(steps):
            g = grad(loss)(p, x, y)
            p = {k: p[k] - lr * g[k] for k in p}
        return p

    def task_loss(p, xs, ys, xq, yq):
        return loss(adapt(p, xs, ys), xq, yq)

    xs = torch.randn(4, 5, 1, dtype=F64)
    ys = xs.sin()
    xq = torch.randn(4, 5, 1, dtype=F64)
    yq = xq.sin()
    batched = vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(params, xs, ys, xq, yq)
    loop = torch.stack([task_loss(params, xs[i], ys[i], xq[i], yq[i]) for i in range(4)])
    assert torch.allclose(batched, loop)
    meta_grad = grad(lambda p: vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(p, xs, ys, xq, yq).mean())(params)
    loop_grad = [grad(task_loss)(params, xs[i], ys[i], xq[i], yq[i]) for i in range(4)]
    for k in params:
        assert torch.allclose(meta_grad[k], sum(g[k] for g in loop_grad) / 4)


def test_randomness_policies():
    x = torch.zeros(4, 3)
    diff = vmap(lambda r: r + torch.rand(3), randomness="different")(x)
    same = vmap(lambda r: r + torch.rand(3), randomness="same")(x)
    assert not torch.allclose(diff[0], diff[1])
    assert torch.allclose(same[0], same[1]) and torch.allclose(same[2], same[3])
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda r: r + torch.rand(3))(x)


def test_inplace_on_tensor_derived_from_batched_input():
    x = torch.randn(4, 3)

    def f(r):
        y = r.clone()
        y.mul_(2)
        y[0] = 7.0
        return y
    out = vmap(f)(x)
    expected = x * 2
    expected[:, 0] = 7.0
    assert torch.allclose(out, expected)


def test_grad_with_aux_and_argnums_tuple():
    x, y = torch.randn(3, dtype=F64), torch.randn(3, dtype=F64)
    (gx, gy), aux = grad(lambda a, b: ((a * b).sum(), a + b), argnums=(0, 1), has_aux=True)(x, y)
    assert torch.allclose(gx, y) and torch.allclose(gy, x) and torch.allclose(aux, x + y)
    g, (value, aux2) = torch.func.grad_and_value(lambda a: ((a ** 2).sum(), 5), has_aux=True)(x)
    assert torch.allclose(g, 2 * x) and torch.allclose(value, (x ** 2).sum()) and aux2 == 5


def test_linearize_matches_jvp():
    x = torch.randn(3, dtype=F64)
    out, jvp_fn = torch.func.linearize(torch.sin, x)
    v = torch.randn(3, dtype=F64)
    assert torch.allclose(out, x.sin()) and torch.allclose(jvp_fn(v), x.cos() * v)


def test_writes_into_tensors_created_inside_the_transform():
    xs = torch.randn(4, 3)

    def f(x):
        out = torch.zeros(3)
        out[0] = x.sum()
        out[1:].copy_(x[1:] * 2)
        return out
    expected = torch.zeros(4, 3)
    expected[:, 0] = xs.sum(1)
    expected[:, 1:] = xs[:, 1:] * 2
    assert torch.allclose(vmap(f)(xs), expected)

    def g(x):
        out = torch.zeros(3)
        out[0] = (x * x).sum()
        return out.sum()
    assert torch.allclose(grad(g)(xs[0]), 2 * xs[0])
    assert torch.allclose(vmap(grad(g))(xs), 2 * xs)
