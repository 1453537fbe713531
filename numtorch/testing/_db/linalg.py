"""OpInfo entries: ``numtorch.linalg.*`` and the top-level linear-algebra functions
(``inverse``, ``det``, ``cholesky``, ``svd``, …) with their Tensor methods.

Samples are small (2-4), well conditioned (a random matrix plus a multiple of I, so
solves, inverses and determinants are far from singular) and have distinct eigen- and
singular values, so that every derivative is defined. Entries are named as PyTorch
spells them (``"linalg.solve"``), each with its explicit ``op`` and PyTorch twin.

Note [Hermitian inputs in the matrix]: cholesky, eigh and eigvalsh read one triangle of
their input, and PyTorch defines their derivatives for Hermitian perturbations only, so a
finite difference of one entry cannot match. As PyTorch's OpInfos do (its
``gradcheck_wrapper_hermitian_input``), their ``linalg.*`` entries call the function on
``A + A^H``; the raw top-level ``cholesky`` is checked for values and transforms only.

Note [Factors unique up to sign]: Q of qr, U and V of svd and the eigenvectors of eigh
are unique only up to a sign (a phase when complex) per column, so those entries have no
``ref``: a ``check`` tests the defining properties (reconstruction, orthonormality,
triangularity, order), and the PyTorch comparison, which compares raw values, is skipped.

Note [Triangular factors]: cholesky_solve and cholesky_inverse read one triangle of their
factor, but PyTorch's gradient treats the whole factor as L in A = L L^H (it is defined for
triangular factors only). As PyTorch's OpInfos do (``gradcheck_wrapper_triangular_input``),
their entries pass the factor through ``tril``/``triu`` first.
"""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import DATA_DEPENDENT, FLOATING, SAME, OpInfo, SampleInput, make, register, skip

_C128 = (torch.complex128,)
_WITH_COMPLEX = FLOATING + _C128


def _mat(shape, dtype, requires_grad, shift=None):
    """A random leaf with entries in [-1, 1] plus ``shift * I`` (default 2n: diagonally
    dominant, so nonsingular with a positive determinant; a negative shift flips its sign
    for odd n)."""
    n = shape[-1]
    x = make(shape, dtype, low=-1, high=1)
    shift = 2 * n if shift is None else shift
    if shift:
        x = x + shift * torch.eye(n, dtype=dtype)
    return x.detach().requires_grad_(requires_grad)


def _spread(shape, dtype, requires_grad):
    """A leaf A whose Hermitian part A + A^H is positive definite with well separated
    eigenvalues (diagonal 4n, 4n + 6, ... dominates the random part)."""
    n = shape[-1]
    x = make(shape, dtype, low=-1, high=1)
    x = x + torch.diag(torch.arange(n, dtype=torch.float64) * 3 + 2 * n).to(dtype)
    return x.detach().requires_grad_(requires_grad)


def _rand(shape, dtype, requires_grad):
    return make(shape, dtype, requires_grad, low=-1, high=1)


def _np_mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _tol(x):
    return (1e-4, 1e-4) if x.dtype in (torch.float32, torch.complex64) else (1e-9, 1e-9)


def _close(actual, expected, like):
    rtol, atol = _tol(like)
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def _linalg(name, **kw):
    """An entry for ``numtorch.linalg.<name>``, compared with ``torch.linalg.<name>``."""
    kw.setdefault("op", getattr(torch.linalg, name))
    kw.setdefault("torch_op", lambda t: getattr(t.linalg, name))
    return OpInfo(f"linalg.{name}", **kw)


def _hermitian(fn):
    """``fn`` of ``A + A^H`` (Note [Hermitian inputs in the matrix]); works on PyTorch's
    tensors too."""
    def call(a, *args, **kwargs):
        return fn(a + a.mH, *args, **kwargs)
    return call


def _on_triangle(fn, position):
    """``fn`` with its factor argument (at ``position``) reduced to the triangle that
    ``upper`` names (Note [Triangular factors]); works on PyTorch's tensors too."""
    def call(*args, **kwargs):
        upper = kwargs.get("upper", args[position + 1] if len(args) > position + 1 else False)
        args = list(args)
        args[position] = args[position].triu() if upper else args[position].tril()
        return fn(*args, **kwargs)
    return call


