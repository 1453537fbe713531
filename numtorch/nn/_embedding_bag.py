"""``nn.functional.embedding_bag``: sums, means or maxima of bags of embeddings, without
materializing the per-bag lists.

A composition of existing ops (``F.embedding`` for the rows, ``index_add`` for sum and
mean, ``scatter_reduce(amax)`` for max; so autograd, vmap, meta and compile come from
their rules); this file must not define primitives. Docstrings follow PyTorch's.

Each looked-up row gets a bag number: for a 2-D input its row, for a 1-D input the last
offset at or before its position (``searchsorted``). Rows that take no part (``padding_idx``,
and with ``include_last_offset`` those at or after the last offset) go to one extra bag
that is cut off at the end, so no data-dependent shape arises and the op traces.
"""
from __future__ import annotations

from .._core import dtypes as _dt
from .._core.primitive import STACK
from .._core.tensor import Tensor
from .._ops import creation, index as _index, math as M, shape as S
from .._ops._surface_reduce import searchsorted
from .._ops._surface_segment import scatter_reduce

__all__ = ["embedding_bag"]


def _check(input, weight, offsets, mode, per_sample_weights, scale_grad_by_freq, sparse):
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError("embedding_bag(): argument 'input' and 'weight' must be Tensors")
    if input.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} instead "
                           "(while checking arguments for embedding_bag)")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")


def _check_values(flat, offsets, weight, mode):
    """Index range and offsets[0] == 0, on concrete data (skipped under transforms, where
    a tensor's payload is not the user's value)."""
    import numpy as np
    if STACK:
        return
    data = flat._data
    n = weight.shape[0]
    if isinstance(data, np.ndarray) and data.size and (data.min() < 0 or data.max() >= n):
        k = int(np.flatnonzero((data < 0) | (data >= n))[0])
        if weight.dtype is _dt.float32 and mode != "max":   # PyTorch's fast path says this
            raise RuntimeError(f"Index {k} of input takes value {int(data[k])} which is not in "
                               f"the valid range [0, {n})")
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                           f"found idx to be {int(data[k])}")
    if offsets is not None and isinstance(offsets._data, np.ndarray) and offsets.numel() and \
            int(offsets._data[0]) != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(offsets._data[0])}")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Computes sums, means or maxes of bags of embeddings, without instantiating the
    intermediate embeddings. ``input`` is a 2-D (B, N) tensor of B bags of N indices, or a
    1-D tensor of indices whose bags start at ``offsets`` (with ``include_last_offset``,
    ``offsets`` has B + 1 entries, the last one the end of the last bag). Empty bags give
    zeros. ``per_sample_weights`` (mode="sum" only) scales each row before summing; entries
    equal to ``padding_idx`` take no part in the bag (nor in a mean's count). ``sparse`` is
    accepted, but gradients are always dense. ``scale_grad_by_freq`` divides each row's
    gradient by the number of times its index occurs in ``input`` (as documented; PyTorch
    2.13's CPU kernel attributes the counts to the wrong rows)."""
    from . import functional as F
    _check(input, weight, offsets, mode, per_sample_weights, scale_grad_by_freq, sparse)
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise AssertionError("padding_idx must be within the number of embeddings")
        padding_idx %= n
    flat = S.reshape(input, (-1,)).to(_dt.int64)
    _check_values(flat, offsets, weight, mode)
    count = flat.shape[0]
    if input.dim() == 2:
        bags = input.shape[0]
        bag = S.reshape(S.expand(S.unsqueeze(creation.arange(bags, device=input.device), 1),
                                 tuple(input.shape)), (-1,))
    else:
        offs = offsets.to(_dt.int64)
        bags = offs.shape[0] - (1 if include_last_offset else 0)
        positions = creation.arange(count, device=input.device)
        bag = M.sub(searchsorted(offs, positions, right=True), 1)
        if include_last_offset:       # rows at or after the last offset belong to no bag
            bag = M.where(M.ge(bag, bags), creation.tensor(bags, device=input.device), bag)
    if padding_idx is not None:
        bag = M.where(M.eq(flat, padding_idx), creation.tensor(bags, device=input.device), bag)
    rows = F.embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq)
    dim = weight.shape[1]
    if per_sample_weights is not None:
        rows = M.mul(rows, S.unsqueeze(S.reshape(per_sample_weights, (-1,)), 1))
    zeros = creation.zeros((bags + 1, dim), dtype=rows.dtype, device=weight.device)
    if mode == "max":
        index = S.expand(S.unsqueeze(bag, 1), (count, dim))
        out = scatter_reduce(zeros, 0, index, rows, "amax", include_self=False)
    else:
        out = _index.index_add(zeros, 0, bag, rows)
        if mode == "mean":
            sizes = _index.index_add(creation.zeros((bags + 1,), dtype=rows.dtype,
                                                    device=weight.device), 0, bag,
                                     creation.ones((count,), dtype=rows.dtype,
                                                   device=weight.device))
            out = M.div(out, S.unsqueeze(M.clamp_min(sizes, 1), 1))
    return S.narrow(out, 0, 0, bags)
