"""torch.autograd.functional agrees with torch.func and with closed forms."""
import numtorch as torch
from numtorch.autograd import functional as AF
from numtorch.func import hessian, jacfwd, jacrev, jvp, vjp

F64 = torch.float64


def f(a, b):
    return (a.sin() * b).sum()


def test_vjp_agrees_with_func_vjp():
    a, b = torch.randn(3, dtype=F64), torch.randn(3, dtype=F64)
    out, (ga, gb) = AF.vjp(f, (a, b))
    _, fn = vjp(f, a, b)
    fa, fb = fn(torch.ones((), dtype=F64))
    assert torch.allclose(out, f(a, b)) and torch.allclose(ga, fa) and torch.allclose(gb, fb)
    assert torch.allclose(ga, a.cos() * b)


def test_jvp_agrees_with_func_jvp():
    x, v = torch.randn(3, dtype=F64), torch.randn(3, dtype=F64)
    out, t = AF.jvp(torch.exp, x, v)
    assert torch.allclose(t, jvp(torch.exp, (x,), (v,))[1]) and torch.allclose(t, x.exp() * v)


def test_jacobian_both_strategies_and_nesting():
    x, y = torch.randn(3, dtype=F64), torch.randn(3, dtype=F64)
    g = lambda a: a.sin() * 2  # noqa: E731
    for strategy in ("reverse-mode", "forward-mode"):
        J = AF.jacobian(g, x, strategy=strategy)
        assert torch.allclose(J, torch.diag(2 * x.cos()))
        assert torch.allclose(J, jacrev(g)(x)) and torch.allclose(J, jacfwd(g)(x))
    J2 = AF.jacobian(lambda a, b: (a * b, a + b), (x, y))
    assert torch.allclose(J2[0][1], torch.diag(x)) and torch.allclose(J2[1][0], torch.eye(3, dtype=F64))


def test_hessian_and_hessian_vector_products():
    x = torch.randn(4, dtype=F64)
    cube = lambda a: (a ** 3).sum()  # noqa: E731
    H = AF.hessian(cube, x)
    assert torch.allclose(H, torch.diag(6 * x)) and torch.allclose(H, hessian(cube)(x))
    v = torch.randn(4, dtype=F64)
    assert torch.allclose(AF.hvp(cube, x, v)[1], 6 * x * v)
    assert torch.allclose(AF.vhp(cube, x, v)[1], 6 * x * v)


def test_results_are_detached_unless_create_graph():
    x = torch.randn(3, dtype=F64, requires_grad=True)
    _, g = AF.vjp(lambda a: (a ** 2).sum(), x)
    assert not g.requires_grad
    _, g2 = AF.vjp(lambda a: (a ** 2).sum(), x, create_graph=True)
    assert g2.requires_grad
    g2.sum().backward()
    assert torch.allclose(x.grad, torch.full((3,), 2.0, dtype=F64))
