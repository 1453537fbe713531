"""Linear-algebra primitives: solve, triangular_solve, cholesky, qr, eigh, eigvalsh, svd,
svdvals, det, slogdet.

Every primitive acts on the last two dims and maps over any leading (batch) dims, as
NumPy's ``linalg`` does, so each batch rule only moves the vmapped dim to the front
(Note [Batched linalg]). Operands of the two-operand primitives have equal batch shapes
(the ops layer broadcasts). Derivative rules follow the standard matrix calculus results
(Giles, "Collected matrix derivative results"; Seeger et al., "Auto-differentiating linear
algebra"), written with numtorch ops so that they are differentiable again. Failures that
PyTorch reports with an index (a zero pivot, a non-positive minor) raise `LinAlgError`
subclasses carrying that index; ``_ops/linalg_ops.py`` words the message per function.
"""
from __future__ import annotations

import numpy as np

from .._core.primitive import Primitive
from ._helpers import T, move_bdim


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a numerical failure of a linear-algebra routine."""


class SingularError(LinAlgError):
    """A zero pivot: ``batch`` is the flat batch index, ``pivot`` the 1-based diagonal element."""

    def __init__(self, batch, pivot):
        super().__init__(f"The diagonal element {pivot} is zero, the inversion could not be "
                         "completed because the input matrix is singular.")
        self.batch, self.pivot = batch, pivot


class NotPositiveDefiniteError(LinAlgError):
    def __init__(self, batch, order):
        super().__init__(f"The factorization could not be completed because the input is not "
                         f"positive-definite (the leading minor of order {order} is not "
                         "positive-definite).")
        self.batch, self.order = batch, order


# ---------------------------------------------------------------------------------------
# Helpers (rules are written with these; all are numtorch ops)

def _mT(x):
    return x.transpose(-2, -1)


def _mH(x):
    return _mT(x).conj() if x.is_complex() else _mT(x)


def _conj(x):
    return x.conj() if x.is_complex() else x


def _eye_like(x, n=None):
    n = x.shape[-1] if n is None else n
    return T.eye(n, dtype=x.dtype, device=x.device)


def _tri(x, lower, unit=False):
    """The triangle the triangular primitives read (strict when the diagonal is implicit 1)."""
    if lower:
        return T.tril(x, -1 if unit else 0)
    return T.triu(x, 1 if unit else 0)


def _diag(x):
    return T.diagonal(x, 0, -2, -1)


def _trace(x):
    return _diag(x).sum(-1)


def _expand(v):
    """(..., ) -> (..., 1, 1) for scaling a batch of matrices."""
    return v.unsqueeze(-1).unsqueeze(-1)


def _safe_reciprocal_gaps(v):
    """F[i, j] = 1 / (v[j] - v[i]) off the diagonal, 0 where the gap is 0 (Note [Eigen gaps])."""
    gaps = v.unsqueeze(-2) - v.unsqueeze(-1)
    zero = gaps == 0
    return T.where(zero, T.zeros_like(gaps), 1 / T.where(zero, T.ones_like(gaps), gaps))


# Note [Eigen gaps]
# Derivatives of eigenvectors and singular vectors divide by the gaps between eigenvalues
# (squared singular values). Where a gap is exactly 0 (the diagonal, or a repeated value)
# we use 0 instead of 1/0: the vectors are then not differentiable anyway, and the common
# case — a loss that uses only the values, so that the engine hands the vector outputs a
# zero cotangent — stays finite instead of 0 * inf = nan.


def _batch_front(prim):
    """Note [Batched linalg]: every linalg primitive already maps over leading dims."""
    def batch(values, bdims, **params):
        out = prim.bind(*[move_bdim(v, d, 0) for v, d in zip(values, bdims)], **params)
        return out, ((0,) * len(out) if prim.multiple_results else 0)
    return batch


def _batched_pair(prim):
    """Batch rule of solve-like primitives: an unbatched A keeps B's batch as extra columns."""
    def batch(values, bdims, **params):
        (a, b), (da, db) = values, bdims
        if da is None:
            b = move_bdim(b, db, b.ndim - 2)             # (..., n, B, k)
            lead, (n, nb, k) = tuple(b.shape[:-3]), tuple(b.shape[-3:])
            x = prim.bind(a, b.reshape(lead + (n, nb * k)), **params)
            return x.reshape(lead + (n, nb, k)), len(lead) + 1
        a = move_bdim(a, da, 0)
        if db is None:
            b = T.broadcast_to(b.unsqueeze(0), (a.shape[0],) + tuple(b.shape))
        else:
            b = move_bdim(b, db, 0)
        return prim.bind(a, b, **params), 0
    return batch


