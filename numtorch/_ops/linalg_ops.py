"""``numtorch.linalg``: PyTorch's linear-algebra functions on the primitives of
``_prims/linalg.py``, plus the top-level aliases (``torch.inverse``, ``torch.det``, …).

This module owns PyTorch's argument conventions (vector right-hand sides, ``left=``,
``UPLO``, ``mode``, ``ord``), broadcasting of batch dims, and PyTorch's error messages;
the math of every derivative lives with the primitives. Matrix products (``matmul``,
``cross``) live in ``_ops/linalg.py`` and are reused here. Every norm lives here
(``vector_norm``, ``matrix_norm``, ``linalg.norm`` and ``torch.norm``): the products and
the reductions sit below this file and never import it.
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import math

import numpy as np

from .._core import dtypes as _dt
from .._core.primitive import bind
from .._core.tensor import Tensor
from .._prims import linalg as L
from .._prims.linalg import LinAlgError
from . import math as M
from . import reduce as R
from . import shape as SH
from ._backward_names import backward_name
from ._common import broadcast_shapes, broadcast_to, convert, scalar_type_name
from .creation import eye, tensor, zeros
from .linalg import cross as _cross, matmul  # noqa: F401  (re-exported)
from .. import return_types as _rt

__all__ = ["LinAlgError", "inv", "solve", "solve_triangular", "det", "slogdet",
           "logdet", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals",
           "norm", "vector_norm", "matrix_norm", "cross", "matrix_power", "pinv", "lstsq",
           "cond", "matrix_rank", "multi_dot", "matmul", "vecdot", "diagonal"]


# ---------------------------------------------------------------------------------------
# Argument checks with PyTorch's messages

def _check_float(a, fn, name="input"):
    if not isinstance(a, Tensor):
        raise TypeError(f"{fn}(): argument '{name if name != 'input' else 'A'}' must be Tensor, "
                        f"not {type(a).__name__}")
    if a._data.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as {name}. Got "
                           f"{scalar_type_name(a.dtype)}")


def _check_matrix(a, fn, name="A"):
    if a.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")


def _check_square(a, fn, name="A"):
    _check_matrix(a, fn, name)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


def _square_float(a, fn):
    _check_float(a, fn)
    _check_square(a, fn)


def _batch_prefix(a, index):
    return f"(Batch element {index}): " if a.ndim > 2 else ""


@contextlib.contextmanager
def _linalg_errors(a, fn, singular=None):
    """Word the primitives' indexed failures as ``fn`` does in PyTorch."""
    try:
        yield
    except L.SingularError as e:
        msg = singular or str(e)
        raise LinAlgError(f"{fn}: {_batch_prefix(a, e.batch) if singular is None else ''}{msg}") from None
    except L.NotPositiveDefiniteError as e:
        raise LinAlgError(f"{fn}: {_batch_prefix(a, e.batch)}{e}") from None


def _same_dtype(a, b, fn):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_type_name(a.dtype)} and B of type {scalar_type_name(b.dtype)} "
                           "instead")


def _broadcast_batch(a, b):
    """Broadcast the batch dims of a matrix a and a matrix b (the last two dims kept)."""
    batch = broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    return (broadcast_to(a, batch + tuple(a.shape[-2:])),
            broadcast_to(b, batch + tuple(b.shape[-2:])))


def _mH(x):
    return M.conj(SH.transpose(x, -2, -1))


def _with_out(fn):
    """PyTorch's ``out=``: the result is copied into ``out`` (resized if need be)."""
    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        return M._out(fn(*args, **kwargs), out)
    return wrapper


# ---------------------------------------------------------------------------------------
# Solvers and inverses

