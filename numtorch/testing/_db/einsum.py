"""OpInfo entries: ``einsum`` (equations, the list and sublist forms), against ``np.einsum``."""
from __future__ import annotations

import numpy as np

import numtorch as torch

from ..opinfo import FLOATING, INTEGRAL, OpInfo, SampleInput, make, register

# (equation, operand shapes, name)
_EQUATIONS = (
    ("ij,jk->ik", ((2, 3), (3, 4)), "matmul"),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 2)), "batch_matmul"),
    ("ii->", ((3, 3),), "trace"),
    ("ii->i", ((3, 3),), "diagonal"),
    ("i,j->ij", ((3,), (4,)), "outer"),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (2, 3, 2)), "ellipsis_broadcast"),
    ("ij->j", ((2, 3),), "sum"),
    ("ij,jk,kl", ((2, 3), (3, 4), (4, 2)), "implicit_three"),
    ("bi,bi->b", ((2, 3), (1, 3)), "broadcast_dot"),
)


def _samples(dtype, requires_grad):
    def m(shape):
        return make(shape, dtype, requires_grad, low=-2, high=2)
    for equation, shapes, name in _EQUATIONS:
        yield SampleInput(equation, tuple(m(s) for s in shapes), name=name)
    yield SampleInput("ij,jk->ki", ([m((2, 3)), m((3, 2))],), name="list")
    yield SampleInput(m((2, 3)), ([0, 1], m((3, 4)), [1, 2], [2, 0]), name="sublist")


def _ref(*args):
    if isinstance(args[0], str) and len(args) == 2 and isinstance(args[1], list):
        args = (args[0], *args[1])
    return np.einsum(*args)


def _result_dtype(s):
    return next(t.dtype for t in s.tensors())


register(OpInfo("einsum", op=torch.einsum, ref=_ref, result_dtype=_result_dtype,
                sample_inputs=_samples, dtypes=FLOATING + INTEGRAL[:1] + (torch.complex128,)))