def _np_hermitian(fn):
    def call(a, *args, **kwargs):
        return fn(a + _np_mH(a), *args, **kwargs)
    return call


_SIGN_FACTORS = (skip("oracle", "factors are unique only up to sign (Note [Factors unique up "
                      "to sign]); check= tests their defining properties"),)


# ---------------------------------------------------------------------------------------
# Solvers, inverses, determinants

def _solve_samples(dtype, requires_grad):
    yield SampleInput(_mat((3, 3), dtype, requires_grad), (_rand((3, 2), dtype, requires_grad),))
    yield SampleInput(_mat((3, 3), dtype, requires_grad), (_rand((3,), dtype, requires_grad),),
                      name="vector")
    yield SampleInput(_mat((2, 3, 3), dtype, requires_grad), (_rand((3, 1), dtype, requires_grad),),
                      name="batch_broadcast")
    yield SampleInput(_mat((2, 2), dtype, requires_grad), (_rand((3, 2), dtype, requires_grad),),
                      dict(left=False), name="right")


def _solve_ref(a, b, left=True):
    if not left:
        return np.swapaxes(_solve_ref(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):
        return np.linalg.solve(a, b[..., None])[..., 0]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]),
                           np.broadcast_to(b, batch + b.shape[-2:]))


def _square_samples(dtype, requires_grad):
    yield SampleInput(_mat((3, 3), dtype, requires_grad))
    yield SampleInput(_mat((2, 2, 2), dtype, requires_grad), name="batch")
    yield SampleInput(_mat((1, 1), dtype, requires_grad), name="1x1")


def _det_samples(dtype, requires_grad):
    yield from _square_samples(dtype, requires_grad)
    yield SampleInput(_mat((3, 3), dtype, requires_grad, shift=-6), name="negative")


def _logdet_ref(a):
    sign, logabs = np.linalg.slogdet(a)
    if np.iscomplexobj(a):
        return np.log(sign) + logabs
    return np.where(sign < 0, np.nan, logabs)


def _logdet_samples(dtype, requires_grad):
    for s in _det_samples(dtype, requires_grad):
        if s.name == "negative":   # nan: no derivative
            s.grad = False
        yield s


def _power_samples(dtype, requires_grad):
    a = _mat((3, 3), dtype, requires_grad, shift=1)
    yield SampleInput(a, (3,))
    yield SampleInput(a, (0,), name="zero")
    yield SampleInput(a, (1,), name="one")
    yield SampleInput(_mat((2, 2, 2), dtype, requires_grad), (-2,), name="inverse")


def _power_ref(a, n):
    return np.linalg.matrix_power(a, n)


def _tri(a, upper, unit=False):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    return t


def _solve_triangular_samples(dtype, requires_grad):
    yield SampleInput(_mat((3, 3), dtype, requires_grad), (_rand((3, 2), dtype, requires_grad),),
                      dict(upper=True))
    yield SampleInput(_mat((3, 3), dtype, requires_grad), (_rand((2, 3), dtype, requires_grad),),
                      dict(upper=False, left=False), name="lower_right")
    yield SampleInput(_mat((2, 3, 3), dtype, requires_grad), (_rand((3, 1), dtype, requires_grad),),
                      dict(upper=False, unitriangular=True), name="unit_batch")


def _solve_triangular_ref(a, b, *, upper, left=True, unitriangular=False):
    return _solve_ref(_tri(a, upper, unitriangular), b, left)


def _triangular_solve_samples(dtype, requires_grad):
    yield SampleInput(_rand((3, 2), dtype, requires_grad), (_mat((3, 3), dtype, requires_grad),))
    yield SampleInput(_rand((3, 2), dtype, requires_grad), (_mat((3, 3), dtype, requires_grad),),
                      dict(upper=False, transpose=True), name="lower_transpose")
    yield SampleInput(_rand((2, 3, 1), dtype, requires_grad), (_mat((2, 3, 3), dtype, requires_grad),
                                                               True, False, True), name="unit_batch")


def _triangular_solve_ref(b, a, upper=True, transpose=False, unitriangular=False):
    t = _tri(a, upper, unitriangular)
    if transpose:
        t = np.swapaxes(t, -1, -2)
    return _solve_ref(t, b), a