@_with_out
def solve(A, B, *, left=True):
    """Computes the solution of a square system of linear equations ``AX = B`` (``XA = B``
    with ``left=False``). ``B`` is a batch of vectors when it has one dim less than ``A``
    and ``B.shape == A.shape[:-1]``.

    >>> solve(tensor([[2.0, 0.0], [0.0, 4.0]]), tensor([2.0, 2.0]))
    tensor([1.0000, 0.5000])
    """
    fn = "linalg.solve"
    _check_float(A, fn)
    _check_square(A, fn)
    _same_dtype(A, B, fn)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = B.unsqueeze(-1) if vector else B
    if not left:
        b = SH.transpose(b, -2, -1)
    n = A.shape[-1]
    if b.ndim < 2 or b.shape[-2] != n:
        rows = b.shape[-2] if b.ndim >= 2 else b.shape[0]
        cols = b.shape[-1] if b.ndim >= 2 else 1
        eq = "AX = B" if left else "XA = B"
        shown = f"{rows}x{cols}" if left else f"{cols}x{rows}"
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} "
                           f"({A.shape[-2]}x{n} and {shown})")
    a = A if left else SH.transpose(A, -2, -1)
    a, b = _broadcast_batch(a, b)
    with _linalg_errors(A, "torch.linalg.solve",
                        "The solver failed because the input matrix is singular."):
        x = bind(L.solve, a, b)
    if not left:
        x = SH.transpose(x, -2, -1)
    return x.squeeze(-1) if vector else x


