"""``numtorch.linalg``: PyTorch's ``torch.linalg`` namespace (re-exports only).

The functions live in ``numtorch/_ops/linalg_ops.py``; their primitives and derivative
rules in ``numtorch/_prims/linalg.py``.
"""
from ._ops.linalg_ops import (LinAlgError, cholesky, cond, cross, det, diagonal, eigh,  # noqa: F401
                              eigvalsh, inv, lstsq, matmul, matrix_norm, matrix_power,
                              matrix_rank, multi_dot, norm, pinv, qr, slogdet, solve,
                              solve_triangular, svd, svdvals, vecdot, vector_norm)
