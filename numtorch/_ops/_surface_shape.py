"""Everyday shape and index functions of ``torch``: ``diff``, ``take``, ``kron``, ``rot90``,
``hsplit``/``vsplit``/``dsplit``, ``block_diag``, ``cartesian_prod``, ``combinations``,
``vander``, ``view_as_real``/``view_as_complex``, ``trapezoid``/``cumulative_trapezoid``,
the ``*_scatter`` embeddings, ``index_copy``/``index_fill``, ``renorm`` and
``Tensor.unfold``.

Every function is a composition of existing ops (so autograd, vmap, meta and compile come
from their rules); this file must not define primitives. Docstrings follow PyTorch's.

Note [Copies, not views]
``view_as_real``, ``view_as_complex`` and ``Tensor.unfold`` return views in PyTorch. Here
they return new tensors with the same values (and gradients): numtorch's views are NumPy
views of the same dtype, and a complex buffer seen as reals (or overlapping windows) is
not one. Writing into the result does not write into ``input``.
"""
from __future__ import annotations

import itertools

import numpy as np

from .._core import dtypes as _dt
from .._core.tensor import Tensor
from . import creation, index as _index, math, reduce, shape
from ._common import canonical_dim, check_fits, check_tensor, result_type, to_tensor

__all__ = ["diff", "take", "kron", "rot90", "hsplit", "vsplit", "dsplit", "block_diag",
           "cartesian_prod", "combinations", "vander", "view_as_real", "view_as_complex",
           "trapezoid", "trapz", "cumulative_trapezoid", "select_scatter", "slice_scatter",
           "diagonal_scatter", "index_copy", "index_fill", "masked_scatter", "renorm"]

masked_scatter = _index.masked_scatter


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """Computes the n-th forward difference along the given dimension:
    out[i] = input[i + 1] - input[i]; higher differences by applying it ``n`` times.
    ``prepend``/``append`` are concatenated along ``dim`` before differencing (bool
    tensors difference by ``!=``)."""
    check_tensor(input, "input", "diff")
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = canonical_dim(dim, input.dim())
    for name, p in (("prepend", prepend), ("append", append)):
        if p is not None:
            check_tensor(p, name, "diff")
    parts = [p if p.dim() else p.expand(*input.shape[:d], 1, *input.shape[d + 1:])
             for p in (prepend, input, append) if p is not None]
    x = shape.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[d] == 0:
            break
        hi, lo = shape.narrow(x, d, 1, x.shape[d] - 1), shape.narrow(x, d, 0, x.shape[d] - 1)
        x = math.ne(hi, lo) if x.dtype is _dt.bool_ else math.sub(hi, lo)
    return x


