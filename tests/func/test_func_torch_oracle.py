"""Differential tests: the same torch.func programs in PyTorch and numtorch (skipped without torch)."""
from functools import partial

import numpy as np
import pytest

import numtorch as nt

torch = pytest.importorskip("torch")


def both(fn, *arrays):
    """Run ``fn(lib, *tensors)`` with numtorch and PyTorch on the same float64 data."""
    ours = fn(nt, *[nt.tensor(a) for a in arrays])
    theirs = fn(torch, *[torch.tensor(a) for a in arrays])
    return ours, theirs


def close(a, b, rtol=1e-10, atol=1e-12):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, rtol, atol)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            close(a[k], b[k], rtol, atol)
    else:
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


rng = np.random.default_rng(0)
X = rng.standard_normal((6, 4))
W = rng.standard_normal((4, 3))
V = rng.standard_normal(4)


def loss(lib, w, x):
    return (lib.tanh(x @ w) ** 2).sum() + (w.sin() * w).sum()


@pytest.mark.parametrize("name, program", [
    ("grad", lambda lib, w, x: lib.func.grad(partial(loss, lib))(w, x)),
    ("grad argnums", lambda lib, w, x: lib.func.grad(partial(loss, lib), argnums=(0, 1))(w, x)),
    ("vmap(grad)", lambda lib, w, x: lib.func.vmap(lib.func.grad(partial(loss, lib)), in_dims=(None, 0))(w, x)),
    ("jacrev", lambda lib, w, x: lib.func.jacrev(lambda a: lib.tanh(x @ a))(w)),
    ("jacfwd", lambda lib, w, x: lib.func.jacfwd(lambda a: lib.tanh(x @ a))(w)),
    ("hessian", lambda lib, w, x: lib.func.hessian(lambda a: loss(lib, a, x))(w)),
    ("jacrev(jacrev)", lambda lib, w, x: lib.func.jacrev(lib.func.jacrev(lambda a: loss(lib, a, x)))(w)),
    ("vmap(jacrev)", lambda lib, w, x: lib.func.vmap(lib.func.jacrev(lambda r: lib.tanh(r @ w)))(x)),
    ("vmap(hessian)", lambda lib, w, x: lib.func.vmap(lib.func.hessian(lambda r: (lib.tanh(r @ w) ** 2).sum()))(x)),
    ("jvp", lambda lib, w, x: lib.func.jvp(lambda a: lib.tanh(x @ a), (w,), (w.cos(),))),
    ("vjp", lambda lib, w, x: lib.func.vjp(lambda a: lib.tanh(x @ a), w)[1](x[:, :3].clone())),
    ("grad(grad)", lambda lib, w, x: lib.func.grad(lambda a: lib.func.grad(lambda b: (b.sin() * b).sum())(a).sum())(w)),
    ("softmax per-sample", lambda lib, w, x: lib.func.vmap(lib.func.grad(
        lambda a, r: -(r @ a).log_softmax(-1)[0]), in_dims=(None, 0))(w, x)),
    ("dict params", lambda lib, w, x: lib.func.grad(lambda p: ((x @ p["w"]).relu() * p["s"]).sum())(
        {"w": w, "s": w[0].clone()})),
])
def test_func_program_matches_pytorch(name, program):
    ours, theirs = both(program, W, X)
    close(ours, theirs)


def test_autograd_functional_matches_pytorch():
    f = lambda lib: (lambda a: (a.sin() * a.exp()).sum())  # noqa: E731
    ours = nt.autograd.functional.hessian(f(nt), nt.tensor(V))
    theirs = torch.autograd.functional.hessian(f(torch), torch.tensor(V))
    close(ours, theirs)
    ours = nt.autograd.functional.jacobian(lambda a: a.tanh() * 2, nt.tensor(V))
    theirs = torch.autograd.functional.jacobian(lambda a: a.tanh() * 2, torch.tensor(V))
    close(ours, theirs)


def test_eager_backward_matches_pytorch_with_create_graph():
    def run(lib):
        w = lib.tensor(W, requires_grad=True)
        x = lib.tensor(X)
        y = (lib.tanh(x @ w) ** 2).sum()
        (g,) = lib.autograd.grad(y, w, create_graph=True)
        (g * g).sum().backward()
        return g, w.grad
    close(run(nt), run(torch))