def _factor_samples(dtype, requires_grad):
    """(B, factor) pairs for cholesky_solve: the factor's other triangle is never read."""
    yield SampleInput(_rand((3, 2), dtype, requires_grad), (_mat((3, 3), dtype, requires_grad),))
    yield SampleInput(_rand((3, 2), dtype, requires_grad), (_mat((3, 3), dtype, requires_grad), True),
                      name="upper")
    yield SampleInput(_rand((2, 2, 1), dtype, requires_grad), (_mat((2, 2, 2), dtype, requires_grad),),
                      name="batch")


def _from_factor(f, upper):
    t = _tri(f, upper)
    return _np_mH(t) @ t if upper else t @ _np_mH(t)


def _cholesky_solve_ref(b, f, upper=False):
    return np.linalg.solve(_from_factor(f, upper), b)


def _factor_only_samples(dtype, requires_grad):
    for s in _factor_samples(dtype, requires_grad):
        yield SampleInput(s.args[0], s.args[1:], name=s.name)


def _cholesky_inverse_ref(f, upper=False):
    return np.linalg.inv(_from_factor(f, upper))


register(
    _linalg("solve", ref=_solve_ref, result_dtype=SAME, sample_inputs=_solve_samples,
            dtypes=_WITH_COMPLEX),
    _linalg("inv", ref=np.linalg.inv, result_dtype=SAME, sample_inputs=_square_samples,
            aliases=("inverse",), method="inverse", dtypes=_WITH_COMPLEX),
    _linalg("det", ref=np.linalg.det, result_dtype=SAME, sample_inputs=_det_samples,
            aliases=("det",), method="det", dtypes=_WITH_COMPLEX),
    _linalg("slogdet", ref=np.linalg.slogdet, result_dtype=SAME, sample_inputs=_det_samples,
            aliases=("slogdet",), method="slogdet", dtypes=_WITH_COMPLEX),
    OpInfo("logdet", ref=_logdet_ref, result_dtype=SAME, sample_inputs=_logdet_samples,
           dtypes=_WITH_COMPLEX),
    _linalg("matrix_power", ref=_power_ref, result_dtype=SAME, sample_inputs=_power_samples,
            aliases=("matrix_power",), method="matrix_power"),
    _linalg("solve_triangular", ref=_solve_triangular_ref, result_dtype=SAME,
            sample_inputs=_solve_triangular_samples, dtypes=_WITH_COMPLEX),
    OpInfo("triangular_solve", ref=_triangular_solve_ref, result_dtype=SAME,
           sample_inputs=_triangular_solve_samples),
    OpInfo("cholesky_solve", op=_on_triangle(torch.cholesky_solve, 1),
           torch_op=lambda t: _on_triangle(t.cholesky_solve, 1), ref=_cholesky_solve_ref,
           result_dtype=SAME, sample_inputs=_factor_samples),
    OpInfo("cholesky_inverse", op=_on_triangle(torch.cholesky_inverse, 0),
           torch_op=lambda t: _on_triangle(t.cholesky_inverse, 0), ref=_cholesky_inverse_ref,
           result_dtype=SAME, sample_inputs=_factor_only_samples),
)


# ---------------------------------------------------------------------------------------
# Decompositions (Note [Hermitian inputs in the matrix], Note [Factors unique up to sign])

def _hermitian_samples(*extra_kwargs):
    def gen(dtype, requires_grad):
        yield SampleInput(_spread((3, 3), dtype, requires_grad))
        yield SampleInput(_spread((2, 2, 2), dtype, requires_grad), name="batch")
        for kw in extra_kwargs:
            yield SampleInput(_spread((4, 4), dtype, requires_grad), kwargs=kw,
                              name="_".join(f"{k}{v}" for k, v in kw.items()))
    return gen


def _cholesky_ref(a, upper=False):
    lo = np.linalg.cholesky(a)
    return _np_mH(lo) if upper else lo


def _spd_samples(dtype, requires_grad):
    """Raw symmetric positive-definite inputs (for the top-level cholesky)."""
    for s in _hermitian_samples()(dtype, False):
        yield SampleInput((s.input + s.input.mH).detach().requires_grad_(requires_grad), name=s.name)
    yield SampleInput((lambda a: (a + a.mH).detach())(_spread((3, 3), dtype, False)), (True,),
                      name="upper")