def take(input, index):
    """Returns a new tensor with the elements of ``input`` at the given indices, the input
    treated as if it were viewed as a 1-D tensor. The result takes the shape of ``index``."""
    check_tensor(input, "input", "take")
    check_tensor(index, "index", "take")
    if index.dtype is not _dt.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_scalar_name(index.dtype)}")
    n = input.numel()
    idx = index._data
    if idx.__class__ is np.ndarray and idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx[(idx < -n) | (idx >= n)].flat[0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements.")
    flat = shape.reshape(input, (-1,))
    wrapped = math.remainder(index, max(n, 1))   # negative indices count from the end
    return shape.reshape(_index.index_select(flat, 0, shape.reshape(wrapped, (-1,))),
                         tuple(index.shape))


def _scalar_name(d):
    from ._common import scalar_type_name
    return scalar_type_name(d)


def kron(input, other):
    """Computes the Kronecker product of ``input`` and ``other``: a block tensor whose
    blocks are ``input[i] * other`` (the shorter shape padded with leading ones)."""
    a, b = check_tensor(input, "input", "kron"), check_tensor(other, "other", "kron")
    nd = max(a.dim(), b.dim())
    a = shape.reshape(a, (1,) * (nd - a.dim()) + tuple(a.shape))
    b = shape.reshape(b, (1,) * (nd - b.dim()) + tuple(b.shape))
    # a[i0, None, i1, None, ...] * b[None, j0, None, j1, ...], then merge each pair
    ea = shape.reshape(a, tuple(s for d in a.shape for s in (d, 1)))
    eb = shape.reshape(b, tuple(s for d in b.shape for s in (1, d)))
    return shape.reshape(math.mul(ea, eb), tuple(x * y for x, y in zip(a.shape, b.shape)))


def rot90(input, k=1, dims=(0, 1)):
    """Rotate an n-D tensor by 90 degrees in the plane specified by ``dims``, from the first
    towards the second axis (``k`` times; negative ``k`` rotates the other way)."""
    check_tensor(input, "input", "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = (canonical_dim(d, input.dim()) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return shape.transpose(shape.flip(input, [d1]), d0, d1)
    if k == 2:
        return shape.flip(input, [d0, d1])
    if k == 3:
        return shape.flip(shape.transpose(input, d0, d1), [d1])
    return input.clone()


def _dir_split(fn, input, sections, dim, min_dims):
    check_tensor(input, "input", fn)
    if input.dim() < min_dims:
        raise RuntimeError(f"torch.{fn} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(sections, int):
        size = input.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{fn} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the "
                               f"split_size {sections}!")
    return shape.tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):
    """Splits ``input``, a tensor with one or more dimensions, into multiple tensors
    horizontally (along dim 1, or dim 0 for 1-D tensors) according to
    ``indices_or_sections``."""
    return _dir_split("hsplit", input, indices_or_sections,
                      0 if input.dim() == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    """Splits ``input``, a tensor with two or more dimensions, into multiple tensors
    vertically (along dim 0) according to ``indices_or_sections``."""
    return _dir_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """Splits ``input``, a tensor with three or more dimensions, into multiple tensors
    depthwise (along dim 2) according to ``indices_or_sections``."""
    return _dir_split("dsplit", input, indices_or_sections, 2, 3)


def block_diag(*tensors):
    """Create a block diagonal matrix from provided tensors (0-D and 1-D tensors are
    treated as 1x1 and 1xN matrices)."""
    mats = []
    for i, t in enumerate(tensors):
        check_tensor(t, f"tensors[{i}]", "block_diag")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
        mats.append(shape.reshape(t, (1, -1) if t.dim() < 2 else tuple(t.shape)))
    if not mats:
        return creation.zeros(1, 0)
    d = result_type(*mats)
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        m = m if m.dtype == d else m.to(d)
        rows.append(shape.cat([creation.zeros(r, left, dtype=d, device=m.device), m,
                               creation.zeros(r, cols - left - c, dtype=d, device=m.device)],
                              1))
        left += c
    return shape.cat(rows, 0)


def cartesian_prod(*tensors):
    """Do cartesian product of the given sequence of 1-D tensors (like
    ``itertools.product``): an (N, len(tensors)) tensor, or the tensor itself for one."""
    for i, t in enumerate(tensors):
        check_tensor(t, f"tensors[{i}]", "cartesian_prod")
        if t.dim() != 1:
            raise RuntimeError("Expect a 1D vector, but got shape " + str(list(t.shape)))
    if len(tensors) == 1:
        return tensors[0]
    grids = shape.meshgrid(*tensors, indexing="ij")
    return shape.stack([shape.reshape(g, (-1,)) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Compute combinations of length ``r`` of the given 1-D tensor, like
    ``itertools.combinations`` (``combinations_with_replacement`` with
    ``with_replacement=True``)."""
    check_tensor(input, "input", "combinations")
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return creation.empty(0, dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return shape.reshape(_index.index_select(input, 0, creation.tensor(idx.reshape(-1), device=input.device)),
                         (idx.shape[0], r))


def vander(x, N=None, increasing=False):
    """Generates a Vandermonde matrix: columns are powers of ``x``, decreasing
    x**(N-1), ..., x**0 unless ``increasing``. ``N`` defaults to len(x)."""
    check_tensor(x, "x", "vander")
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    d = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else _dt.int64
    x = x if x.dtype == d else x.to(d)
    cols = [creation.ones_like(x)] + [x] * (n - 1) if n else []
    if not cols:
        return creation.empty(x.shape[0], 0, dtype=d)
    out = reduce.cumprod(shape.stack(cols, 1), 1)
    return out if increasing else shape.flip(out, [1])


def view_as_real(input):
    """Returns ``input`` (complex) as a real tensor with a trailing dimension of size 2
    holding the real and imaginary parts (a copy: Note [Copies, not views])."""
    check_tensor(input, "input", "view_as_real")
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return shape.stack([math.real(input), math.imag(input)], -1)


def view_as_complex(input):
    """Returns ``input`` (real, last dimension of size 2) as a complex tensor
    (a copy: Note [Copies, not views])."""
    check_tensor(input, "input", "view_as_complex")
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {_scalar_name(input.dtype)}")
    if input.dim() == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return math.complex(shape.select(input, -1, 0), shape.select(input, -1, 1))


def _trapezoid_parts(fn, y, x, dx, dim):
    check_tensor(y, "y", fn)
    d = canonical_dim(dim, y.dim())
    n = y.shape[d]
    if not (y.dtype.is_floating_point or y.dtype.is_complex):
        y = y.to(_dt.get_default_dtype())
    if n == 0:
        return None, d, y
    mean = math.mul(math.add(shape.narrow(y, d, 1, n - 1), shape.narrow(y, d, 0, n - 1)), 0.5)
    if isinstance(x, Tensor):
        if x.dim() == 1:
            if x.shape[0] != n:
                raise RuntimeError(f"{fn}: There must be one `x` value for each sample point")
            spacing = diff(x)
            spacing = shape.reshape(spacing, (-1,) + (1,) * (y.dim() - d - 1))
        else:
            spacing = diff(x, dim=dim)
        return math.mul(mean, spacing), d, y
    if x is not None:
        check_tensor(x, "x", fn)
    step = 1 if dx is None else dx
    return (mean if step == 1 else math.mul(mean, step)), d, y


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Computes the trapezoidal rule along ``dim``: the sample points are spaced ``dx``
    apart (1 by default) or given by the tensor ``x``."""
    parts, d, y = _trapezoid_parts("trapezoid", y, x, dx, dim)
    if parts is None:
        return reduce.sum(y, d)
    return reduce.sum(parts, d)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Cumulatively computes the trapezoidal rule along ``dim`` (one value fewer than
    ``y`` has along ``dim``)."""
    parts, d, y = _trapezoid_parts("cumulative_trapezoid", y, x, dx, dim)
    if parts is None:
        return y.clone()
    return reduce.cumsum(parts, d)


# ---------------------------------------------------------------------------------------
# Embedding ``src`` into a copy of ``input``

def _embed(input, src, selector, fn):
    """A copy of ``input`` with ``input[selector] = src`` (differentiable in both)."""
    check_tensor(input, "input", fn)
    check_tensor(src, "src", fn)
    region = selector(input)
    if tuple(region.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(region.shape)}")
    pos = selector(shape.reshape(creation.arange(input.numel(), device=input.device),
                                  tuple(input.shape)))
    flat = shape.reshape(input, (-1,))
    out = _index._index_put(flat, (shape.reshape(pos, (-1,)),),
                          shape.reshape(src.to(input.dtype), (-1,)))
    return shape.reshape(out, tuple(input.shape))


def select_scatter(input, src, dim, index):
    """Embeds the values of the ``src`` tensor into ``input`` at the given index: a copy of
    ``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    return _embed(input, src, lambda t: shape.select(t, dim, index), "select_scatter")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """Embeds the values of the ``src`` tensor into ``input`` at the given dimension: a copy
    of ``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by
    ``src``."""
    def sel(t):
        d = canonical_dim(dim, t.dim())
        return t[(slice(None),) * d + (slice(start, end, step),)]
    return _embed(input, src, sel, "slice_scatter")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """Embeds the values of the ``src`` tensor into ``input`` along the diagonal elements of
    ``input``, with respect to ``dim1`` and ``dim2``."""
    return _embed(input, src, lambda t: shape.diagonal(t, offset, dim1, dim2), "diagonal_scatter")


def index_copy(input, dim, index, source):
    """Copies the elements of ``source`` into a copy of ``input`` at the positions given by
    ``index`` along ``dim`` (``out.select(dim, index[i]) = source.select(dim, i)``)."""
    check_tensor(input, "input", "index_copy")
    _check_index(index, "index_copy")
    d = canonical_dim(dim, input.dim()) if input.dim() else 0
    if source.dim() and index.numel() != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal "
                         f"to source.size(dim) ({source.shape[d]})")
    pos = shape.reshape(creation.arange(input.numel(), device=input.device),
                        tuple(input.shape) or (1,))
    picked = _index.index_select(pos, d, index) if input.dim() else pos
    if tuple(picked.shape) != (tuple(source.shape) or (1,)):
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {list(picked.shape)} at dimension "
                           f"{dim} and source slice shape: {list(source.shape)} at dimension 0.")
    flat = shape.reshape(input, (-1,))
    out = _index._index_put(flat, (shape.reshape(picked, (-1,)),),
                                       shape.reshape(source.to(input.dtype), (-1,)))
    return shape.reshape(out, tuple(input.shape))


def _check_index(idx, fn):
    check_tensor(idx, "index", fn)
    if idx.dtype is not _dt.int64:
        raise IndexError(f"{fn}_(): Expected dtype int64 for index.")
    if idx.dim() > 1:
        raise IndexError(f"{fn}_(): Index is supposed to be a vector")


def index_fill(input, dim, index, value):
    """Fills the elements of a copy of ``input`` with ``value`` at the positions given by
    ``index`` along ``dim``."""
    check_tensor(input, "input", "index_fill")
    _check_index(index, "index_fill")
    if isinstance(value, Tensor) and value.dim():
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.dim()} dimension(s).")
    d = canonical_dim(dim, input.dim()) if input.dim() else 0
    n = input.shape[d] if input.dim() else 1
    hit = math.eq(shape.reshape(index, (-1, 1)),
                  creation.arange(n, device=input.device))
    hit = shape.reshape(reduce.any(hit, 0), (n,) + (1,) * (input.dim() - d - 1)) \
        if input.dim() else reduce.any(hit)
    if not isinstance(value, Tensor):
        check_fits(value, input.dtype.np)   # Note [Scalars that must fit]
    v = value.to(input.dtype) if isinstance(value, Tensor) else to_tensor(value, input.dtype)
    return math.where(hit, v, input)


def renorm(input, p, dim, maxnorm):
    """Returns a tensor where each sub-tensor of ``input`` along dimension ``dim`` is
    normalized such that the ``p``-norm of the sub-tensor is lower than ``maxnorm``."""
    check_tensor(input, "input", "renorm")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    from .linalg_ops import vector_norm
    d = canonical_dim(dim, input.dim())
    others = tuple(i for i in range(input.dim()) if i != d)
    norms = vector_norm(input, p, others, True)
    # PyTorch's factor: maxnorm / (norm + 1e-7) where norm > maxnorm, else 1.
    factor = math.where(math.gt(norms, maxnorm), math.div(maxnorm, math.add(norms, 1e-7)),
                        creation.ones_like(norms))
    return math.mul(input, factor)


def _unfold(self, dimension, size, step):
    """Returns a tensor which contains all slices of size ``size`` from ``self`` in the
    dimension ``dimension``, ``step`` apart; the slices form a new last dimension
    (a copy: Note [Copies, not views])."""
    d = canonical_dim(dimension, self.dim()) if self.dim() else 0
    n = self.shape[d] if self.dim() else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not self.dim():
        return shape.reshape(self, (1,))
    count = (n - size) // step + 1
    idx = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    windows = _index.index_select(self, d, creation.tensor(idx, device=self.device))
    windows = shape.reshape(windows, tuple(self.shape[:d]) + (count, size) +
                            tuple(self.shape[d + 1:]))
    return shape.movedim(windows, d + 1, -1)


def _attach_methods():
    from .methods import _inplace_method
    for name in ("diff take kron rot90 hsplit vsplit dsplit index_copy index_fill "
                 "renorm").split():
        setattr(Tensor, name, globals()[name])
    for name in ("index_copy index_fill renorm").split():
        setattr(Tensor, name + "_", _inplace_method(globals()[name], name + "_"))
    Tensor.unfold = _unfold


_attach_methods()