@_with_out
def inv(A):
    """Computes the inverse of a square matrix (batches of matrices allowed).

    >>> inv(tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    _square_float(A, "linalg.inv")
    identity = broadcast_to(eye(A.shape[-1], dtype=A.dtype, device=A.device), tuple(A.shape))
    with _linalg_errors(A, "linalg.inv"):
        return bind(L.solve, A, identity)


@_with_out
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """Computes the solution of a triangular system ``AX = B`` (or ``XA = B``); only the
    ``upper`` or lower triangle of ``A`` is read.

    >>> solve_triangular(tensor([[2.0, 1.0], [0.0, 4.0]]), tensor([[3.0], [4.0]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    fn = "linalg.solve_triangular"
    _check_float(A, fn)
    _check_square(A, fn)
    _check_matrix(B, fn, "B")
    _same_dtype(A, B, fn)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq, shown = ("AX = B", f"{B.shape[-2]}x{B.shape[-1]}") if left else \
            ("XA = B", f"{B.shape[-2]}x{B.shape[-1]}")
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {shown})")
    if left:
        a, b = _broadcast_batch(A, B)
        return bind(L.triangular_solve, a, b, lower=not upper, unit_diagonal=bool(unitriangular))
    # X A = B  <=>  A^T X^T = B^T, and A^T has the other triangle.
    a, b = _broadcast_batch(SH.transpose(A, -2, -1), SH.transpose(B, -2, -1))
    x = bind(L.triangular_solve, a, b, lower=bool(upper), unit_diagonal=bool(unitriangular))
    return SH.transpose(x, -2, -1)


@_with_out
def det(A):
    """Computes the determinant of a square matrix.

    >>> det(tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(-2.0000)
    """
    _square_float(A, "linalg.det")
    return bind(L.det_p, A)


def slogdet(A):
    """Computes the sign and natural logarithm of the absolute value of the determinant."""
    _square_float(A, "linalg.slogdet")
    return _rt.linalg_slogdet(*bind(L.slogdet, A))


def logdet(input):
    """Log-determinant: nan for a negative determinant, -inf for a singular matrix."""
    _square_float(input, "logdet")
    sign, logabs = bind(L.slogdet, input)
    if input.is_complex():
        return M.log(sign) + logabs.to(input.dtype)
    return M.where(sign < 0, float("nan"), logabs)


# ---------------------------------------------------------------------------------------
# Decompositions

@_with_out
def cholesky(A, *, upper=False):
    """Computes the Cholesky decomposition ``A = L L^H`` of a Hermitian positive-definite
    matrix (reads its lower triangle); ``upper=True`` returns ``L^H``.

    >>> cholesky(tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    _square_float(A, "linalg.cholesky")
    with _linalg_errors(A, "linalg.cholesky"):
        lo = bind(L.cholesky, A)
    return _mH(lo) if upper else lo


def qr(A, mode="reduced"):
    """Computes the QR decomposition; ``mode`` is 'reduced', 'complete' or 'r' (Q empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_float(A, "linalg.qr")
    _check_matrix(A, "linalg.qr")
    q, r = bind(L.qr, A, complete=mode == "complete")
    if mode == "r":
        q = zeros(0, dtype=A.dtype, device=A.device)
    return _rt.linalg_qr(q, r)


def _uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("L", "l")


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, reading its ``UPLO``
    triangle.

    >>> eigh(tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([1., 2.])
    """
    lower = _uplo(UPLO)
    _square_float(A, "linalg.eigh")
    return _rt.linalg_eigh(*bind(L.eigh, A, lower=lower))


@_with_out
def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of a Hermitian matrix."""
    lower = _uplo(UPLO)
    _square_float(A, "linalg.eigvalsh")
    return bind(L.eigvalsh, A, lower=lower)


def svd(A, full_matrices=True, *, driver=None):
    """Computes the singular value decomposition ``A = U diag(S) Vh``."""
    _check_float(A, "linalg.svd")
    _check_matrix(A, "linalg.svd")
    return _rt.linalg_svd(*bind(L.svd, A, full_matrices=bool(full_matrices)))


@_with_out
def svdvals(A, *, driver=None):
    """Computes the singular values of a matrix, in descending order."""
    _check_float(A, "linalg.svd")
    _check_matrix(A, "linalg.svd")
    return bind(L.svdvals, A)


# ---------------------------------------------------------------------------------------
# Norms

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """Computes a vector ``ord``-norm over ``dim`` (all elements if None).

    >>> vector_norm(tensor([3.0, -4.0]))
    tensor(5.)
    """
    if dtype is not None:
        x = convert(x, _dt.to_dtype(dtype))
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {scalar_type_name(x.dtype)}")
    a = M.abs(x)
    if ord == math.inf:
        return R.amax(a, dim if dim is not None else (), keepdim)
    if ord == -math.inf:
        return R.amin(a, dim if dim is not None else (), keepdim)
    if ord == 0:
        return R.sum((a != 0).to(a.dtype), dim, keepdim)
    if ord == 1:
        return R.sum(a, dim, keepdim)
    if ord == 2:
        return _root_at_zero(R.sum(a * a, dim, keepdim), 2)
    return _root_at_zero(R.sum(a ** ord, dim, keepdim), ord)


def _root_at_zero(s, p):
    """``s ** (1/p)`` whose gradient at ``s == 0`` is PyTorch's zero subgradient, not nan
    (the double-where trick: the root never sees the 0, the outer where drops its branch)."""
    root = M.sqrt if p == 2 else (lambda v: v ** (1.0 / p))
    if s._data.__class__ is np.ndarray and not s._requires_grad:
        return root(s)                      # nothing will differentiate this (eager, no grad)
    zero = s == 0
    r = root(M.where(zero, 1.0, s))
    return M.where(zero, 0.0, r)


def _matrix_dims(A, dim, fn):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {dim if not isinstance(dim, (tuple, list)) else ' '.join(map(str, dim))}")
    d0, d1 = (d % A.ndim if -A.ndim <= d < A.ndim else d for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


@_with_out
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Computes a matrix norm: 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2.

    >>> matrix_norm(tensor([[3.0, 0.0], [0.0, 4.0]]), ord=2)
    tensor(4.)
    """
    fn = "linalg.matrix_norm"
    _check_float(A, fn)
    _check_matrix(A, fn)
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = _matrix_dims(A, dim, fn)
    if ord in ("fro", "nuc"):
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim)
        out = R.sum(bind(L.svdvals, SH.movedim(A, (d0, d1), (-2, -1))), -1)
    elif ord in (2, -2):
        s = bind(L.svdvals, SH.movedim(A, (d0, d1), (-2, -1)))
        out = R.amax(s, -1) if ord == 2 else R.amin(s, -1)
    elif ord in (1, -1, math.inf, -math.inf):
        summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = R.sum(M.abs(A), summed, keepdim=True)
        pick = R.amax if ord > 0 else R.amin
        out = pick(sums, reduced, keepdim=True)
        return out if keepdim else out.squeeze(builtins.max(d0, d1)).squeeze(builtins.min(d0, d1))
    else:
        raise RuntimeError(f"{fn}: Order {ord} not supported.")
    if keepdim:
        out = out.unsqueeze(builtins.min(d0, d1)).unsqueeze(builtins.max(d0, d1))
    return out


@_with_out
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """Computes a vector or matrix norm (a matrix norm when ``dim`` is a 2-tuple or ``A`` is
    2-D with an ``ord``; the 2-norm of the flattened input when both are None)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim or (-2, -1), keepdim, dtype=dtype)
    if ord is not None and dim is None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@backward_name(lambda input, p="fro", *a, **k: None if p == "nuc" else "LinalgVectorNormBackward0")
def norm_top(input, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm``: the vector ``p``-norm (2 for 'fro' or None) over ``dim``, or the
    nuclear norm for ``p='nuc'`` (see ``numtorch.linalg.vector_norm``)."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return matrix_norm(input, "nuc", dim if dim is not None else (-2, -1), keepdim)
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def cond(A, p=None):
    """The condition number of ``A`` in the ``p`` norm (2-norm: largest / smallest singular
    value)."""
    _check_float(A, "linalg.cond")
    _check_matrix(A, "linalg.cond")
    if p in (None, 2, -2):
        s = bind(L.svdvals, A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p in (None, 2) else small / big
    _check_square(A, f"linalg.cond(ord={p})")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    """Numerical rank: the number of singular values above ``max(atol, rtol * s_max)``."""
    _check_float(A, "linalg.matrix_rank")
    _check_matrix(A, "linalg.matrix_rank")
    s = M.abs(bind(L.eigvalsh, A, lower=True)) if hermitian else bind(L.svdvals, A)
    cutoff = _cutoff(A, s, atol if tol is None else tol, rtol)
    return R.sum(s > cutoff, -1)


def _cutoff(A, s, atol, rtol):
    """PyTorch's singular-value threshold: max(atol, rtol * max(s)), rtol = eps*max(m, n)
    when neither is given."""
    if rtol is None:
        rtol = 0.0 if atol is not None and (not isinstance(atol, (int, float)) or atol > 0) else \
            np.finfo(s.dtype.np).eps * builtins.max(A.shape[-2:])
    top = R.amax(s, -1, keepdim=True) if s.shape[-1] else \
        zeros(tuple(s.shape[:-1]) + (1,), dtype=s.dtype, device=s.device)   # an empty matrix
    cut = top * rtol
    if atol is not None:
        cut = M.maximum(cut, atol if isinstance(atol, Tensor) else tensor(float(atol), dtype=s.dtype))
    return cut


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    """The Moore–Penrose pseudoinverse, from the SVD (``eigh`` when ``hermitian``)."""
    _check_float(A, "linalg.pinv")
    _check_matrix(A, "linalg.pinv")
    if rcond is not None:
        rtol = rcond
    if hermitian:
        w, v = bind(L.eigh, A, lower=True)
        keep = M.abs(w) > _cutoff(A, M.abs(w), atol, rtol)
        winv = M.where(keep, 1 / M.where(keep, w, 1.0), 0.0).to(A.dtype)
        return (v * winv.unsqueeze(-2)) @ _mH(v)
    u, s, vh = bind(L.svd, A, full_matrices=False)
    keep = s > _cutoff(A, s, atol, rtol)
    sinv = M.where(keep, 1 / M.where(keep, s, 1.0), 0.0).to(A.dtype)
    return (_mH(vh) * sinv.unsqueeze(-2)) @ _mH(u)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``AX = B`` (minimum norm when underdetermined). Residuals
    are returned for 'gelsd'/'gelss'/'gels' with m > n and full rank, singular values for
    'gelsd'/'gelss', as PyTorch does; the default driver is 'gelsy'."""
    fn = "torch.linalg.lstsq"
    _check_float(A, fn)
    _check_matrix(A, "linalg.lstsq")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if b.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    rtol = np.finfo(A.dtype.np).eps * builtins.max(m, n) if rcond is None or rcond < 0 else rcond
    x = pinv(A, rtol=rtol) @ b
    s = bind(L.svdvals, A)
    rank = R.sum(s > _cutoff(A, s, None, rtol), -1)
    empty = zeros(0, dtype=s.dtype, device=A.device)
    residuals = empty
    if driver != "gelsy" and m > n and bool(R.all(rank == n)):
        residuals = R.sum(M.abs(A @ x - b) ** 2, -2)
    if vector:
        x = x.squeeze(-1)
        residuals = residuals.squeeze(-1) if residuals.numel() else residuals
    # As in PyTorch, the singular values are not differentiable outputs.
    return _rt.linalg_lstsq(x, residuals, rank if driver != "gels" else
                        zeros(0, dtype=_dt.int64, device=A.device),
                        s.detach() if driver in ("gelsd", "gelss") else empty)


# ---------------------------------------------------------------------------------------
# Products

@_with_out
def cross(input, other, *, dim=-1):
    """Cross product of 3-vectors along ``dim`` (inputs broadcast)."""
    shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    d = dim % len(shape) if shape else 0
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    return _cross(broadcast_to(input, shape), broadcast_to(other, shape), d)


def matrix_power(A, n):
    """Computes the ``n``-th power of a square matrix (inverse powers for ``n < 0``).

    >>> matrix_power(tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    _check_square(A, "linalg.matrix_power")
    if n == 0:
        return broadcast_to(eye(A.shape[-1], dtype=A.dtype, device=A.device), tuple(A.shape)).clone()
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


@_with_out
def multi_dot(tensors):
    """Product of two or more matrices in the cheapest order (the first and last may be
    vectors), chosen by dynamic programming over the chain."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    mats = [first.unsqueeze(0) if first.ndim == 1 else first] + tensors[1:-1] + \
        [last.unsqueeze(1) if last.ndim == 1 else last]
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    k = len(mats)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def chain(i, j):
        return mats[i] if i == j else matmul(chain(i, split[i][j]), chain(split[i][j] + 1, j))
    result = chain(0, k - 1)
    if first.ndim == 1:
        result = result.squeeze(0)
    if last.ndim == 1:
        result = result.squeeze(-1)
    return result


@_with_out
def vecdot(x, y, *, dim=-1):
    """The dot product of vectors along ``dim`` (the first argument conjugated)."""
    return R.sum(M.conj(x) * y, dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``torch.diagonal`` with the matrix dims last by default."""
    return SH.diagonal(A, offset, dim1, dim2)


# ---------------------------------------------------------------------------------------
# Top-level aliases (torch.inverse, torch.det, torch.cholesky, torch.svd, …)

@_with_out
def inverse(input):
    """Alias of ``linalg.inv``."""
    return inv(input)


@_with_out
def cholesky_top(input, upper=False):
    """``torch.cholesky`` (deprecated in PyTorch in favour of ``linalg.cholesky``)."""
    return cholesky(input, upper=upper)


def pinverse(input, rcond=1e-15):
    """Alias of ``linalg.pinv`` with PyTorch's ``rcond``."""
    return pinv(input, rtol=rcond)


def slogdet_top(input):
    """``torch.slogdet``: ``torch.linalg.slogdet`` as ``torch.return_types.slogdet``."""
    return _rt.slogdet(*slogdet(input))


def svd_top(input, some=True, compute_uv=True):
    """``torch.svd``: returns ``(U, S, V)`` (V, not Vh); ``some`` gives the reduced factors."""
    if not compute_uv:     # PyTorch returns zero-filled U and V then
        s = svdvals(input)
        m, n = input.shape[-2:]
        lead = tuple(input.shape[:-2])
        return _rt.svd(zeros(lead + (m, m), dtype=input.dtype, device=input.device), s,
                         zeros(lead + (n, n), dtype=input.dtype, device=input.device))
    u, s, vh = svd(input, full_matrices=not some)
    return _rt.svd(u, s, _mH(vh))


@_with_out
def cholesky_solve(B, L_, upper=False):
    """Solves ``A X = B`` given the Cholesky factor of ``A``."""
    lower = _mH(L_) if upper else L_                     # A = lower @ lower^H
    return solve_triangular(_mH(lower), solve_triangular(lower, B, upper=False), upper=True)


@_with_out
def cholesky_inverse(L_, upper=False):
    """The inverse of ``A`` given its Cholesky factor."""
    identity = broadcast_to(eye(L_.shape[-1], dtype=L_.dtype, device=L_.device), tuple(L_.shape))
    return cholesky_solve(identity, L_, upper)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``torch.triangular_solve`` (deprecated): returns ``(solution, cloned_coefficient)``."""
    a = SH.transpose(A, -2, -1) if transpose else A
    x = solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return _rt.triangular_solve(x, A.clone())