def _eigh_check(s, out):
    a = np.asarray((s.input + s.input.mH).detach())
    w, v = (np.asarray(t.detach()) for t in out)
    _close(w, np.linalg.eigvalsh(a), s.input)
    _close((v * w[..., None, :]) @ _np_mH(v), a, s.input)
    _close(_np_mH(v) @ v, np.broadcast_to(np.eye(a.shape[-1]), a.shape), s.input)
    return True


def _unitary_columns(q, like):
    k = q.shape[-1]
    _close(_np_mH(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), like)


def _qr_check(s, out):
    a = np.asarray(s.input.detach())
    q, r = (np.asarray(t.detach()) for t in out)
    mode = s.kwargs.get("mode", s.args[0] if s.args else "reduced")
    m, n = a.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    assert r.shape == a.shape[:-2] + (k, n) and np.array_equal(r, np.triu(r))
    if mode == "r":
        assert q.shape == (0,)
        _close(np.abs(r), np.abs(np.linalg.qr(a, "r")), s.input)   # |R| is unique
        return True
    assert q.shape == a.shape[:-2] + (m, k)
    _unitary_columns(q, s.input)
    _close(q @ r, a, s.input)
    return True


def _qr_samples(dtype, requires_grad):
    yield SampleInput(_rand((4, 3), dtype, requires_grad))
    yield SampleInput(_rand((3, 4), dtype, requires_grad), name="wide")
    yield SampleInput(_rand((2, 3, 2), dtype, requires_grad), name="batch")
    yield SampleInput(_rand((3, 3), dtype, requires_grad), kwargs=dict(mode="complete"), name="complete")
    yield SampleInput(_rand((4, 3), dtype, requires_grad), kwargs=dict(mode="r"), name="r")


def _svd_samples(dtype, requires_grad):
    reduced = dict(full_matrices=False)
    yield SampleInput(_rand((4, 3), dtype, requires_grad), kwargs=reduced)
    yield SampleInput(_rand((3, 4), dtype, requires_grad), kwargs=reduced, name="wide")
    yield SampleInput(_rand((2, 3, 2), dtype, requires_grad), kwargs=reduced, name="batch")
    yield SampleInput(_rand((3, 3), dtype, requires_grad), name="full_square")
    # The full (complete) U of a tall matrix has no derivative (PyTorch raises too).
    yield SampleInput(_rand((4, 2), dtype, requires_grad), name="full_tall", grad=False)
    # Identity U; no derivative checks (vmap of its backward hits a dot_general bug on K=0).
    yield SampleInput(_rand((3, 0), dtype, requires_grad), name="empty", grad=False)


def _check_svd(a, u, sv, vh, full, like):
    m, n = a.shape[-2:]
    k = min(m, n)
    assert u.shape == a.shape[:-2] + (m, m if full else k)
    assert vh.shape == a.shape[:-2] + (n if full else k, n)
    _close(sv, np.linalg.svd(a, compute_uv=False), like)
    _unitary_columns(u, like)
    _unitary_columns(_np_mH(vh), like)
    _close((u[..., :k] * sv[..., None, :]) @ vh[..., :k, :], a, like)


def _svd_check(s, out):
    a = np.asarray(s.input.detach())
    u, sv, vh = (np.asarray(t.detach()) for t in out)
    _check_svd(a, u, sv, vh, s.kwargs.get("full_matrices", True), s.input)
    return True


def _svd_top_samples(dtype, requires_grad):
    yield SampleInput(_rand((4, 3), dtype, requires_grad))
    yield SampleInput(_rand((2, 2, 3), dtype, requires_grad), name="batch")
    yield SampleInput(_rand((3, 3), dtype, requires_grad), (False,), name="full")
    yield SampleInput(_rand((3, 2), dtype, requires_grad), kwargs=dict(compute_uv=False), name="no_uv")


def _svd_top_check(s, out):
    a = np.asarray(s.input.detach())
    u, sv, v = (np.asarray(t.detach()) for t in out)
    some = s.args[0] if s.args else s.kwargs.get("some", True)
    if not s.kwargs.get("compute_uv", True):
        m, n = a.shape[-2:]
        assert not u.any() and not v.any() and u.shape[-2:] == (m, m) and v.shape[-2:] == (n, n)
        _close(sv, np.linalg.svd(a, compute_uv=False), s.input)
        return True
    _check_svd(a, u, sv, _np_mH(v), not some, s.input)
    return True


