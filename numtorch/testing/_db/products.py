"""OpInfo entries: matrix products (matmul and friends, all built on dot_general)."""
from __future__ import annotations

import numpy as np

from ..opinfo import FLOATING, INTEGRAL, SAME, OpInfo, SampleInput, make, register


def _pairs(*shape_pairs):
    def gen(dtype, requires_grad):
        for a, b in shape_pairs:
            yield SampleInput(make(a, dtype, requires_grad), (make(b, dtype, requires_grad),))
    return gen


_MATMUL = _pairs(((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 2, 3), (3,)), ((2, 1, 2, 3), (3, 3, 2)),
                 ((2, 2, 3), (2, 3, 2)), ((0, 3), (3, 2)))


def _tensordot_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((2, 3, 4)), (m((3, 4, 2)),))
    yield SampleInput(m((2, 3)), (m((3, 2)),), dict(dims=1), name="dims1")
    yield SampleInput(m((2, 3, 4)), (m((4, 3)),), dict(dims=([1, 2], [1, 0])), name="lists")
    yield SampleInput(m((2, 3)), (m((4,)),), dict(dims=0), name="outer")


def _tensordot_ref(a, b, dims=2):
    return np.tensordot(a, b, axes=dims)


def _addmm_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((2, 4)), (m((2, 3)), m((3, 4))))
    yield SampleInput(m((4,)), (m((2, 3)), m((3, 4))), dict(beta=0.5, alpha=2), name="scaled")


def _cross_samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad)
    yield SampleInput(m((3,)), (m((3,)),))
    yield SampleInput(m((2, 3)), (m((2, 3)),), dict(dim=1), name="dim")
    yield SampleInput(m((3, 2)), (m((3, 2)),), dict(dim=0), name="dim0")


def _inner_ref(a, b):
    return np.inner(a, b)


_INT = dict(dtypes=FLOATING + INTEGRAL)

register(
    OpInfo("matmul", ref=np.matmul, result_dtype=SAME, sample_inputs=_MATMUL, operators=("__matmul__", "__rmatmul__"), **_INT),
    OpInfo("mm", ref=np.matmul, result_dtype=SAME, sample_inputs=_pairs(((2, 3), (3, 4)), ((1, 1), (1, 2)), ((0, 2), (2, 3))), **_INT),
    OpInfo("bmm", ref=np.matmul, result_dtype=SAME, sample_inputs=_pairs(((2, 2, 3), (2, 3, 4)), ((1, 1, 2), (1, 2, 1))), **_INT),
    OpInfo("mv", ref=np.matmul, result_dtype=SAME, sample_inputs=_pairs(((2, 3), (3,)), ((1, 1), (1,))), **_INT),
    OpInfo("dot", ref=np.dot, result_dtype=SAME, sample_inputs=_pairs(((3,), (3,)), ((1,), (1,))), **_INT),
    OpInfo("vdot", ref=np.vdot, result_dtype=SAME, sample_inputs=_pairs(((3,), (3,))), **_INT),
    OpInfo("inner", ref=_inner_ref, result_dtype=SAME,
           sample_inputs=_pairs(((3,), (3,)), ((2, 3), (4, 3)), ((), (2, 3)), ((2, 2, 3), (3,))), **_INT),
    OpInfo("outer", ref=np.outer, result_dtype=SAME, sample_inputs=_pairs(((3,), (4,)), ((1,), (2,))),
           aliases=("ger",), **_INT),
    OpInfo("tensordot", ref=_tensordot_ref, result_dtype=SAME, sample_inputs=_tensordot_samples, **_INT),
    OpInfo("addmm", ref=lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b), result_dtype=SAME,
           sample_inputs=_addmm_samples),
    OpInfo("cross", ref=lambda a, b, dim=None: np.cross(a, b, axis=-1 if dim is None else dim),
           result_dtype=SAME, sample_inputs=_cross_samples, **_INT),
    OpInfo("trace", ref=np.trace, result_dtype=SAME, dtypes=FLOATING,
           sample_inputs=lambda d, r: iter([SampleInput(make((3, 3), d, r)),
                                            SampleInput(make((2, 4), d, r), name="wide")])),
)
