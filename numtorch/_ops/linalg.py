"""Products: matmul (@), mm, bmm, mv, dot, outer, …, all as `dot_general`.

``numtorch.linalg`` (inv, solve, det, cholesky, qr, …) and every norm live in
``_ops/linalg_ops.py``, which builds on this file (never the other way round).
PyTorch does not promote across dtypes in matrix products: mixing float32 and float64
raises, as it does there.
"""
from __future__ import annotations

import numpy as np
from numpy import ndarray

from .._core import primitive as _prim
from .._core.primitive import STACK, bind, grad_mode
from .._core.tensor import TENSOR_TYPES, Tensor
from .._prims.contraction import dot_general
from ._common import broadcast_shapes, broadcast_to, check_tensor, cpp_type_name
from ._backward_names import backward_name


def _same_dtype(a, b, fn="m1 and m2"):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected {fn} to have the same dtype, but got: "
                           f"{cpp_type_name(a.dtype)} != {cpp_type_name(b.dtype)}")


_MM_CONTRACTING = ((1,), (0,))
_NO_BATCH = ((), ())
_MM_PARAMS = {"contracting": _MM_CONTRACTING, "batch": _NO_BATCH}   # shared by nodes: never written


def _dot(x, y, xc, yc, xb=(), yb=()):
    return bind(dot_general, x, y, contracting=(tuple(xc), tuple(yc)), batch=(tuple(xb), tuple(yb)))


def dot(input, tensor):
    """Dot product of two 1-D tensors."""
    check_tensor(input, "input", "dot")
    check_tensor(tensor, "tensor", "dot")
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{tensor.shape[0]}] to have the same number of elements, but got "
                           f"{input.shape[0]} and {tensor.shape[0]} elements respectively")
    _same_dtype(input, tensor, "both vectors")
    return _dot(input, tensor, (0,), (0,))


def vdot(input, other):
    from .math import conj
    return dot(conj(input), other)




def mm(input, mat2):
    """Matrix product of two 2-D tensors."""
    check_tensor(input, "input", "mm")
    check_tensor(mat2, "mat2", "mm")
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    _same_dtype(input, mat2)
    return _dot(input, mat2, (1,), (0,))


def mv(input, vec):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x"
                           f"{input.shape[1]}), vec ({vec.shape[0]})")
    _same_dtype(input, vec)
    return _dot(input, vec, (1,), (0,))


@backward_name("BmmBackward0")
def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, "
                           f"{mat2.shape[1]}].")
    _same_dtype(input, mat2)
    return _dot(input, mat2, (2,), (1,), (0,), (0,))


def matmul(input, other):
    """Matrix product with NumPy's broadcasting rules (``@``)."""
    if input.__class__ in TENSOR_TYPES and other.__class__ in TENSOR_TYPES:
        x, y = input._data, other._data
        if (x.__class__ is ndarray and y.__class__ is ndarray and len(x.shape) == 2
                and len(y.shape) == 2 and x.shape[1] == y.shape[0] and x.dtype is y.dtype):
            # Two eager matrices (every layer of an MLP): mm's checks, passed, without
            # building Size objects (Note [Eager fast path] in _ops/_common.py).
            if (input._requires_grad or other._requires_grad) and grad_mode[0] and not STACK:
                # recorded: what `bind` decides here (Note [Recording a node], autograd/engine.py)
                return _prim.autograd_bind(dot_general, (input, other), _MM_PARAMS)
            return bind(dot_general, input, other, contracting=_MM_CONTRACTING, batch=_NO_BATCH)
    check_tensor(input, "input", "matmul")
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if a == 1 and b == 1:
        return dot(input, other)
    if a == 2 and b == 2:
        return mm(input, other)
    if a == 2 and b == 1:
        return mv(input, other)
    _same_dtype(input, other)
    k_in = input.shape[-1]
    k_other = other.shape[-2] if b >= 2 else other.shape[0]
    if k_in != k_other:
        lhs = "x".join(str(s) for s in input.shape[-2:]) if a >= 2 else f"1x{k_in}"
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_as_2d(input)} and "
                           f"{_as_2d(other, rhs=True)})")
    if a == 1:  # (k) @ (..., k, m)
        return _dot(input, other, (0,), (b - 2,)) if b == 2 else matmul(
            input.unsqueeze(0), other).squeeze(-2)
    if b == 1:  # (..., n, k) @ (k)
        return _dot(input, other, (a - 1,), (0,))
    if b == 2:  # (..., n, k) @ (k, m): one tensordot, no broadcasting needed
        return _dot(input, other, (a - 1,), (0,))
    batch = broadcast_shapes(tuple(input.shape[:-2]), tuple(other.shape[:-2]))
    x = broadcast_to(input, batch + tuple(input.shape[-2:]))
    y = broadcast_to(other, batch + tuple(other.shape[-2:]))
    nb = len(batch)
    return _dot(x, y, (nb + 1,), (nb,), tuple(range(nb)), tuple(range(nb)))


def _as_2d(t, rhs=False):
    s = tuple(t.shape)
    if len(s) == 1:
        return f"{s[0]}x1" if rhs else f"1x{s[0]}"
    return f"{int(np.prod(s[:-1]))}x{s[-1]}"


def inner(input, other):
    """Inner product over the last dimension of both tensors."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return _dot(input, other, (input.ndim - 1,), (other.ndim - 1,))


def outer(input, vec2):
    """Outer product of two 1-D tensors."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError("outer: expected 1D tensors")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (the first of size 3 if None)."""
    if dim is None:
        dim = [i for i, s in enumerate(input.shape) if s == 3][0]
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]
    from .shape import stack
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], dim)


def tensordot(a, b, dims=2):
    """Contracts the last ``dims`` dims of ``a`` with the first of ``b`` (or explicit lists)."""
    if isinstance(dims, int):
        xc, yc = tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims))
    else:
        xc, yc = dims
        xc = tuple(d % a.ndim for d in (xc if isinstance(xc, (list, tuple)) else [xc]))
        yc = tuple(d % b.ndim for d in (yc if isinstance(yc, (list, tuple)) else [yc]))
    _same_dtype(a, b)
    return _dot(a, b, xc, yc)


@backward_name("TraceBackward0")
def trace(input):
    """The sum of the main diagonal of a 2-D tensor."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return input.diagonal().sum()


@backward_name("AddmmBackward0")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``."""
    out = mm(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta)