def _svdvals_samples(dtype, requires_grad):
    yield SampleInput(_rand((4, 3), dtype, requires_grad))
    yield SampleInput(_rand((2, 2, 3), dtype, requires_grad), name="batch")


def _svdvals_ref(a):
    return np.linalg.svd(a, compute_uv=False)


def _uplo(fn):
    def call(a, UPLO="L"):
        return fn(a, UPLO)
    return call


register(
    _linalg("cholesky", op=_hermitian(torch.linalg.cholesky), ref=_np_hermitian(_cholesky_ref),
            torch_op=lambda t: _hermitian(t.linalg.cholesky), result_dtype=SAME,
            sample_inputs=_hermitian_samples(dict(upper=True)), dtypes=_WITH_COMPLEX),
    # Raw inputs: derivatives are linalg.cholesky's (Note [Hermitian inputs in the matrix]).
    OpInfo("cholesky", ref=_cholesky_ref, result_dtype=SAME, sample_inputs=_spd_samples,
           supports_grad=False, dtypes=_WITH_COMPLEX),
    _linalg("eigh", op=_hermitian(torch.linalg.eigh), check=_eigh_check,
            torch_op=lambda t: _hermitian(t.linalg.eigh), result_dtype=lambda s: s.input.dtype.to_real(),
            sample_inputs=_hermitian_samples(dict(UPLO="U")), dtypes=_WITH_COMPLEX,
            skips=_SIGN_FACTORS),
    _linalg("eigvalsh", op=_hermitian(torch.linalg.eigvalsh),
            ref=_np_hermitian(_uplo(np.linalg.eigvalsh)),
            torch_op=lambda t: _hermitian(t.linalg.eigvalsh),
            result_dtype=lambda s: s.input.dtype.to_real(),
            sample_inputs=_hermitian_samples(dict(UPLO="U")), dtypes=_WITH_COMPLEX),
    # numpy's and PyTorch's Householder QR pick the same signs: compared raw too.
    _linalg("qr", check=_qr_check, result_dtype=SAME, sample_inputs=_qr_samples, method="qr",
            dtypes=_WITH_COMPLEX),
    _linalg("svd", check=_svd_check, result_dtype=SAME, sample_inputs=_svd_samples,
            dtypes=_WITH_COMPLEX, skips=_SIGN_FACTORS),
    OpInfo("svd", check=_svd_top_check, result_dtype=SAME, sample_inputs=_svd_top_samples,
           dtypes=_WITH_COMPLEX, skips=_SIGN_FACTORS),
    _linalg("svdvals", ref=_svdvals_ref, result_dtype=lambda s: s.input.dtype.to_real(),
            sample_inputs=_svdvals_samples, dtypes=_WITH_COMPLEX),
)


# ---------------------------------------------------------------------------------------
# Norms, least squares, pseudoinverses, products

def _vector_norm_samples(dtype, requires_grad):
    x = _rand((2, 3), dtype, requires_grad)
    yield SampleInput(x)
    yield SampleInput(x, (1,), dict(dim=1), name="ord1")
    yield SampleInput(x, (float("inf"),), dict(dim=(0, 1), keepdim=True), name="inf_keepdim")
    yield SampleInput(_rand((2, 2, 3), dtype, requires_grad), (3,), dict(dim=(0, 2)), name="ord3")
    yield SampleInput(x, (0,), name="ord0")


def _vector_norm_ref(x, ord=2, dim=None, keepdim=False):
    a = np.abs(x)
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    if ord == float("inf"):
        return np.max(a, axis=axis, keepdims=keepdim)
    if ord == -float("inf"):
        return np.min(a, axis=axis, keepdims=keepdim)
    if ord == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(a.dtype)
    return np.sum(a ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)