def _shape_square(a, what):
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise TypeError(f"{what}: expected square matrices, got {a.shape}")


# ---------------------------------------------------------------------------------------
# solve(a, b): a X = b for square a.

def _first_zero_pivot(a):
    """1-based index of the first zero pivot of LU with partial pivoting (0 if none)."""
    u = np.array(a, dtype=np.result_type(a.dtype, np.float64))
    n = u.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            return j + 1
        u[[j, p]] = u[[p, j]]
        u[j + 1:] -= np.outer(u[j + 1:, j] / u[j, j], u[j])
    return 0


def _raise_singular(a):
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        pivot = _first_zero_pivot(m)
        if pivot:
            raise SingularError(i, pivot)
    raise SingularError(0, a.shape[-1])


def _solve_impl(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        _raise_singular(a)


def _solve_shape(a, b):
    _shape_square(a, "solve")
    if a.shape[:-1] != b.shape[:-1] or a.dtype != b.dtype:
        raise TypeError(f"solve: operands {a.shape} {a.dtype} and {b.shape} {b.dtype} differ")
    return b.shape, b.dtype


def _solve_vjp(g, x, a, b):
    memo = []

    def grad_b():
        if not memo:
            memo.append(solve.bind(_mH(a), g))
        return memo[0]
    return (lambda: -(grad_b() @ _mH(x))), grad_b


def _solve_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    x = solve.bind(a, b)
    rhs = tb if tb is not None else T.zeros_like(b)
    if ta is not None:
        rhs = rhs - ta @ x
    return x, solve.bind(a, rhs)


solve = Primitive("solve", impl=_solve_impl, shape=_solve_shape, jvp=_solve_jvp,
                  vjp=_solve_vjp)
solve.batch = _batched_pair(solve)


# ---------------------------------------------------------------------------------------
# triangular_solve(a, b, lower, unit_diagonal): tri(a) X = b; only a's triangle is read.

def _substitute(a, b, lower):
    """Forward/back substitution over rows, vectorised over batch and columns (singular a)."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 dtype=np.result_type(a, b))
    rows = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in rows:
            done = slice(0, i) if lower else slice(i + 1, n)
            acc = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
            x[..., i, :] = acc / a[..., i, i, None]
    return x


def _tri_impl(a, b, *, lower, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    try:
        return np.linalg.solve(t, b)
    except np.linalg.LinAlgError:     # PyTorch returns inf/nan here rather than raising
        return _substitute(t, b, lower)


def _tri_vjp(g, x, a, b, *, lower, unit_diagonal):
    memo = []

    def grad_b():
        if not memo:
            memo.append(triangular_solve.bind(_mH(a), g, lower=not lower,
                                              unit_diagonal=unit_diagonal))
        return memo[0]
    return (lambda: -_tri(grad_b() @ _mH(x), lower, unit_diagonal)), grad_b


def _tri_jvp(primals, tangents, *, lower, unit_diagonal):
    (a, b), (ta, tb) = primals, tangents
    x = triangular_solve.bind(a, b, lower=lower, unit_diagonal=unit_diagonal)
    rhs = tb if tb is not None else T.zeros_like(b)
    if ta is not None:
        rhs = rhs - _tri(ta, lower, unit_diagonal) @ x
    return x, triangular_solve.bind(a, rhs, lower=lower, unit_diagonal=unit_diagonal)


triangular_solve = Primitive(
    "triangular_solve", impl=_tri_impl, jvp=_tri_jvp, vjp=_tri_vjp,
    shape=lambda a, b, **p: _solve_shape(a, b))
triangular_solve.batch = _batched_pair(triangular_solve)


def _right_solve(x, r, lower=False):
    """x @ inv(r) for triangular r: (r^-H x^H)^H, and r^H has the other triangle."""
    return _mH(triangular_solve.bind(_mH(r), _mH(x), lower=not lower, unit_diagonal=False))


# ---------------------------------------------------------------------------------------
# cholesky(a): lower L with L L^H = a (a's lower triangle is read).

def _cholesky_impl(a):
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        flat = a.reshape((-1,) + a.shape[-2:])
        for i, m in enumerate(flat):
            for k in range(1, m.shape[-1] + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    raise NotPositiveDefiniteError(i, k) from None
        raise


# Note [Hermitian tangents]
# cholesky and eigh read one triangle of their input, and (as in PyTorch) their derivatives
# are defined for Hermitian perturbations only: the vjps return PyTorch's cotangents. The
# jvps are written as the exact transposes of those vjps, so they agree with PyTorch's on
# Hermitian tangents and <u, jvp(t)> == <vjp(u), t> holds for every tangent. For eigh
# that is the jvp of the Hermitian part of t (its vjp is Hermitian); for cholesky, whose
# complex vjp keeps an imaginary diagonal, Phi(X) becomes (tril(X) + tril(X^H, -1)) / 2
# (equal to Phi(X) when X is Hermitian).

def _hermitian_part(t):
    return 0.5 * (t + _mH(t))


def _cholesky_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    lo = cholesky.bind(a)
    p = triangular_solve.bind(lo, ta, lower=True, unit_diagonal=False)          # L^-1 dA
    inner = _mH(triangular_solve.bind(lo, _mH(p), lower=True, unit_diagonal=False))
    return lo, lo @ (0.5 * (T.tril(inner) + T.tril(_mH(inner), -1)))   # Note [Hermitian tangents]


def _cholesky_vjp(g, lo, a):
    p = T.tril(_mH(lo) @ g)
    m = 0.5 * (p + _mH(T.tril(p, -1)))
    y = triangular_solve.bind(_mH(lo), m, lower=False, unit_diagonal=False)   # L^-H M
    return (_right_solve(y, lo, lower=True),)                                 # L^-H M L^-1


def _square_shape(what):
    def shape(a, **params):
        _shape_square(a, what)
        return a.shape, a.dtype
    return shape


cholesky = Primitive("cholesky", impl=_cholesky_impl, shape=_square_shape("cholesky"),
                     jvp=_cholesky_jvp, vjp=_cholesky_vjp)
cholesky.batch = _batch_front(cholesky)


# ---------------------------------------------------------------------------------------
# qr(a, complete) -> (q, r). Derivatives for the reduced factorization, and for complete
# when it is the reduced one (m <= n), as PyTorch.

def _qr_shape(a, *, complete):
    m, n = a.shape[-2:]
    k = m if complete else min(m, n)
    return (a.shape[:-2] + (m, k), a.dtype), (a.shape[:-2] + (k, n), a.dtype)


def _real_dtype(dtype):
    return np.empty(0, dtype).real.dtype


def _check_qr_differentiable(a, complete):
    m, n = a.shape[-2:]
    if complete and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")


def _skew_lower(c):
    """The skew-Hermitian matrix whose strict lower triangle is c's (plus i*Im(diag c))."""
    low = T.tril(c, -1)
    out = low - _mH(low)
    if c.is_complex():
        out = out + T.diag_embed(_diag(c) - _diag(c).real.to(c.dtype))
    return out


def _qr_square_jvp(q, r, ta):
    """dQ, dR of A = QR (m >= n, reduced) for the tangent ta."""
    da_rinv = _right_solve(ta, r)
    c = _mH(q) @ da_rinv
    omega = _skew_lower(c)
    return da_rinv + q @ (omega - c), (c - omega) @ r


def _qr_jvp(primals, tangents, *, complete):
    (a,), (ta,) = primals, tangents
    q, r = qr.bind(a, complete=complete)
    _check_qr_differentiable(a, complete)
    m, n = a.shape[-2:]
    if m >= n:
        dq, dr = _qr_square_jvp(q, r, ta)
        return (q, r), (dq, dr)
    # Wide: A = [X | Y], X = Q R_X, R = [R_X | Q^H Y].
    dq, drx = _qr_square_jvp(q, r[..., :m], ta[..., :m])
    y, dy = a[..., m:], ta[..., m:]
    return (q, r), (dq, T.cat([drx, _mH(dq) @ y + _mH(q) @ dy], -1))


def _copy_upper_to_lower(x):
    """X + X^H with the diagonal counted once (real part): the inverse of taking triu."""
    up = T.triu(x)
    out = up + _mH(T.triu(x, 1))
    if x.is_complex():
        out = out - 1j * T.diag_embed(_diag(x).imag).to(x.dtype)
    return out


def _qr_square_vjp(gq, gr, q, r):
    m = gr @ _mH(r) - _mH(q) @ gq
    ga = q @ _copy_upper_to_lower(m) + gq
    return _right_solve(ga, _mH(r), lower=True)                               # ga R^{-H}


def _qr_vjp(cts, outs, a, *, complete):
    _check_qr_differentiable(a, complete)
    (gq, gr), (q, r) = cts, outs
    m, n = a.shape[-2:]
    if m >= n:
        return (_qr_square_vjp(gq, gr, q, r),)
    y, gv = a[..., m:], gr[..., m:]
    gx = _qr_square_vjp(gq + y @ _mH(gv), gr[..., :m], q, r[..., :m])
    return (T.cat([gx, q @ gv], -1),)


qr = Primitive("qr", impl=lambda a, *, complete: tuple(np.linalg.qr(a, "complete" if complete else "reduced")),
               shape=_qr_shape, jvp=_qr_jvp, vjp=_qr_vjp, multiple_results=True)
qr.batch = _batch_front(qr)


# ---------------------------------------------------------------------------------------
# eigh(a, lower) -> (w, v) and eigvalsh(a, lower) -> w, for Hermitian a (one triangle read).

def _eigh_shape(a, *, lower):
    _shape_square(a, "eigh")
    return (a.shape[:-1], _real_dtype(a.dtype)), (a.shape, a.dtype)


def _eigh_jvp(primals, tangents, *, lower):
    (a,), (ta,) = primals, tangents
    w, v = eigh.bind(a, lower=lower)
    k = _mH(v) @ _hermitian_part(ta) @ v          # Note [Hermitian tangents]
    dw = _diag(k).real if k.is_complex() else _diag(k)
    return (w, v), (dw, v @ (_safe_reciprocal_gaps(w).to(k.dtype) * k))


def _eigh_vjp(cts, outs, a, *, lower):
    (gw, gv), (w, v) = cts, outs
    vhgv = _mH(v) @ gv
    inner = 0.5 * (vhgv - _mH(vhgv)) * _safe_reciprocal_gaps(w).to(vhgv.dtype)
    inner = inner + T.diag_embed(gw.to(inner.dtype))
    return (v @ inner @ _mH(v),)


eigh = Primitive("eigh", impl=lambda a, *, lower: tuple(np.linalg.eigh(a, "L" if lower else "U")),
                 shape=_eigh_shape, jvp=_eigh_jvp, vjp=_eigh_vjp, multiple_results=True)
eigh.batch = _batch_front(eigh)


def _eigvalsh_jvp(primals, tangents, *, lower):
    (w, v), (dw, _) = _eigh_jvp(primals, tangents, lower=lower)
    return w, dw


def _eigvalsh_vjp(g, w, a, *, lower):
    v = eigh.bind(a, lower=lower)[1]
    return ((v * g.to(v.dtype).unsqueeze(-2)) @ _mH(v),)


eigvalsh = Primitive(
    "eigvalsh", impl=lambda a, *, lower: np.linalg.eigvalsh(a, "L" if lower else "U"),
    shape=lambda a, *, lower: _eigh_shape(a, lower=lower)[0], jvp=_eigvalsh_jvp,
    vjp=_eigvalsh_vjp)
eigvalsh.batch = _batch_front(eigvalsh)


# ---------------------------------------------------------------------------------------
# svd(a, full_matrices) -> (u, s, vh) and svdvals(a) -> s.

def _svd_shape(a, *, full_matrices):
    m, n = a.shape[-2:]
    k = min(m, n)
    lead = a.shape[:-2]
    mu, nv = (m, n) if full_matrices else (k, k)
    return ((lead + (m, mu), a.dtype), (lead + (k,), _real_dtype(a.dtype)),
            (lead + (nv, n), a.dtype))


def _svd_impl(a, *, full_matrices):
    if 0 in a.shape:   # U and Vh are still unitary: identities (PyTorch's, LAPACK's choice)
        u, s, vh = (np.zeros(s, d) for s, d in _svd_shape(a, full_matrices=full_matrices))
        u[...], vh[...] = np.eye(*u.shape[-2:]), np.eye(*vh.shape[-2:])
        return u, s, vh
    return tuple(np.linalg.svd(a, full_matrices=full_matrices))


def _svd_jvp(primals, tangents, *, full_matrices):
    (a,), (ta,) = primals, tangents
    outs = svd.bind(a, full_matrices=full_matrices)
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vh = outs[0][..., :k], outs[1], outs[2][..., :k, :]
    v = _mH(vh)
    ds_mat = _mH(u) @ ta @ v
    ds = _diag(ds_mat).real if ds_mat.is_complex() else _diag(ds_mat)
    f = _safe_reciprocal_gaps(s * s).to(a.dtype)
    sc = s.to(a.dtype)
    inner_u = f * (ds_mat * sc.unsqueeze(-2) + sc.unsqueeze(-1) * _mH(ds_mat))
    if a.is_complex():
        inner_u = inner_u + T.diag_embed((_diag(ds_mat) - _conj(_diag(ds_mat))) / (2 * sc))
    du = u @ inner_u
    dv = v @ (f * (sc.unsqueeze(-1) * ds_mat + _mH(ds_mat) * sc.unsqueeze(-2)))
    if m > k:
        dav = ta @ v
        du = du + (dav - u @ (_mH(u) @ dav)) / sc.unsqueeze(-2)
    if n > k:
        dahu = _mH(ta) @ u
        dv = dv + (dahu - v @ (vh @ dahu)) / sc.unsqueeze(-2)
    if full_matrices and m != n:
        raise RuntimeError("linalg.svd: the derivative of the full (complete) factor is not "
                           "defined; use full_matrices=False")
    return outs, (du, ds, _mH(dv))


def _svd_vjp(cts, outs, a, *, full_matrices):
    m, n = a.shape[-2:]
    k = min(m, n)
    (gu, gs, gvh), (u, s, vh) = cts, outs
    u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
    sc = s.to(a.dtype)
    uhgu = _mH(u) @ gu
    vhgv = vh @ _mH(gvh)
    f = _safe_reciprocal_gaps(s * s).to(a.dtype)
    inner = f * ((uhgu - _mH(uhgu)) * sc.unsqueeze(-2) + sc.unsqueeze(-1) * (vhgv - _mH(vhgv)))
    inner = inner + T.diag_embed(gs.to(a.dtype))
    if a.is_complex():
        inner = inner + T.diag_embed((_diag(uhgu) - _conj(_diag(uhgu))) / (2 * sc))
    if m > k:
        ga = u @ inner + (gu - u @ uhgu) / sc.unsqueeze(-2)
        return (ga @ vh,)
    if n > k:
        ga = inner @ vh + (gvh - _mH(vhgv) @ vh) / sc.unsqueeze(-1)
        return (u @ ga,)
    return (u @ inner @ vh,)


svd = Primitive("svd", impl=_svd_impl, shape=_svd_shape, jvp=_svd_jvp, vjp=_svd_vjp,
                multiple_results=True)
svd.batch = _batch_front(svd)


def _svdvals_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    u, s, vh = svd.bind(a, full_matrices=False)
    d = _diag(_mH(u) @ ta @ _mH(vh))
    return s, (d.real if d.is_complex() else d)


def _svdvals_vjp(g, s, a):
    u, _, vh = svd.bind(a, full_matrices=False)
    return (((u * g.to(u.dtype).unsqueeze(-2)) @ vh),)


svdvals = Primitive(
    "svdvals", impl=lambda a: np.linalg.svd(a, compute_uv=False) if a.size else
    np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), _real_dtype(a.dtype)),
    shape=lambda a: _svd_shape(a, full_matrices=False)[1], jvp=_svdvals_jvp, vjp=_svdvals_vjp)
