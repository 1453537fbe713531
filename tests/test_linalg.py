"""numtorch.linalg: values vs NumPy/PyTorch, derivatives (finite differences, jvp vs vjp,
hessians), vmap vs a loop, meta shapes and PyTorch's error messages."""
from __future__ import annotations

import numpy as np
import pytest

import numtorch as torch
from numtorch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap
from numtorch.testing import gradcheck

rng = np.random.default_rng(0)
F64 = torch.float64


def rand(*shape):
    return torch.tensor(rng.standard_normal(shape))


def spd(*shape):
    a = rand(*shape)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=F64)


def sym(x):
    return x + x.mT


def leaves(out):
    """The floating-point tensors of an output (tuples flattened)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in leaves(o)]
    return [out] if out.dtype.is_floating_point else []


def _svd_invariants(a, full_matrices=False):
    # Singular vectors are defined up to sign: compare quantities that are not.
    u, s, vh = torch.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    return s, (u * s.unsqueeze(-2) ** 2) @ u.mT, (vh.mT * s.unsqueeze(-2)) @ vh, (u * s.unsqueeze(-2)) @ vh


def _eigh_invariants(a, uplo="L"):
    w, v = torch.linalg.eigh(a, uplo)
    return w, (v * w.unsqueeze(-2) ** 3) @ v.mT


# name: (function, argument factory, whether the input must stay symmetric)
CASES = {
    "inv": (torch.linalg.inv, lambda: [rand(4, 4)], False),
    "solve": (torch.linalg.solve, lambda: [rand(4, 4), rand(4, 2)], False),
    "solve_vector": (torch.linalg.solve, lambda: [rand(4, 4), rand(4)], False),
    "solve_left_false": (lambda a, b: torch.linalg.solve(a, b, left=False),
                         lambda: [rand(3, 3), rand(2, 3)], False),
    "solve_triangular": (lambda a, b: torch.linalg.solve_triangular(a, b, upper=True),
                         lambda: [rand(4, 4) + 4 * torch.eye(4, dtype=F64), rand(4, 3)], False),
    "solve_triangular_unit_right": (
        lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        lambda: [rand(4, 4), rand(3, 4)], False),
    "det": (torch.linalg.det, lambda: [rand(4, 4)], False),
    "slogdet": (lambda a: torch.linalg.slogdet(a).logabsdet, lambda: [rand(4, 4)], False),
    "cholesky": (torch.linalg.cholesky, lambda: [spd(4, 4)], True),
    "qr_tall": (torch.linalg.qr, lambda: [rand(5, 3)], False),
    "qr_wide": (torch.linalg.qr, lambda: [rand(3, 5)], False),
    "eigh": (_eigh_invariants, lambda: [spd(4, 4)], True),
    "eigvalsh": (torch.linalg.eigvalsh, lambda: [spd(4, 4)], True),
    "svd_tall": (_svd_invariants, lambda: [rand(5, 3)], False),
    "svd_wide": (_svd_invariants, lambda: [rand(3, 5)], False),
    "svdvals": (torch.linalg.svdvals, lambda: [rand(4, 3)], False),
    "pinv": (torch.linalg.pinv, lambda: [rand(4, 3)], False),
    "matrix_norm_nuc": (lambda a: torch.linalg.matrix_norm(a, "nuc"), lambda: [rand(4, 3)], False),
    "matrix_norm_2": (lambda a: torch.linalg.matrix_norm(a, 2), lambda: [rand(4, 3)], False),
    "matrix_power": (lambda a: torch.linalg.matrix_power(a, -3), lambda: [rand(3, 3) + 3 * torch.eye(3, dtype=F64)], False),
    "lstsq": (lambda a, b: torch.linalg.lstsq(a, b).solution, lambda: [rand(5, 3), rand(5, 2)], False),
}


def _tangent(a, symmetric):
    t = rand(*a.shape)
    return sym(t) if symmetric else t


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_agrees_with_vjp_and_finite_differences(name):
    f, make, symmetric = CASES[name]
    args = make()
    tangents = [_tangent(a, symmetric) for a in args]
    out, tout = jvp(f, tuple(args), tuple(tangents))
    _, pullback = vjp(f, *args)
    outs, touts = leaves(out), leaves(tout)
    us = [rand(*o.shape) for o in outs]
    cts = pullback(us[0] if not isinstance(out, tuple) else
                   (type(out)(*us) if hasattr(out, "_fields") else tuple(us)))
    cts = cts if isinstance(cts, tuple) else (cts,)
    lhs = sum((c * t).sum().item() for c, t in zip(cts, tangents))
    rhs = sum((u * t).sum().item() for u, t in zip(us, touts))
    eps = 1e-6
    plus = leaves(f(*[a + eps * t for a, t in zip(args, tangents)]))
    minus = leaves(f(*[a - eps * t for a, t in zip(args, tangents)]))
    fd = sum(((p - m) / (2 * eps) * u).sum().item() for p, m, u in zip(plus, minus, us))
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))
    assert abs(fd - rhs) < 1e-6 * max(1.0, abs(rhs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_loop(name):
    f, make, symmetric = CASES[name]
    base = make()
    batched = [torch.stack([a + 0.01 * _tangent(a, symmetric) for _ in range(3)]) for a in base]
    combos = [tuple(0 for _ in base)]
    if len(base) == 2:
        combos += [(None, 0), (0, None)]
    for dims in combos:
        ins = [b if d == 0 else a for a, b, d in zip(base, batched, dims)]
        got = leaves(vmap(f, in_dims=dims)(*ins))
        loop = [leaves(f(*[x[i] if d == 0 else x for x, d in zip(ins, dims)])) for i in range(3)]
        for j, g in enumerate(got):
            np.testing.assert_allclose(g.numpy(), torch.stack([r[j] for r in loop]).numpy(),
                                       atol=1e-10)

    def scalar(*a):
        return sum((o * o).sum() for o in leaves(f(*a)))
    g = vmap(grad(scalar))(*batched)
    ref = torch.stack([grad(scalar)(*[b[i] for b in batched]) for i in range(3)])
    np.testing.assert_allclose(g.numpy(), ref.numpy(), atol=1e-8)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "cholesky", "eigvalsh", "solve",
                                  "svdvals", "qr_tall"])
def test_hessian_is_symmetric_and_matches_jacfwd_of_jacrev(name):
    f, make, symmetric = CASES[name]
    args = make()

    def scalar(a):
        if symmetric:   # a function of all entries: the rules assume symmetric perturbations
            a = sym(a) + 8 * torch.eye(a.shape[-1], dtype=F64)
        return sum(o.sin().sum() for o in leaves(f(a, *args[1:])))
    h = hessian(scalar)(args[0])
    n = args[0].numel()
    flat = h.numpy().reshape(n, n)
    np.testing.assert_allclose(flat, flat.T, atol=1e-8)
    np.testing.assert_allclose(flat, jacfwd(jacrev(scalar))(args[0]).numpy().reshape(n, n), atol=1e-8)


def test_gradcheck_of_batched_solvers():
    a = (rand(2, 3, 3) + 3 * torch.eye(3, dtype=F64)).requires_grad_()
    b = rand(2, 3, 2).requires_grad_()
    assert gradcheck(torch.linalg.solve, (a, b))
    assert gradcheck(lambda a, b: torch.linalg.solve_triangular(a, b, upper=False), (a, b))
    assert gradcheck(torch.linalg.inv, (a,))
    assert gradcheck(lambda x: torch.linalg.cholesky(sym(x) + 6 * torch.eye(3, dtype=F64)), (a,))


def test_values_against_numpy():
    a, b = rand(3, 4, 4), rand(3, 4, 2)
    A, B = a.numpy(), b.numpy()
    np.testing.assert_allclose(torch.linalg.inv(a).numpy(), np.linalg.inv(A), rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.solve(a, b).numpy(), np.linalg.solve(A, B), rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.det(a).numpy(), np.linalg.det(A), rtol=1e-10)
    sign, logabs = torch.linalg.slogdet(a)
    np.testing.assert_allclose(sign.numpy(), np.linalg.slogdet(A)[0])
    np.testing.assert_allclose(logabs.numpy(), np.linalg.slogdet(A)[1], rtol=1e-10)
    s = spd(4, 4)
    np.testing.assert_allclose(torch.linalg.cholesky(s).numpy(), np.linalg.cholesky(s.numpy()), rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.cholesky(s, upper=True).numpy(),
                               np.linalg.cholesky(s.numpy()).T, rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.eigvalsh(s).numpy(), np.linalg.eigvalsh(s.numpy()), rtol=1e-10)
    q, r = torch.linalg.qr(a[0, :, :3])
    np.testing.assert_allclose((q @ r).numpy(), A[0, :, :3], atol=1e-12)
    assert torch.linalg.qr(a[0], mode="complete").Q.shape == (4, 4)
    assert torch.linalg.qr(a[0], mode="r").Q.shape == (0,)
    u, sv, vh = torch.linalg.svd(a[0, :3])
    assert u.shape == (3, 3) and vh.shape == (4, 4)
    np.testing.assert_allclose(sv.numpy(), np.linalg.svd(A[0, :3], compute_uv=False), rtol=1e-10)
    tri = np.triu(A[0]) + 4 * np.eye(4)
    x = torch.linalg.solve_triangular(torch.tensor(tri + np.tril(A[0], -1)), b[0], upper=True)
    np.testing.assert_allclose(tri @ x.numpy(), B[0], atol=1e-12)   # the lower part is ignored
    for ord in ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
        np.testing.assert_allclose(torch.linalg.matrix_norm(a, ord).numpy(),
                                   np.linalg.norm(A, ord, axis=(-2, -1)), rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.norm(a).numpy(), np.linalg.norm(A), rtol=1e-12)
    np.testing.assert_allclose(torch.linalg.matrix_power(a, 3).numpy(),
                               np.linalg.matrix_power(A, 3), rtol=1e-10)
    np.testing.assert_allclose(torch.linalg.pinv(a[0, :3]).numpy(), np.linalg.pinv(A[0, :3]), rtol=1e-8)
    np.testing.assert_allclose(torch.linalg.cond(a).numpy(), np.linalg.cond(A), rtol=1e-8)
    assert torch.linalg.matrix_rank(torch.ones(3, 4, dtype=F64)).item() == 1
    m = [rand(2, 5), rand(5, 3), rand(3)]
    np.testing.assert_allclose(torch.linalg.multi_dot(m).numpy(),
                               np.linalg.multi_dot([t.numpy() for t in m]), rtol=1e-12)
    np.testing.assert_allclose(torch.linalg.cross(rand(4, 3), rand(1, 3)).shape, (4, 3))


def test_top_level_aliases():
    a = spd(3, 3)
    np.testing.assert_allclose(torch.inverse(a).numpy(), np.linalg.inv(a.numpy()), rtol=1e-10)
    np.testing.assert_allclose(torch.det(a).numpy(), np.linalg.det(a.numpy()), rtol=1e-10)
    np.testing.assert_allclose(torch.logdet(a).numpy(), np.log(np.linalg.det(a.numpy())), rtol=1e-10)
    assert np.isnan(torch.logdet(torch.tensor([[0.0, 1.0], [1.0, 0.0]])).item())
    lo = torch.cholesky(a)
    np.testing.assert_allclose((lo @ lo.mT).numpy(), a.numpy(), atol=1e-12)
    b = rand(3, 2)
    np.testing.assert_allclose(torch.cholesky_solve(b, lo).numpy(), np.linalg.solve(a.numpy(), b.numpy()),
                               rtol=1e-10)
    np.testing.assert_allclose(torch.cholesky_inverse(lo).numpy(), np.linalg.inv(a.numpy()), rtol=1e-10)
    u, s, v = torch.svd(a)
    np.testing.assert_allclose(((u * s) @ v.mT).numpy(), a.numpy(), atol=1e-12)
    x, _ = torch.triangular_solve(b, a, upper=False)
    np.testing.assert_allclose(np.tril(a.numpy()) @ x.numpy(), b.numpy(), atol=1e-12)


def test_zero_subgradients_at_the_origin_and_singular_det():
    assert grad(torch.linalg.vector_norm)(torch.zeros(3, dtype=F64)).tolist() == [0, 0, 0]
    assert grad(lambda x: torch.linalg.vector_norm(x, 3))(torch.zeros(3, dtype=F64)).tolist() == [0, 0, 0]
    assert grad(torch.linalg.matrix_norm)(torch.zeros(2, 2, dtype=F64)).tolist() == [[0, 0], [0, 0]]
    # PyTorch's convention: the gradient of det at an exactly singular matrix is zero.
    z = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=F64)
    assert grad(torch.linalg.det)(z).tolist() == [[0, 0], [0, 0]]
    # Repeated eigenvalues: the eigenvalues alone still have a finite gradient.
    assert grad(lambda a: torch.linalg.eigh(a)[0].sum())(torch.eye(3, dtype=F64)).tolist() == \
        torch.eye(3).tolist()
    assert grad(lambda a: torch.linalg.svdvals(a).sum())(torch.eye(3, dtype=F64)).tolist() == \
        torch.eye(3).tolist()


def test_meta_shapes():
    m = torch.randn(5, 3, 3, device="meta")
    assert torch.linalg.inv(m).shape == (5, 3, 3) and torch.linalg.inv(m).is_meta
    assert torch.linalg.det(m).shape == (5,)
    assert [t.shape for t in torch.linalg.svd(torch.randn(4, 2, device="meta"))] == [(4, 4), (2,), (2, 2)]
    assert [t.shape for t in torch.linalg.qr(torch.randn(4, 2, device="meta"))] == [(4, 2), (2, 2)]
    assert torch.linalg.solve(m, torch.randn(5, 3, device="meta")).shape == (5, 3)
    assert torch.linalg.eigh(m).eigenvalues.shape == (5, 3)


def _torch_oracle_pairs():
    return [
        ("inv", lambda L: L.linalg.inv, [rand(2, 4, 4).numpy()]),
        ("solve", lambda L: L.linalg.solve, [rand(2, 4, 4).numpy(), rand(4, 3).numpy()]),
        ("det", lambda L: L.linalg.det, [rand(2, 4, 4).numpy()]),
        ("slogdet", lambda L: L.linalg.slogdet, [rand(4, 4).numpy()]),
        ("cholesky", lambda L: L.linalg.cholesky, [spd(2, 4, 4).numpy()]),
        ("qr", lambda L: L.linalg.qr, [rand(2, 5, 3).numpy()]),
        ("qr_wide", lambda L: L.linalg.qr, [rand(3, 5).numpy()]),
        ("svd", lambda L: lambda a: _svd_invariants_lib(L, a), [rand(2, 5, 3).numpy()]),
        ("eigh", lambda L: lambda a: _eigh_invariants_lib(L, a), [spd(4, 4).numpy()]),
        ("matrix_norm", lambda L: lambda a: L.linalg.matrix_norm(a, "nuc"), [rand(4, 3).numpy()]),
        ("lstsq", lambda L: lambda a, b: L.linalg.lstsq(a, b).solution,
         [rand(5, 3).numpy(), rand(5, 2).numpy()]),
    ]


def _svd_invariants_lib(lib, a):
    u, s, vh = lib.linalg.svd(a, full_matrices=False)
    return s, (u * s.unsqueeze(-2) ** 3) @ vh


def _eigh_invariants_lib(lib, a):
    w, v = lib.linalg.eigh(a)
    return w, (v * w.unsqueeze(-2) ** 3) @ v.mT


def _check_against_torch(get, arrays):
    """Values, and gradients of a random linear functional of the outputs (real and
    imaginary parts weighted separately), against PyTorch."""
    pt = pytest.importorskip("torch")
    ts = [pt.tensor(a, requires_grad=True) for a in arrays]
    ns = [torch.tensor(a, requires_grad=True) for a in arrays]
    yt, yn = get(pt)(*ts), get(torch)(*ns)
    yt, yn = (yt, yn) if isinstance(yt, tuple) else ((yt,), (yn,))
    loss_t = loss_n = 0
    for a, b in zip(yt, yn):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=1e-9)
        parts = (lambda t: t.real, lambda t: t.imag) if a.is_complex() else (lambda t: t,)
        for part in parts:
            w = rng.standard_normal(tuple(a.shape))
            loss_t = loss_t + (part(a) * pt.tensor(w)).sum()
            loss_n = loss_n + (part(b) * torch.tensor(w)).sum()
    for a, b in zip(pt.autograd.grad(loss_t, ts), torch.autograd.grad(loss_n, ns)):
        np.testing.assert_allclose(b.numpy(), a.numpy(), atol=1e-8)


@pytest.mark.parametrize("name,get,arrays", _torch_oracle_pairs())
def test_values_and_gradients_match_torch(name, get, arrays):
    _check_against_torch(get, arrays)


# ---------------------------------------------------------------------------------------
# Errors


SINGULAR = torch.tensor([[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("call,error,message", [
    (lambda: torch.linalg.inv(torch.randn(2, 3)), RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: torch.linalg.inv(torch.randn(3)), RuntimeError,
     "linalg.inv: The input tensor A must have at least 2 dimensions."),
    (lambda: torch.linalg.inv(SINGULAR), torch.linalg.LinAlgError,
     "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because "
     "the input matrix is singular."),
    (lambda: torch.linalg.inv(torch.stack([torch.eye(2), SINGULAR])), torch.linalg.LinAlgError,
     "linalg.inv: (Batch element 1): The diagonal element 2 is zero"),
    (lambda: torch.linalg.inv(torch.ones(3, 3, dtype=torch.int64)), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: torch.linalg.solve(SINGULAR, torch.randn(2)), torch.linalg.LinAlgError,
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    (lambda: torch.linalg.solve(torch.randn(3, 3), torch.randn(2)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x1)"),
    (lambda: torch.linalg.solve(torch.randn(3, 3), torch.randn(3, 3, dtype=F64)), RuntimeError,
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of "
     "type Double instead"),
    (lambda: torch.linalg.solve(torch.randn(5, 3, 3), torch.randn(4, 3, 1)), RuntimeError,
     "The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 0"),
    (lambda: torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])), torch.linalg.LinAlgError,
     "linalg.cholesky: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 2 is not positive-definite)."),
    (lambda: torch.linalg.cholesky(torch.stack([torch.eye(2), -torch.eye(2)])), torch.linalg.LinAlgError,
     "linalg.cholesky: (Batch element 1): The factorization could not be completed because the "
     "input is not positive-definite (the leading minor of order 1 is not positive-definite)."),
    (lambda: torch.linalg.det(torch.randn(2, 3)), RuntimeError,
     "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: torch.linalg.eigh(torch.randn(2, 2), UPLO="X"), RuntimeError,
     "Expected UPLO argument to be 'L' or 'U', but got X"),
    (lambda: torch.linalg.qr(torch.randn(2, 3), mode="foo"), RuntimeError,
     "qr received unrecognized mode 'foo' but expected one of 'reduced' (default), 'r', or 'complete'"),
    (lambda: torch.linalg.svd(torch.ones(3, 2, dtype=torch.int64)), RuntimeError,
     "linalg.svd: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: torch.linalg.matrix_norm(torch.randn(3, 3), ord=3), RuntimeError,
     "linalg.matrix_norm: Order 3 not supported."),
    (lambda: torch.linalg.matrix_norm(torch.randn(3, 4), dim=(0, 0)), RuntimeError,
     "linalg.matrix_norm: dims must be different. Got (0, 0)"),
    (lambda: torch.linalg.norm(torch.randn(3, 3, 3), ord=2), RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    (lambda: torch.linalg.cross(torch.randn(3, 2), torch.randn(3, 2)), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"),
    (lambda: torch.linalg.solve_triangular(torch.randn(3, 3), torch.randn(2, 2), upper=True),
     RuntimeError, "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
     "(3x3 and 2x2)"),
    (lambda: torch.linalg.multi_dot([torch.randn(3, 2), torch.randn(3, 2)]), RuntimeError,
     "multi_dot(): tensors 0 and 1 with shapes [3, 2] and [3, 2] cannot be multiplied"),
    (lambda: torch.linalg.multi_dot([torch.randn(3)]), RuntimeError,
     "multi_dot(): expected at least 2 tensors but got 1"),
    (lambda: grad(lambda a: torch.linalg.qr(a, mode="complete").Q.sum())(torch.randn(4, 3)),
     RuntimeError, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."),
])
def test_error_messages(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)


def _crand(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hermitian_pd(n):
    a = _crand(n, n)
    return a @ a.conj().T + n * np.eye(n)


@pytest.mark.parametrize("name,get,arrays", [
    ("inv", lambda L: L.linalg.inv, lambda: [_crand(3, 3)]),
    ("solve", lambda L: L.linalg.solve, lambda: [_crand(3, 3), _crand(3, 2)]),
    ("det", lambda L: L.linalg.det, lambda: [_crand(3, 3)]),
    ("slogdet", lambda L: L.linalg.slogdet, lambda: [_crand(3, 3)]),
    ("cholesky", lambda L: L.linalg.cholesky, lambda: [_hermitian_pd(3)]),
    ("qr", lambda L: L.linalg.qr, lambda: [_crand(4, 3)]),
    ("qr_wide", lambda L: L.linalg.qr, lambda: [_crand(3, 4)]),
    ("eigh", lambda L: lambda a: (lambda w, v: (w, (v * w.unsqueeze(-2)) @ v.mH))(*L.linalg.eigh(a)),
     lambda: [_hermitian_pd(3)]),
    ("svd", lambda L: lambda a: (lambda u, s, vh: (s, (u * s.unsqueeze(-2) ** 2) @ vh))(
        *L.linalg.svd(a, full_matrices=False)), lambda: [_crand(3, 4)]),
])
def test_complex_values_and_gradients_match_torch(name, get, arrays):
    _check_against_torch(get, arrays())


def test_out_argument_receives_the_result():
    a = spd(3, 3)
    out = torch.empty(3, 3, dtype=F64)
    assert torch.linalg.inv(a, out=out) is out
    np.testing.assert_allclose((out @ a).numpy(), np.eye(3), atol=1e-12)
    small = torch.empty(0, dtype=F64)
    torch.linalg.cholesky(a, out=small)
    assert small.shape == (3, 3)