def _matrix_norm_samples(dtype, requires_grad):
    a = _rand((3, 2), dtype, requires_grad)
    yield SampleInput(a)
    for ord in ("nuc", 2, -2, 1, -1, float("inf"), -float("inf")):
        yield SampleInput(a, (ord,), name=f"ord{ord}")
    yield SampleInput(_rand((2, 2, 3), dtype, requires_grad), ("nuc",),
                      dict(dim=(0, 2), keepdim=True), name="dims_keepdim")


def _matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False):
    return np.linalg.norm(a, ord, tuple(dim), keepdim)


def _norm_samples(dtype, requires_grad):
    yield SampleInput(_rand((2, 3), dtype, requires_grad), name="flat")
    yield SampleInput(_rand((4,), dtype, requires_grad), (3,), name="vector")
    yield SampleInput(_rand((3, 3), dtype, requires_grad), ("nuc",), name="matrix")
    yield SampleInput(_rand((2, 3, 2), dtype, requires_grad), (2,), dict(dim=(0, 1)), name="dims")
    yield SampleInput(_rand((2, 3), dtype, requires_grad), kwargs=dict(dim=1, keepdim=True),
                      name="dim_keepdim")


def _norm_ref(a, ord=None, dim=None, keepdim=False):
    if dim is None and ord is None:
        return np.linalg.norm(a.reshape(-1))
    if isinstance(dim, int):
        dim = (dim,)
    return np.linalg.norm(a, ord, None if dim is None else tuple(dim), keepdim)


def _lstsq_samples(dtype, requires_grad):
    yield SampleInput(_rand((4, 3), dtype, requires_grad), (_rand((4, 2), dtype, requires_grad),))
    yield SampleInput(_rand((4, 2), dtype, requires_grad), (_rand((4,), dtype, requires_grad),),
                      name="vector")
    yield SampleInput(_rand((2, 4, 3), dtype, requires_grad), (_rand((2, 4, 1), dtype, requires_grad),),
                      dict(driver="gelsd"), name="batch_gelsd", grad=False,
                      skip=DATA_DEPENDENT)  # residuals only when every matrix has full rank;
    # singular values are not differentiable outputs (as in PyTorch): no gradient checks
    yield SampleInput(_rand((2, 3), dtype, requires_grad), (_rand((2, 2), dtype, requires_grad),),
                      name="underdetermined")


def _lstsq_ref(a, b, rcond=None, *, driver="gelsy"):
    """PyTorch's outputs: the minimum-norm solution; residuals (gelsd/gelss, tall, full
    rank) and singular values (gelsd/gelss) or empty; the rank."""
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    x = np.linalg.pinv(a) @ bm
    sv = np.linalg.svd(a, compute_uv=False)
    m, n = a.shape[-2:]
    rank = np.linalg.matrix_rank(a)
    empty = np.zeros(0, a.dtype)
    full = driver in ("gelsd", "gelss")
    residuals = np.sum(np.abs(a @ x - bm) ** 2, -2) if full and m > n else empty
    if vector:
        x = x[..., 0]
        residuals = residuals[..., 0] if residuals.size else residuals
    return x, residuals, rank, sv if full else empty


def _pinv_samples(dtype, requires_grad):
    yield SampleInput(_rand((4, 3), dtype, requires_grad))
    yield SampleInput(_rand((2, 2, 3), dtype, requires_grad), name="batch")
    yield SampleInput(_rand((2, 3, 0), dtype, requires_grad), name="empty")
    yield SampleInput(_spread((3, 3), dtype, requires_grad), kwargs=dict(hermitian=True),
                      name="hermitian", grad=False)  # reads one triangle (Note [Hermitian inputs])


def _pinv_ref(a, *, hermitian=False, **kw):
    if hermitian:   # the Hermitian matrix whose lower triangle a holds (real diagonal)
        a = np.tril(a, -1) + _np_mH(np.tril(a, -1)) + np.diag(np.diagonal(a).real)
    return np.linalg.pinv(a)


def _pinverse_samples(dtype, requires_grad):
    yield SampleInput(_rand((4, 3), dtype, requires_grad))
    yield SampleInput(_rand((2, 2, 3), dtype, requires_grad), (1e-10,), name="batch_rcond")


def _multi_dot_samples(dtype, requires_grad):
    def m(*shape):
        return _rand(shape, dtype, requires_grad)
    yield SampleInput([m(2, 3), m(3, 4)])
    yield SampleInput([m(2, 3), m(3, 4), m(4, 2)], name="three")
    yield SampleInput([m(3), m(3, 4), m(4, 2), m(2)], name="vector_ends")


