"""Eager ``F.linear(x, weight, bias)`` on a batch of rows as one autograd node.

This file owns one shortcut of ``F.linear`` (called from ``functional.py``): it must
compute exactly what the composed path computes, and nothing else.

Note [One node for linear]
``F.linear(x, W, b)`` is composed of two ops, ``dot_general(x, W)`` (x W^T) and ``+ b``:
two recorded nodes, a second output array, and in backward a second engine step whose
bias cotangent goes through the broadcast's bookkeeping (Note [Broadcasting operands
under autograd]). In an MLP's SGD step each op runs right after a matrix product has
pushed the interpreter's data out of the caches, where the Python around `+ b` costs
several times its warm price: the bias add took 81-94 us there against 16 us of NumPy
work (128 x 512 float32, one thread; PyTorch's add 26-48 us). PyTorch computes the same
thing as one ``addmm`` (``AddmmBackward0``). In eager mode, for 2-D floating input and
weight and a 1-D bias, all of one dtype, the forward runs here as the composed path's
impls in the same order (the product, then ``np.add`` of the bias, written into the
product's fresh array; with fewer rows than outputs the product the other way round, Note
[Rows before columns in linear]), so the output has the same bits, and records one node whose rule
is the composed graph's rules side by side: dot_general's for the input and the weight,
the broadcast's (a sum over the rows) for the bias. The gradients have the same bits,
the version checks are the product's (the input's gradient reads the weight and the
weight's reads the input; the bias's reads nothing), and under create_graph the rules
bind numtorch ops as before. Any other case (a transform, meta tensors, other ranks or
dtypes, no bias) takes the composed path.
"""
from __future__ import annotations

from numpy import copyto, dtype, empty, float32, float64, matmul, ndarray

from .._core import primitive as _prim
from .._core.primitive import STACK, Primitive, grad_mode
from .._core.tensor import TENSOR_TYPES, wrap
from .._prims import elementwise as E
from .._prims import shape as _P
from .._prims._onepass import transpose_add
from .._prims.contraction import dot_general

_CONTRACTING = ((1,), (1,))   # x (n, k) with W (m, k): x W^T
_NO_BATCH = ((), ())
_BLAS_TYPES = (dtype(float32), dtype(float64))

# Note [Rows before columns in linear]
# OpenBLAS (NumPy's) packs each operand of a GEMM into its own layout first; packing the
# operand whose contracted dim is contiguous costs more when it is BLAS's left operand
# (Note [Rows before columns in a batched product], _prims/contraction.py). x W^T with
# both x (m, k) and W (n, k) C-contiguous always has one such operand; computing W x^T
# instead puts x there, the smaller one when m < n. The product is then (n, m); PyTorch's
# result is C-contiguous (m, n), so the bias add reads it transposed and writes a fresh
# C-contiguous array, in 32 x 32 tiles (`transpose_add`, _prims/_onepass.py: 2.3, 7.2 and
# 15 us at 64 x 128, 128 x 256 and 128 x 512, where NumPy's add reading the transpose
# took 5.2, 57 and 100 us, and the old in-place add 2.5, 5.2 and 19). Measured in one
# process, variants interleaved, 100 rounds of 3 calls, load 3.5-5.8 (minimum per call,
# us, float32, product + bias; "NumPy copy" is this order with NumPy's add and a
# transposed copy, the fallback where no C compiler works):
#     m, k, n          threads  x W^T, + b   W x^T, NumPy copy   W x^T, tiled
#     64, 784, 128     1        175          161                 159
#     64, 784, 128     2        102          99                  98
#     128, 784, 512    1        1163         1153                1072
#     128, 784, 512    2        638          614                 601
#     128, 512, 256    1        390          387                 372
#     128, 512, 256    2        311          234                 242
# (the ensemble row's first layers, and the MLP step's two first layers). The 2-thread
# gains grow with the load (at load 4.5-5.3: 144 -> 101 us at 64 x 784 x 128) and shrink
# toward quiet: a quiet A/B of an earlier version (NumPy's transposed add, 6eb64c9) on
# the whole MLP step showed no change. Bits: each element is the same dot product over
# k, and NumPy's OpenBLAS gave the same bits both ways at all 2,880 shapes probed (m < n
# from 1 to 256, k to 1000, n to 1024, float32 and float64, 1 and 2 threads) when x and
# W are C-contiguous, but not always with x column-major (672 of 2,880 differed in the
# last bits): so only C-contiguous operands take this order. The bias add is the same
# IEEE add of the same two values either way (tests/nn/test_fused_linear.py compares
# the bits with the composed path; tests/test_onepass.py the kernel's with NumPy's).


def fused_linear(input, weight, bias):
    """``F.linear(input, weight, bias)`` as one node (Note [One node for linear]), or None
    where the composed path must run. The caller has checked that ``weight`` is 2-D,
    that the inner sizes agree and that input and weight have one dtype."""
    if bias is None or input.__class__ not in TENSOR_TYPES \
            or weight.__class__ not in TENSOR_TYPES or bias.__class__ not in TENSOR_TYPES:
        return None
    if STACK:   # an interpreter's own rule for linear (vmap's: Note [One node for a batched
        rule = getattr(STACK[-1], "linear", None)   # linear], func/_vmap_linear.py)
        return None if rule is None else rule(input, weight, bias)
    x, w, b = input._data, weight._data, bias._data
    if (x.__class__ is not ndarray or w.__class__ is not ndarray or b.__class__ is not ndarray
            or x.ndim != 2 or b.ndim != 1 or b.shape[0] != w.shape[0]
            or b.dtype != x.dtype or x.dtype.kind != "f"):
        return None
    m, n = x.shape[0], w.shape[0]
    if (m < n and x.dtype in _BLAS_TYPES and w.dtype == x.dtype and x.flags.c_contiguous
            and w.flags.c_contiguous):
        # Note [Rows before columns in linear]
        p = matmul(w, x.T)                       # (n, m), fresh
        out = transpose_add(p, b)
        if out is None:                          # no C compiler
            E.add.ufunc(p, b[:, None], out=p)
            out = empty((m, n), x.dtype)
            copyto(out, p.T)
    else:
        out = dot_general.impl(x, w, contracting=_CONTRACTING, batch=_NO_BATCH)
        if out.base is None and out.flags.writeable:   # the product's own fresh array
            E.add.ufunc(out, b, out=out)
        else:
            out = E.add.impl(out, b)
    t = wrap(out)
    if not (grad_mode[0] and (input._requires_grad or weight._requires_grad
                              or bias._requires_grad)):
        return t
    edges = tuple([(a.grad_fn, a._output_nr) if a.grad_fn is not None else
                   ((a, 0) if a._requires_grad else None) for a in (input, weight, bias)])
    return _prim.record_node(_addmm, (input, weight, bias), edges, t)


def _vjp(g, out, x, w, b):
    """The composed graph's rules: dot_general's for x and W, the bias broadcast's for b."""
    grad_x, grad_w = dot_general.vjp(g, None, x, w, contracting=_CONTRACTING, batch=_NO_BATCH)
    return grad_x, grad_w, lambda: _P.broadcast_in_dim.vjp(
        g, None, b, shape=tuple(g._data.shape), broadcast_dimensions=(1,))[0]


# PyTorch's node for linear on a batch of rows is AddmmBackward0 (Node.name capitalizes)
_addmm = Primitive("addmm", vjp=_vjp, register=False)
_addmm.vjp_needs = ((1,), (0,), ())   # Note [What backward reads]