svdvals.batch = _batch_front(svdvals)


# ---------------------------------------------------------------------------------------
# det(a) and slogdet(a) -> (sign, logabsdet)

def _inverse_h(a, det):
    """A^{-H}, with A replaced by I where det(A) == 0 so that the solve cannot fail; the
    callers multiply by det, giving PyTorch's zero gradient at exactly singular A."""
    eye = _eye_like(a)
    safe = T.where(_expand(det == 0), T.broadcast_to(eye, tuple(a.shape)), a)
    return _mH(solve.bind(safe, T.broadcast_to(eye, tuple(a.shape))))


def _det_vjp(g, det, a):
    return (lambda: _expand(g * _conj(det)) * _inverse_h(a, det),)


def _det_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    det = det_p.bind(a)
    return det, det * _trace(_mH(_inverse_h(a, det)) @ ta)


def _det_shape(a):
    _shape_square(a, "det")
    return a.shape[:-2], a.dtype


det_p = Primitive("det", impl=lambda a: np.asarray(np.linalg.det(a)), shape=_det_shape,
                  jvp=_det_jvp, vjp=_det_vjp)
det_p.batch = _batch_front(det_p)


def _slogdet_shape(a):
    _shape_square(a, "slogdet")
    return (a.shape[:-2], a.dtype), (a.shape[:-2], _real_dtype(a.dtype))