def _cross_samples(dtype, requires_grad):
    yield SampleInput(_rand((2, 3), dtype, requires_grad), (_rand((2, 3), dtype, requires_grad),))
    yield SampleInput(_rand((1, 3), dtype, requires_grad), (_rand((2, 3), dtype, requires_grad),),
                      name="broadcast")
    yield SampleInput(_rand((3, 2), dtype, requires_grad), (_rand((3, 2), dtype, requires_grad),),
                      dict(dim=0), name="dim0")


def _cross_ref(a, b, dim=-1):
    return np.cross(a, b, axis=dim)


def _vecdot_samples(dtype, requires_grad):
    yield SampleInput(_rand((2, 3), dtype, requires_grad), (_rand((2, 3), dtype, requires_grad),))
    yield SampleInput(_rand((3, 2), dtype, requires_grad), (_rand((2,), dtype, requires_grad),),
                      dict(dim=0), name="dim0_broadcast")


def _vecdot_ref(x, y, dim=-1):
    return np.sum(np.conj(x) * y, axis=dim)


def _cond_samples(dtype, requires_grad):
    yield SampleInput(_rand((3, 2), dtype, requires_grad))
    yield SampleInput(_mat((2, 3, 3), dtype, requires_grad), ("fro",), name="fro_batch")
    yield SampleInput(_mat((3, 3), dtype, requires_grad), (-2,), name="minus2")


def _matrix_rank_samples(dtype, requires_grad):
    a = _rand((4, 2), dtype, False)
    yield SampleInput(a)
    yield SampleInput(torch.cat([a, a[:, :1] * 2], 1), name="deficient")
    yield SampleInput(_spread((2, 3, 3), dtype, False), kwargs=dict(hermitian=True, atol=0.5),
                      name="hermitian_atol")


def _matrix_rank_ref(a, *, hermitian=False, atol=None):
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    if atol is None:   # PyTorch's default: eps * max(m, n) relative to the largest
        atol = s.max(-1, keepdims=True) * np.finfo(a.dtype).eps * max(a.shape[-2:])
    return (s > atol).sum(-1)


def _real_result(s):
    return s.input.dtype.to_real()


register(
    _linalg("vector_norm", ref=_vector_norm_ref, result_dtype=_real_result,
            sample_inputs=_vector_norm_samples, dtypes=_WITH_COMPLEX),
    _linalg("matrix_norm", ref=_matrix_norm_ref, result_dtype=_real_result,
            sample_inputs=_matrix_norm_samples, dtypes=_WITH_COMPLEX),
    _linalg("norm", ref=_norm_ref, result_dtype=_real_result, sample_inputs=_norm_samples,
            dtypes=_WITH_COMPLEX),
    _linalg("lstsq", ref=_lstsq_ref, result_dtype=SAME, sample_inputs=_lstsq_samples),
    _linalg("pinv", ref=_pinv_ref, result_dtype=SAME, sample_inputs=_pinv_samples,
            dtypes=_WITH_COMPLEX),
    OpInfo("pinverse", ref=lambda a, rcond=1e-15: np.linalg.pinv(a, rcond), result_dtype=SAME,
           sample_inputs=_pinverse_samples),
    _linalg("multi_dot", ref=np.linalg.multi_dot, result_dtype=lambda s: s.input[0].dtype,
            sample_inputs=_multi_dot_samples, dtypes=_WITH_COMPLEX),
    _linalg("cross", ref=_cross_ref, result_dtype=SAME, sample_inputs=_cross_samples),
    _linalg("vecdot", ref=_vecdot_ref, result_dtype=SAME, sample_inputs=_vecdot_samples,
            dtypes=_WITH_COMPLEX),
    _linalg("cond", ref=lambda a, p=None: np.linalg.cond(a, p), result_dtype=_real_result,
            sample_inputs=_cond_samples, dtypes=_WITH_COMPLEX),
    _linalg("matrix_rank", ref=_matrix_rank_ref, result_dtype=lambda s: torch.int64,
            sample_inputs=_matrix_rank_samples, supports_grad=False),
)
