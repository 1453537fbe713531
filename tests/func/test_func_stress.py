"""Compositionality stress test: every transform nested in every order, depth 2 and 3.

The reference for ``outer(inner(f))`` applies an *independent* version of ``outer`` (central
finite differences for derivative transforms, a Python loop for vmap) to numtorch's own
``inner(f)``. Depth-1 correctness plus this check at every level validates each nesting
inductively, without closed forms for third derivatives.
"""
import itertools

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, jacfwd, jacrev, jvp, vjp, vmap

F64 = torch.float64
EPS = 1e-5


def f(x):
    """R^3 -> R^2, smooth, with cross terms (so no Jacobian is diagonal)."""
    return torch.stack([(x.sin() * x.roll(1)).sum(), (x ** 3).sum() * x[0].cos()])


def _direction(x):
    return torch.linspace(0.3, -0.7, x.numel(), dtype=F64).reshape(tuple(x.shape))


def _batch(x):
    return torch.stack([x, 0.5 * x + 0.1, x.cos()])


# name -> (transform, reference transform)
def _t_grad(g):
    return grad(lambda x: g(x).sum())


def _t_jacrev(g):
    return jacrev(g)


def _t_jacfwd(g):
    return jacfwd(g)


def _t_jvp(g):
    return lambda x: jvp(g, (x,), (_direction(x),))[1]


def _t_vjp(g):
    def h(x):
        out, fn = vjp(g, x)
        return fn(torch.full(tuple(out.shape), 0.7, dtype=F64).cos())[0]
    return h


def _t_vmap(g):
    return lambda x: vmap(g)(_batch(x)).sum(0)


def _numeric_jac(g, x):
    base = x.numpy()
    cols = []
    for i in np.ndindex(*base.shape):
        xp, xm = base.copy(), base.copy()
        xp[i] += EPS
        xm[i] -= EPS
        cols.append((g(torch.tensor(xp)).numpy() - g(torch.tensor(xm)).numpy()) / (2 * EPS))
    out_shape = np.shape(cols[0])
    return np.moveaxis(np.array(cols), 0, -1).reshape(out_shape + base.shape)


def _r_grad(g):
    return lambda x: torch.tensor(_numeric_jac(lambda y: g(y).sum(), x))


def _r_jac(g):
    return lambda x: torch.tensor(_numeric_jac(g, x))


def _r_jvp(g):
    def h(x):
        step = EPS * _direction(x)
        return (g(x + step) - g(x - step)) / (2 * EPS)
    return h


def _r_vjp(g):
    def h(x):
        J = _numeric_jac(g, x)
        out_nd = J.ndim - x.ndim
        ct = np.cos(np.full(J.shape[:out_nd], 0.7))
        return torch.tensor(np.tensordot(ct, J, axes=out_nd))
    return h


def _r_vmap(g):
    return lambda x: torch.stack([g(e) for e in _batch(x)]).sum(0)


TRANSFORMS = {"grad": (_t_grad, _r_grad), "jacrev": (_t_jacrev, _r_jac),
              "jacfwd": (_t_jacfwd, _r_jac), "jvp": (_t_jvp, _r_jvp), "vjp": (_t_vjp, _r_vjp),
              "vmap": (_t_vmap, _r_vmap)}


def _build(names):
    g = f
    for name in reversed(names[1:]):   # innermost first
        g = TRANSFORMS[name][0](g)
    return g


DEPTH2 = list(itertools.product(TRANSFORMS, repeat=2))
# Depth 3 in every order would be 216 cases; each outer/inner pair already appears above,
# so depth 3 runs every order of a derivative, a vmap and a forward/reverse mix.
DEPTH3 = [p for p in itertools.product(TRANSFORMS, repeat=3)
          if len({TRANSFORMS[n][1] for n in p}) == 3 or p in {
              ("grad", "grad", "grad"), ("jacfwd", "jacrev", "vmap"), ("vmap", "vmap", "grad")}]


@pytest.mark.parametrize("names", DEPTH2 + DEPTH3, ids=lambda n: "(".join(n) + ")" * (len(n) - 1))
def test_nested_transform_matches_independent_reference(names):
    x = torch.tensor([0.3, -0.8, 1.1], dtype=F64)
    inner = _build(names)
    outer_t, outer_ref = TRANSFORMS[names[0]]
    got = outer_t(inner)(x)
    want = outer_ref(inner)(x)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


# compile as one more transform (backend aot_eager): its reference is the identity, so
# `outer(compile(inner))` is checked against outer's independent reference of the compiled
# inner function, and `compile(g)` against `g`, each level validated as above.
def _t_compile(g):
    return torch.compile(g, backend="aot_eager")


COMPILE_TRANSFORMS = {**TRANSFORMS, "compile": (_t_compile, lambda g: g)}
COMPILE_CASES = [("compile", n) for n in COMPILE_TRANSFORMS] + \
    [(n, "compile") for n in TRANSFORMS] + \
    [("grad", "compile", "vmap"), ("vmap", "compile", "grad"), ("compile", "jacfwd", "jacrev"),
     ("jacrev", "compile", "jacfwd")]


@pytest.mark.parametrize("names", COMPILE_CASES, ids=lambda n: "(".join(n) + ")" * (len(n) - 1))
def test_nested_with_compile_matches_independent_reference(names):
    x = torch.tensor([0.3, -0.8, 1.1], dtype=F64)
    inner = f
    for name in reversed(names[1:]):
        inner = COMPILE_TRANSFORMS[name][0](inner)
    outer_t, outer_ref = COMPILE_TRANSFORMS[names[0]]
    got = outer_t(inner)(x)
    want = outer_ref(inner)(x)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