def _slogdet_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    sign, logabs = slogdet.bind(a)
    t = _trace(solve.bind(a, ta))
    if a.is_complex():
        return (sign, logabs), (sign * (1j * t.imag).to(a.dtype), t.real)
    return (sign, logabs), (T.zeros_like(sign), t)


def _slogdet_vjp(cts, outs, a):
    (gsign, glog), (sign, _) = cts, outs
    g = glog.to(a.dtype)
    if a.is_complex():
        g = g + 1j * (_conj(sign) * gsign).imag.to(a.dtype)
    return (lambda: _expand(g) * _mH(solve.bind(a, T.broadcast_to(_eye_like(a), tuple(a.shape)))),)


slogdet = Primitive("slogdet", impl=lambda a: tuple(np.asarray(r) for r in np.linalg.slogdet(a)),
                    shape=_slogdet_shape, jvp=_slogdet_jvp, vjp=_slogdet_vjp,
                    multiple_results=True)
slogdet.batch = _batch_front(slogdet)

# Lower rules (Note [Lower rules], _lower.py)
from ._lower import extern  # noqa: E402

for _p in (solve, triangular_solve, cholesky, qr, eigh, eigvalsh, svd, svdvals, det_p, slogdet):
    _p.lower = extern("linear algebra: LAPACK through NumPy")
